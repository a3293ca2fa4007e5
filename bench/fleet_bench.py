"""Fleet benchmark: N rank traces (from the H200 fixtures, sizes varied) analysed serially in one
process, on local threads (the C++ engine's own pool, `attnprof analyze DIR`) and on a local Ray
(attnprof.fleet, one task per trace); the driver's RSS as N grows; a 3-node Ray cluster on this
machine with one node removed mid-run. Ratios are from one run, with the load average.

    .venv/bin/python bench/fleet_bench.py [--ranks 16,64,256,1024] [--workers 2] [--out DIR]

Each measurement runs in a fresh process, so the RSS of one does not carry into the next.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fleet_traces  # noqa: E402

# Size variants: padding host ops per variant (0 = the fixture as recorded; 800k is ~6 MB gzip, ~110 MB of JSON).
SIZE_VARIANTS = (0, 200_000, 400_000, 800_000)


def make_ranks(out: Path, n: int) -> int:
    """n rank files, rank<N>.pt.trace.json.gz, cycling through the size variants and one rank
    on math; ranks from the file names. Returns the bytes written."""
    out.mkdir(parents=True, exist_ok=True)
    templates = out / "_templates"
    for i, padding in enumerate(SIZE_VARIANTS):
        if not (templates / f"v{i}").exists():
            fleet_traces.make_fleet(templates / f"v{i}", 1, padding_events=padding)
            fleet_traces.make_fleet(templates / f"m{i}", 1, math_ranks=(0,), padding_events=padding)
    total = 0
    for rank in range(n):
        kind = "m" if rank == n // 2 else "v"
        src = templates / f"{kind}{rank % len(SIZE_VARIANTS)}" / "rank0.pt.trace.json.gz"
        dst = out / f"rank{rank}.pt.trace.json.gz"
        shutil.copyfile(src, dst)
        total += dst.stat().st_size
    return total


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def measure(mode: str, run_dir: str, workers: int) -> dict:
    """One measurement in this process: wall seconds and the driver's RSS after it."""
    from attnprof import _core
    import attnprof.fleet as fleet

    files = _core.find_trace_files(run_dir)
    start = time.perf_counter()
    if mode == "serial":
        summaries = [_core.analyze_rank(f, f, False, "", "", 1)[0] for f in files]
        bodies = {f: _core.analyze_rank(f, f, True, "", "", 1)[1] for f in _core.fleet_body_files(summaries, run_dir)}
        _core.merge_fleet(summaries, bodies, run_dir)
        ray_start = 0.0
    elif mode == "threads":
        _core.analyze_files(files, run_dir)
        ray_start = 0.0
    else:
        import logging
        import ray
        t = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
        ray_start = time.perf_counter() - t
        start = time.perf_counter()
        fleet.analyze(run_dir, progress=False)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mode": mode, "wall_s": wall, "ray_start_s": ray_start, "rss_mib": rss_mib(), "peak_rss_mib": peak}


def run_child(mode: str, run_dir: Path, workers: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(run_dir), "--workers", str(workers)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def cluster_run(run_dir: Path) -> dict:
    """Head (no CPUs) and two 1-CPU nodes; the first worker node is removed once a rank is done
    and a fresh node joins: nothing may be lost."""
    import logging
    import ray
    from ray.cluster_utils import Cluster
    import attnprof.fleet as fleet

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    ray.init(address=cluster.address, log_to_driver=False, logging_level=logging.ERROR)
    cluster.wait_for_nodes()
    seen_nodes = len([n for n in ray.nodes() if n["Alive"]])
    removed_at = []

    def progress(done, total, *_):
        if done == 1 and not removed_at:
            cluster.add_node(num_cpus=1)
            cluster.remove_node(nodes[0], allow_graceful=False)
            removed_at.append(done)

    start = time.perf_counter()
    try:
        report = fleet.analyze(str(run_dir), progress=progress, retries=3)[0]
    finally:
        wall = time.perf_counter() - start
        ray.shutdown()
        cluster.shutdown()
    section = report.data["ranks"]
    return {"nodes": seen_nodes, "removed_after_ranks": removed_at[0] if removed_at else None,
            "ranks_merged": len(section["ranks"]), "failed": len(section["failed"]), "wall_s": wall}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="16,64,256,1024")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None, help="where the rank traces go (default: a temporary directory)")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "DIR"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], args.child[1], args.workers)))
        return 0

    base = Path(args.out or tempfile.mkdtemp(prefix="attnprof-fleet-bench-"))
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}; "
          f"{os.cpu_count()} cores; Ray workers: {args.workers}")
    print("| ranks | GiB | serial s | threads s | Ray s | Ray start s | serial ranks/s | Ray ranks/s | "
          "Ray GiB/s (gzip) | Ray / serial | Ray - threads ms/task | driver RSS MiB (Ray) | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rss = {}
    for n in [int(x) for x in args.ranks.split(",")]:
        run_dir = base / f"n{n}"
        size = make_ranks(run_dir, n)
        gib = size / 2**30
        serial = run_child("serial", run_dir, args.workers)
        threads = run_child("threads", run_dir, args.workers)
        on_ray = run_child("ray", run_dir, args.workers)
        rss[n] = on_ray["rss_mib"]
        # What Ray costs beyond the engine's own pool of as many threads, per task and worker.
        overhead_ms = (on_ray["wall_s"] - threads["wall_s"]) * args.workers / n * 1000
        print(f"| {n} | {gib:.3f} | {serial['wall_s']:.2f} | {threads['wall_s']:.2f} | {on_ray['wall_s']:.2f} | "
              f"{on_ray['ray_start_s']:.2f} | {n / serial['wall_s']:.1f} | {n / on_ray['wall_s']:.1f} | "
              f"{gib / on_ray['wall_s']:.3f} | {serial['wall_s'] / on_ray['wall_s']:.2f}x faster | {overhead_ms:.1f} | "
              f"{on_ray['rss_mib']:.0f} | {os.getloadavg()[0]:.2f} |", flush=True)
    first, last = min(rss), max(rss)
    print(f"driver RSS at {last} ranks / at {first} ranks: {rss[last] / rss[first]:.2f}x (target <= 1.5x)")
    cluster_dir = base / "cluster"
    make_ranks(cluster_dir, 24)
    c = cluster_run(cluster_dir)
    print(f"cluster: {c['nodes']} nodes, one removed after {c['removed_after_ranks']} rank(s) (a fresh one joined): "
          f"{c['ranks_merged']} of 24 ranks merged, {c['failed']} failed, {c['wall_s']:.1f} s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if not args.out:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
