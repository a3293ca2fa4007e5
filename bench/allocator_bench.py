#!/usr/bin/env python3
"""Caching-allocator simulation speed: about 1 M allocation events (a fixture's pass repeated)
against the ingest time of the same trace, measured in the same run, with the load average.

    python bench/allocator_bench.py [--build build/bench] [--trace PATH] [--events 1000000]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT.parent / "shared" / "fixtures" / "h200-torch2.11" / "traces" / "llama7b4l_eager_bf16_b4_s4096.pt.trace.json.gz"


def find_binary(build: str, name: str) -> Path:
    for cand in (Path(build) / "cpp" / "bench" / name, Path(build) / name):
        if cand.exists():
            return cand
    sys.exit(f"{name} not found under {build}; build with -DATTNPROF_BUILD_BENCH=ON")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "bench"))
    ap.add_argument("--trace", default=str(FIXTURE))
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args()
    binary = find_binary(args.build, "attnprof_allocator_bench")
    return subprocess.call([str(binary), args.trace, str(args.events)])


if __name__ == "__main__":
    sys.exit(main())
