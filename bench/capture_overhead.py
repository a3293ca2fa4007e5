"""Overhead of live attention capture: attnprof.profile(attention_profile=True) vs a plain
torch.profiler.profile with the same flags, on CPU, GPT-2-small and a LLaMA-style model.

The two run interleaved, a plain and a captured pass per round in alternating order, and the
figure to read is the paired wall-time ratio: the median over rounds of (captured / plain),
with a 95 % bootstrap interval. The two passes of a round share the machine's state of that
second, so their ratio follows the capture rather than the drift of a shared or virtual
machine, whose speed moves by 10 - 30 % over a minute with nothing else running (the ratio of
the two medians, also printed, moves with that drift).

The rounds run in several processes one after another (`--processes`, default 8), each
printing its own figures, and the verdict is the pooled one: the median of every round of every
process, with an interval that resamples processes and then rounds within each (a two-stage
bootstrap). One process places its buffers once, and that placement alone moved a change that
costs nothing by up to 4 % in a 41-round run whose interval excluded 1.0; a new process places
them anew, so the pooled interval counts a placement's bias as the noise it is. `--placebo`
adds that change as a third kind of pass to the same rounds: a plain pass with a 1,040-byte
tensor held across it, no more work, only the pass's buffers elsewhere; its ratio over plain is
what the run reports for a change that costs nothing.

Also printed for each process: the median CPU-time ratio, the least CPU time of a pass, the
paired CPU-time ratio, the page faults and garbage collections inside the passes, and the load
average before and after (the runs are in docs/performance.md, "Live capture overhead").

Two sources of noise are taken out, for both kinds of pass alike:
- each pass starts after gc.collect(), as timeit and pyperf arrange it, so a pass's collections
  are its own (one collection with the profiler's event lists alive took 12-36 ms and fell on
  whichever pass crossed the threshold);
- on glibc the script re-runs itself with the malloc trim and mmap thresholds fixed (see
  STEADY_MALLOC), so freed memory stays in the heap: with glibc's moving thresholds 0 - 35,000
  page faults (up to ~50 ms) fell on passes of either kind at random. `--default-malloc` keeps
  the process's own allocator settings; the page-fault counts show what each kind of pass paid.

Not a test: nothing is asserted except that both runs produce the same output and the capture
saw every attention call.

    python bench/capture_overhead.py [--processes 8] [--repeats 24] [--seq 128] [--threads N]
                                     [--placebo] [--default-malloc]
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import transformers as tf

import attnprof

CPU = [torch.profiler.ProfilerActivity.CPU]
TARGET = 1.03

# glibc's default thresholds move with the sizes freed (an mmap'd block freed raises the mmap
# threshold to its size, the trim threshold to twice that), so whether a pass's large buffers
# come back as fresh zero pages depends on what the passes before it freed. Fixed thresholds
# (largest values glibc takes) keep every freed block in the heap for the next pass.
STEADY_MALLOC = "glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295"


def steady_malloc_or_reexec(default_malloc: bool) -> str:
    """The allocator setting in force: re-executes this script once with STEADY_MALLOC added to
    GLIBC_TUNABLES (tunables are read only at process start) unless asked not to or not glibc."""
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if default_malloc:
        return "the process's own malloc settings (--default-malloc)"
    if platform.libc_ver()[0] != "glibc":
        return "the platform's malloc (not glibc: thresholds not fixed)"
    if STEADY_MALLOC in tunables:
        return "glibc malloc with fixed trim and mmap thresholds"
    env = dict(os.environ, GLIBC_TUNABLES=":".join(filter(None, (tunables, STEADY_MALLOC))))
    os.execve(sys.executable, [sys.executable, *sys.argv], env)
    raise AssertionError("unreachable")


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=positive, default=24,
                        help="rounds in each process (one pass of each kind a round; default 24, a "
                             "multiple of the number of orders of 2 and of 3 kinds of pass)")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch intra-op threads (default: torch's); 1 keeps a loaded machine's "
                             "descheduled OpenMP threads out of both timings")
    parser.add_argument("--placebo", action="store_true",
                        help="also time, in the same rounds, a plain pass with a 1,040-byte tensor "
                             "held across it: a change that does no work, whose ratio shows what this "
                             "run resolves")
    parser.add_argument("--processes", type=positive, default=8,
                        help="run the rounds in this many processes, one after another, and pool "
                             "them: each places its buffers anew (default 8, ~1.6 min each on a "
                             "2-core machine; 16 - 20 resolved the ratio to +-0.01 - 0.02 here; 1: "
                             "this process alone)")
    parser.add_argument("--default-malloc", action="store_true",
                        help="keep the allocator's own (moving) thresholds instead of fixing them")
    parser.add_argument("--summary-out", metavar="PATH",
                        help="also write each model's pooled paired wall ratio, its interval and the "
                             "target as JSON (bench/hta_compare.py's capture case reads it)")
    parser.add_argument("--rounds-out", help=argparse.SUPPRESS)  # a pooled run's child: its timings
    return parser.parse_args()


def models(seq: int):
    yield "gpt2-small", tf.GPT2LMHeadModel(tf.GPT2Config(n_positions=max(seq, 1024))), 12
    yield "llama-style (8 layers, hidden 1024, GQA 16:4)", tf.LlamaForCausalLM(tf.LlamaConfig(
        hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
        num_key_value_heads=4, vocab_size=32000)), 8


def collections_so_far() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


def timed(fn) -> tuple[float, float, int, int]:
    """(wall, CPU) seconds of one call, after a full collection, and the collections and minor
    page faults inside it; CPU time (all threads) also means something when other processes
    hold the cores."""
    gc.collect()
    collections = collections_so_far()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return wall, cpu, collections_so_far() - collections, faults


def median_interval(groups: list[list[float]], resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the median of all ``groups`` together: each resample
    draws the groups (processes) with replacement, then the values (rounds) within each drawn
    group; one group is the plain bootstrap. Seeded: a run's printout is a function of its timings."""
    rng = random.Random(seed)

    def resample() -> list[float]:
        drawn = groups if len(groups) == 1 else rng.choices(groups, k=len(groups))
        return [value for group in drawn for value in rng.choices(group, k=len(group))]

    medians = sorted(statistics.median(resample()) for _ in range(resamples))
    return medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def verdict(ratio: float, high: float) -> str:
    if high <= TARGET:
        return f"within {TARGET} (the interval too)"
    if ratio <= TARGET:
        return f"within {TARGET} (the interval reaches {high:.3f}: not resolved by this run)"
    return f"above {TARGET}"


WALL, CPU_TIME = 0, 1  # where a pass's timings (timed()) hold each


def paired_ratios(plain: list[tuple], other: list[tuple], clock: int = WALL) -> list[float]:
    """Each round's other / plain time on ``clock``."""
    return [o[clock] / p[clock] for p, o in zip(plain, other)]


def pooled_ratio(groups: list[list[float]]) -> dict[str, float]:
    """The median paired ratio over all groups' rounds and its 95 % interval."""
    low, high = median_interval(groups)
    return {"ratio": statistics.median(ratio for group in groups for ratio in group), "low": low, "high": high}


def paired_line(label: str, groups: list[list[float]]) -> str:
    """The median paired ratio over all groups' rounds, its interval and the verdict."""
    figures = pooled_ratio(groups)
    paired, low, high = figures["ratio"], figures["low"], figures["high"]
    where = f"{sum(map(len, groups))} rounds" + (f" in {len(groups)} processes" if len(groups) > 1 else "")
    return f"  {label} {paired:.3f}  (95 % interval {low:.3f} - {high:.3f}, {where}): {verdict(paired, high)}"


def report(name: str, plain: list[tuple], captured: list[tuple], placebo: list[tuple]) -> None:
    a, a_cpu = (statistics.median(t[i] for t in plain) for i in (WALL, CPU_TIME))
    b, b_cpu = (statistics.median(t[i] for t in captured) for i in (WALL, CPU_TIME))
    # The fastest pass of each is the one other processes disturbed least.
    a_min, b_min = (min(t[1] for t in times) for times in (plain, captured))
    paired_cpu = statistics.median(paired_ratios(plain, captured, CPU_TIME))
    collections = [sum(t[2] for t in times) for times in (plain, captured)]
    faults = [statistics.median(t[3] for t in times) for times in (plain, captured)]
    print(f"{name}\n{paired_line('paired wall ratio', [paired_ratios(plain, captured)])}\n"
          + (f"{paired_line('placebo (plain, heap shifted) over plain', [paired_ratios(plain, placebo)])}\n"
             if placebo else "")
          + f"  plain {a * 1e3:.1f} ms, attention_profile {b * 1e3:.1f} ms a pass (medians): "
          f"ratio of medians {b / a:.3f}; CPU time: ratio of medians {b_cpu / a_cpu:.3f}, "
          f"least {b_min / a_min:.3f}, paired {paired_cpu:.3f}\n"
          f"  inside the passes: page faults a pass (median) plain {faults[0]:.0f}, attention_profile "
          f"{faults[1]:.0f}; collections plain {collections[0]}, attention_profile {collections[1]}",
          flush=True)


def measure(model: torch.nn.Module, layers: int, args: argparse.Namespace) -> dict[str, list[tuple]]:
    """The timings of each kind of pass ("plain", "captured", and "placebo" when asked) over
    ``args.repeats`` rounds, after checking that the capture leaves the output bit-identical and
    sees every attention call."""
    model = model.eval()
    ids = torch.randint(0, 1000, (1, args.seq))
    outputs = {}

    def plain():
        with torch.no_grad(), torch.profiler.profile(activities=CPU, record_shapes=True):
            outputs["plain"] = model(ids).logits

    def captured():
        with torch.no_grad(), attnprof.profile(attention_profile=True, activities=CPU,
                                               record_shapes=True) as prof:
            outputs["captured"] = model(ids).logits
        outputs["records"] = len(prof.capture.records)

    def placebo():
        held = torch.empty(1040, dtype=torch.uint8)  # shifts where the pass's buffers land
        plain()
        del held

    plain(), captured()  # warm-up and correctness check before timing
    assert torch.equal(outputs["plain"], outputs["captured"]), "capture changed the output"
    assert outputs["records"] == layers, f"captured {outputs['records']} calls, want {layers}"
    # Interleave the kinds of pass, each round in the next order of all their orders, so
    # machine noise and a pass's place in the round hit every kind alike.
    kinds = {"plain": plain, "captured": captured} | ({"placebo": placebo} if args.placebo else {})
    orders = list(itertools.permutations(kinds))
    times = {kind: [] for kind in kinds}
    for i in range(args.repeats):
        for kind in orders[i % len(orders)]:
            times[kind].append(timed(kinds[kind]))
    return times


def run_here(args: argparse.Namespace) -> dict[str, dict[str, list[list[float]]]]:
    """Every model in this process; with --rounds-out, also each model's paired ratios as JSON
    ({model: {"captured wall": [...], "captured cpu": [...], ...}}). Returns them as one group."""
    rounds = {}
    for name, model, layers in models(args.seq):
        times = measure(model, layers, args)
        report(name, times["plain"], times["captured"], times.get("placebo", []))
        rounds[name] = {f"{kind} {clock}": paired_ratios(times["plain"], times[kind], index)
                        for kind in times if kind != "plain"
                        for clock, index in (("wall", WALL), ("cpu", CPU_TIME))}
    if args.rounds_out:
        with open(args.rounds_out, "w") as out:
            json.dump(rounds, out)
    return {name: {series: [ratios] for series, ratios in model.items()} for name, model in rounds.items()}


def run_pooled(args: argparse.Namespace) -> dict[str, dict[str, list[list[float]]]]:
    """``args.processes`` runs of this script one after another (each prints its own report),
    then each model's ratios pooled over them; returns each model's ratios, a group a process."""
    child_args = ["--processes=1", f"--repeats={args.repeats}", f"--seq={args.seq}", f"--threads={args.threads}"]
    child_args += ["--placebo"] * args.placebo + ["--default-malloc"] * args.default_malloc
    pooled: dict[str, dict[str, list[list[float]]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for n in range(args.processes):
            print(f"--- process {n + 1} of {args.processes}", flush=True)
            out = os.path.join(folder, f"{n}.json")
            subprocess.run([sys.executable, __file__, *child_args, "--rounds-out", out], check=True)
            with open(out) as f:
                for name, kinds in json.load(f).items():
                    for series, ratios in kinds.items():
                        pooled.setdefault(name, {}).setdefault(series, []).append(ratios)
    print(f"--- pooled over {args.processes} processes")
    for name, ratios in pooled.items():
        # CPU time leaves out the time other processes held the core: under load the wall ratio
        # carries the scheduler's share of each pass as well as the capture.
        print(f"{name}\n{paired_line('paired wall ratio', ratios['captured wall'])}\n"
              f"{paired_line('paired CPU-time ratio', ratios['captured cpu'])}")
        if "placebo wall" in ratios:
            print(f"{paired_line('placebo (plain, heap shifted) over plain, wall', ratios['placebo wall'])}\n"
                  f"{paired_line('placebo over plain, CPU time', ratios['placebo cpu'])}")
    return pooled


def main() -> None:
    args = parse_args()
    malloc = steady_malloc_or_reexec(args.default_malloc)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch 1, seq {args.seq}, "
          f"{malloc}, load average {os.getloadavg()[0]:.1f}", flush=True)
    rounds = run_pooled(args) if args.processes > 1 else run_here(args)
    if args.summary_out:
        with open(args.summary_out, "w") as out:
            json.dump({name: pooled_ratio(ratios["captured wall"]) | {"target": TARGET}
                       for name, ratios in rounds.items()}, out)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
