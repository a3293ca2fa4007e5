#!/usr/bin/env python3
"""Ingest speed and memory: `attnprof analyze` vs its own load_trace vs a bare simdjson
on-demand pass vs Python json.load, on a real fixture repeated to ~1 GB.

    python bench/ingest_compare.py [--size-mb 1024] [--build build/bench] [--skip-json-load]

Each pass runs in its own process; wall time is measured around the process and peak RSS
comes from that process's own rusage (os.wait4). Prints a table and ratios; asserts nothing.
Targets (issue 2): analyze within 2x of the bare simdjson pass, peak RSS < 1.5x file size.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
DEFAULT_FIXTURE = FIXTURES / "h200-torch2.11" / "traces" / "llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz"


def run_measured(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (wall seconds, peak RSS MiB of that process, stdout text)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.PIPE)
    out = p.stdout.read().decode() if stdout is None else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()}")
    return wall, ru.ru_maxrss / 1024.0, out


def find_binary(build, name):
    for cand in (Path(build) / "cpp" / "bench" / name, Path(build) / name):
        if cand.exists():
            return str(cand)
    found = shutil.which(name)
    if found:
        return found
    sys.exit(f"{name} not found under {build}; build with -DATTNPROF_BUILD_BENCH=ON")


def big_trace(build, fixture, size_mb):
    out = Path("/tmp/attnprof_bench") / f"{Path(fixture).name.split('.')[0]}_x{size_mb}MB.json"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        subprocess.run([find_binary(build, "attnprof_make_big_trace"), str(fixture), str(tmp), str(size_mb)], check=True)
        tmp.rename(out)
    return out


def json_load_cmd(path):
    return [sys.executable, "-c", f"import json; d = json.load(open({str(path)!r})); print(len(d['traceEvents']))"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--fixture", default=str(DEFAULT_FIXTURE))
    ap.add_argument("--build", default=str(ROOT / "build" / "bench"))
    ap.add_argument("--trace", help="use this trace instead of building one")
    ap.add_argument("--skip-json-load", action="store_true", help="json.load of 1 GB takes ~70 s and 5 GB")
    ap.add_argument("--repeat", type=int, default=1, help="runs per pass; the best wall time is kept")
    args = ap.parse_args()

    trace = Path(args.trace) if args.trace else big_trace(args.build, args.fixture, args.size_mb)
    size_mb = trace.stat().st_size / 2**20
    bench = find_binary(args.build, "attnprof_ingest_bench")
    cli = find_binary(args.build, "attnprof")
    report = Path("/tmp/attnprof_bench/report.json")

    passes = {
        "bare simdjson on-demand": [bench, "simdjson", str(trace)],
        "attnprof load_trace": [bench, "load", str(trace)],
        "attnprof analyze (CLI)": [cli, "analyze", str(trace), "--json", str(report)],
    }
    if not args.skip_json_load:
        passes["python json.load"] = json_load_cmd(trace)

    results = {}
    for name, cmd in passes.items():
        best = None
        for _ in range(args.repeat):
            wall, rss, _ = run_measured(cmd)
            best = (wall, rss) if best is None or wall < best[0] else best
        results[name] = best

    print(f"trace: {trace} ({size_mb:.0f} MiB)")
    print(f"{'pass':28s} {'wall s':>8s} {'MB/s':>8s} {'peak RSS MiB':>13s} {'RSS/file':>9s}")
    for name, (wall, rss) in results.items():
        print(f"{name:28s} {wall:8.2f} {size_mb / wall:8.0f} {rss:13.0f} {rss / size_mb:9.2f}")
    base = results["bare simdjson on-demand"][0]
    ana = results["attnprof analyze (CLI)"][0]
    print(f"analyze / bare simdjson wall: {ana / base:.2f}x (target <= 2x)")
    print(f"analyze peak RSS / file size: {results['attnprof analyze (CLI)'][1] / size_mb:.2f} (target < 1.5)")
    if "python json.load" in results:
        print(f"json.load / analyze wall: {results['python json.load'][0] / ana:.1f}x")
    print(json.dumps({k: {"seconds": round(v[0], 3), "peak_rss_mib": round(v[1], 1)} for k, v in results.items()}
                     | {"file_mib": round(size_mb, 1)}))


if __name__ == "__main__":
    main()
