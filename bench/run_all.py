#!/usr/bin/env python3
"""Runs every benchmark of `make bench` in turn. Each prints its own figures and ratios against
a peer measured in the same run; nothing is asserted. Pass names to run a subset:

    python bench/run_all.py ingest heads
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (script, extra arguments, what it compares against)
BENCHES = {
    "ingest": ("ingest_compare.py", [], "bare simdjson pass and Python json.load on a ~1 GB trace"),
    "hta": ("hta_compare.py", [], "HolisticTraceAnalysis and Python json.load on a fixture and a ~1 GB trace"),
    "capture": ("capture_overhead.py", [], "plain torch.profiler.profile with the same flags"),
    "heads": ("heads_bench.py", [], "OpenBLAS SGEMM and a PyTorch CPU implementation"),
    "dashboard": ("dashboard_bench.py", [], "the 2 MB / 2 s targets in headless Chromium"),
    "allocator": ("allocator_bench.py", [], "ingest of the same trace, 1 M simulated allocation events"),
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(BENCHES)}",
              file=sys.stderr)
        return 2
    failed = []
    for name in names:
        script, args, peer = BENCHES[name]
        print(f"\n=== {name}: {script} (against {peer})", flush=True)
        start = time.monotonic()
        rc = subprocess.call([sys.executable, str(HERE / script), *args])
        print(f"=== {name}: exit {rc}, {time.monotonic() - start:.0f} s", flush=True)
        if rc != 0:
            failed.append(name)
    if failed:
        print(f"benchmarks that failed to run: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
