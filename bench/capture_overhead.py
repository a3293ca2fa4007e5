"""Overhead of live attention capture: attnprof.profile(attention_profile=True) vs a plain
torch.profiler.profile with the same flags, on CPU, GPT-2-small and a LLaMA-style model.
Prints per model the ratios of the median wall time (target <= 1.03), the median CPU time,
the least CPU time of a pass (what the capture adds, least blurred by other processes) and
the median of the CPU time ratios of the two passes of each round (which share its load), and
the load average before and after (the runs are in docs/performance.md, "Live capture
overhead"). Each pass starts after gc.collect(), as timeit and pyperf arrange it: a pass's
collections are then its own, not those the passes before it left due (one collection with
the profiler's event lists alive took 12-36 ms, 3-9% of a pass, and fell on whichever pass
crossed the threshold); the collections inside the passes are counted and printed. Not a
test: nothing is asserted except that both runs produce the same output and the capture saw
every attention call.

    python bench/capture_overhead.py [--repeats 7] [--seq 128] [--threads N]
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

import torch
import transformers as tf

import attnprof

CPU = [torch.profiler.ProfilerActivity.CPU]


def models(seq: int):
    yield "gpt2-small", tf.GPT2LMHeadModel(tf.GPT2Config(n_positions=max(seq, 1024))), 12
    yield "llama-style (8 layers, hidden 1024, GQA 16:4)", tf.LlamaForCausalLM(tf.LlamaConfig(
        hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
        num_key_value_heads=4, vocab_size=32000)), 8


def collections_so_far() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


def timed(fn) -> tuple[float, float, int]:
    """(wall, CPU) seconds of one call, after a full collection, and the collections inside it;
    CPU time (all threads) also means something when other processes hold the cores."""
    gc.collect()
    collections = collections_so_far()
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, collections_so_far() - collections


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch intra-op threads (default: torch's); 1 keeps a loaded machine's "
                             "descheduled OpenMP threads out of both timings")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch 1, seq {args.seq}, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, model, layers in models(args.seq):
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

        plain(), captured()  # warm-up and correctness check before timing
        assert torch.equal(outputs["plain"], outputs["captured"]), "capture changed the output"
        assert outputs["records"] == layers, f"captured {outputs['records']} calls, want {layers}"
        # Interleave the two, in alternating order, so machine noise hits both alike.
        t_plain, t_capt = [], []
        for i in range(args.repeats):
            for run in ((plain, captured) if i % 2 == 0 else (captured, plain)):
                (t_plain if run is plain else t_capt).append(timed(run))
        a, a_cpu = (statistics.median(t[i] for t in t_plain) for i in (0, 1))
        b, b_cpu = (statistics.median(t[i] for t in t_capt) for i in (0, 1))
        # The fastest pass of each is the one other processes disturbed least: its CPU time is
        # the model's plus what the capture adds, which a loaded machine blurs in the medians.
        a_min, b_min = (min(t[1] for t in times) for times in (t_plain, t_capt))
        # Each round's two passes run back to back, so the ratio within a round shares its
        # load: the median of those ratios follows the capture, not the load's drift.
        paired = statistics.median(c[1] / p[1] for p, c in zip(t_plain, t_capt))
        collections = [sum(t[2] for t in times) for times in (t_plain, t_capt)]
        print(f"{name:48s} plain {a * 1e3:8.1f} ms   attention_profile {b * 1e3:8.1f} ms   "
              f"ratio {b / a:.3f} (target <= 1.03)   CPU time ratio {b_cpu / a_cpu:.3f}   "
              f"least CPU time ratio {b_min / a_min:.3f}   paired CPU time ratio {paired:.3f}   "
              f"collections inside the passes: plain {collections[0]}, attention_profile {collections[1]}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
