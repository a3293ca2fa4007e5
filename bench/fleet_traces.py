"""Rank traces for the fleet's tests and benchmark, made from the real H200 fixtures.

Every rank is a copy of one fixture trace with its own distributedInfo (rank, world size, a
default group and tensor-parallel groups); chosen ranks are edited the way real fleets differ:
another backend (the fixture recorded with math forced), or one layer slower (its attention
kernel runs `slow_factor` times longer).
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
TRACES = FIXTURES / "h200-torch2.11" / "traces"
BASE = "llama7b4l_sdpa_bf16_b4_s2048"          # cuDNN attention, 4 layers
MATH = "llama7b4l_sdpa_bf16_b4_s2048_force_math"  # the same model with sdpa_kernel(MATH)
ATTENTION_KERNEL_WORDS = ("sdpa", "flash", "fmha", "attn")


def load(name: str) -> dict:
    with gzip.open(TRACES / f"{name}.pt.trace.json.gz", "rt") as f:
        return json.load(f)


def distributed_info(rank: int, world: int, tp: int) -> dict:
    groups = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": world,
               "ranks": list(range(world))}]
    for g in range(world // tp):
        members = list(range(g * tp, (g + 1) * tp))
        groups.append({"pg_name": str(1 + g), "pg_desc": "tp", "backend_config": "cuda:nccl", "pg_size": tp,
                       "ranks": members})
    return {"backend": "nccl", "rank": rank, "world_size": world, "pg_count": len(groups), "pg_config": groups}


def slow_down_layer(trace: dict, layer: int, factor: float) -> None:
    """The layer-th attention kernel in time order runs `factor` times longer."""
    kernels = [e for e in trace["traceEvents"]
               if e.get("cat") == "kernel" and any(w in e.get("name", "").lower() for w in ATTENTION_KERNEL_WORDS)]
    kernels.sort(key=lambda e: e["ts"])
    kernels[layer]["dur"] = kernels[layer]["dur"] * factor


def add_padding_ops(trace: dict, count: int) -> None:
    """`count` short CPU ops on a thread of their own, after the recorded events: bytes the
    engine parses and indexes as it does a real trace's host ops, none of them attention."""
    events = trace["traceEvents"]
    end = max(e.get("ts", 0) + e.get("dur", 0) for e in events if isinstance(e.get("ts"), (int, float)))
    pid = next((e["pid"] for e in events if e.get("cat") == "cpu_op"), 1)
    events += [{"ph": "X", "cat": "cpu_op", "name": f"aten::bench_pad_{i % 50}", "pid": pid, "tid": 999_999,
                "ts": end + 10 + 2 * i, "dur": 1, "args": {"External id": 10_000_000 + i}} for i in range(count)]


def write_rank(path: Path, trace: dict, gzip_it: bool) -> None:
    text = json.dumps(trace)
    if gzip_it:
        with gzip.open(path, "wt", compresslevel=1) as f:
            f.write(text)
    else:
        path.write_text(text)


def make_fleet(out_dir: str | os.PathLike, ranks: int, *, math_ranks=(), slow_layers: dict | None = None,
               slow_factor: float = 3.0, corrupt_ranks=(), tp: int = 4, gzip_it: bool = True,
               padding_events: int = 0) -> list[Path]:
    """Writes `ranks` rank traces rank<N>.pt.trace.json[.gz] into out_dir and returns their paths.
    math_ranks: ranks recorded with the math backend; slow_layers: {rank: layer} made slower;
    corrupt_ranks: truncated files; padding_events: extra CPU events per rank (bigger files)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base, math = load(BASE), None
    paths = []
    suffix = ".pt.trace.json.gz" if gzip_it else ".pt.trace.json"
    for rank in range(ranks):
        path = out / f"rank{rank}{suffix}"
        paths.append(path)
        if rank in corrupt_ranks:
            path.write_bytes(b'{"traceEvents": [{"ph": "X", "name": ')
            continue
        if rank in math_ranks:
            math = math or load(MATH)
            trace = json.loads(json.dumps(math))
        else:
            trace = json.loads(json.dumps(base))
        trace["distributedInfo"] = distributed_info(rank, ranks, min(tp, ranks))
        if slow_layers and rank in slow_layers:
            slow_down_layer(trace, slow_layers[rank], slow_factor)
        if padding_events:
            add_padding_ops(trace, padding_events)
        write_rank(path, trace, gzip_it)
    return paths
