"""`make demo`: profile built-in transformers architectures (random weights, small configs)
with eager and sdpa attention on this machine's device, and write attnprof-demo/.

    python -m attnprof.demo --out attnprof-demo [--models gpt2,bert,llama,vit,mistral]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

import torch

from . import _core
from ._quiet import ProfilerLogsHidden
from .profile import profile

BATCH, SEQ = 1, 128


@dataclass(frozen=True)
class DemoModel:
    name: str
    what: str
    build: Callable[[str], torch.nn.Module]   # attn_implementation -> model
    inputs: Callable[[torch.device], dict]


def _text_inputs(with_padding: bool = False) -> Callable[[torch.device], dict]:
    def make(device: torch.device) -> dict:
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, 1000, (BATCH, SEQ), generator=g)
        inputs = {"input_ids": ids}
        if with_padding:
            mask = torch.ones(BATCH, SEQ, dtype=torch.long)
            mask[:, SEQ * 3 // 4:] = 0  # the last quarter is padding
            inputs["attention_mask"] = mask
        return {k: v.to(device) for k, v in inputs.items()}
    return make


def _image_inputs(device: torch.device) -> dict:
    g = torch.Generator().manual_seed(0)
    return {"pixel_values": torch.randn(BATCH, 3, 64, 64, generator=g).to(device)}


def _models() -> list[DemoModel]:
    import transformers as tf
    small = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256)
    return [
        DemoModel("gpt2", "GPT-2 (causal, MHA)", lambda a: tf.GPT2LMHeadModel(tf.GPT2Config(
            n_embd=128, n_layer=2, n_head=4, vocab_size=1000, n_positions=SEQ, attn_implementation=a,
            bos_token_id=0, eos_token_id=0)),  # GPT-2's own ids (50256) lie outside this vocabulary
            _text_inputs()),
        DemoModel("bert", "BERT (bidirectional, padding mask)", lambda a: tf.BertModel(tf.BertConfig(
            vocab_size=1000, max_position_embeddings=SEQ, attn_implementation=a, **small)),
            _text_inputs(with_padding=True)),
        DemoModel("llama", "LLaMA (causal, GQA 4:2)", lambda a: tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=1000, num_key_value_heads=2, max_position_embeddings=SEQ, attn_implementation=a,
            **small)), _text_inputs()),
        DemoModel("vit", "ViT (image patches, no mask)", lambda a: tf.ViTModel(tf.ViTConfig(
            image_size=64, patch_size=8, attn_implementation=a, **small)), _image_inputs),
        DemoModel("mistral", "Mistral (sliding window 64 < sequence 128)", lambda a: tf.MistralForCausalLM(
            tf.MistralConfig(vocab_size=1000, num_key_value_heads=2, sliding_window=64,
                             max_position_embeddings=SEQ, attn_implementation=a, **small)), _text_inputs()),
    ]


class _Progress:
    """The demo's one progress display: a single line on a terminal's stderr, redrawn in place
    and cleared before a report is printed; one "[i/n] run" line per run otherwise. Other
    libraries' bars (Hugging Face's tqdm) are switched off so they cannot interleave with it."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.tty = total, 0, sys.stderr.isatty()
        try:
            from transformers.utils import logging as hf_logging
            hf_logging.disable_progress_bar()
        except Exception:  # noqa: BLE001 (transformers absent or without the switch)
            pass

    def start(self, run: str) -> None:
        if self.tty:
            filled = 30 * self.done // max(1, self.total)
            sys.stderr.write(f"\rattnprof demo [{'#' * filled}{' ' * (30 - filled)}] {self.done}/{self.total} "
                             f"{run:<16}")
        else:
            sys.stderr.write(f"attnprof demo [{self.done + 1}/{self.total}] {run}\n")
        sys.stderr.flush()

    def finish_one(self) -> None:
        self.done += 1

    def clear(self) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _activities(device: torch.device) -> list:
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


def profile_one(model: DemoModel, attn: str, device: torch.device, out_dir: str, tensorboard_dir: str) -> str:
    """Profiles one forward pass after a warm-up into OUT/<run>/ (trace, Report, Markdown and the
    annotated trace, all from the one read of the trace) and appends it to ``tensorboard_dir``;
    returns the Report JSON."""
    from .report import analyze_path
    torch.manual_seed(0)
    net = model.build(attn).to(device).eval()
    inputs = model.inputs(device)
    with torch.no_grad():
        net(**inputs)  # warm-up: first-call allocations and lazy init stay out of the trace
        with profile(attention_profile=True, activities=_activities(device), record_shapes=True,
                     profile_memory=True) as prof:
            net(**inputs)
    os.makedirs(out_dir, exist_ok=True)
    trace = os.path.join(out_dir, "trace.json")
    prof.export_chrome_trace(trace)
    report = analyze_path(trace, chrome=os.path.join(out_dir, "trace.attnprof.json.gz"), tensorboard=tensorboard_dir)
    report.save_json(os.path.join(out_dir, "report.json"))
    report.save_markdown(os.path.join(out_dir, "report.md"))
    return report.to_json()


# The H200 fixtures (shared/fixtures beside the checkout): eager, SDPA math fallback, cuDNN.
H200_FIXTURES = ["llama7b4l_eager_bf16_b4_s2048", "llama7b4l_sdpa_bf16_b4_s2048_force_math",
                 "llama7b4l_sdpa_bf16_b4_s2048", "llama7b4l_sdpa_bf16_b4_s1024_stack"]


def _screenshot(html: str) -> None:
    """PNG of a dashboard beside it, when headless Chromium is installed (make deps installs it)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return
    png = os.path.splitext(html)[0] + ".png"
    subprocess.run([chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                    f"--screenshot={os.path.abspath(png)}", "--window-size=1400,3200",
                    Path(html).resolve().as_uri()],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False)


def _fixture_dashboard(out_dir: str) -> None:
    """Dashboard (+ screenshot) of the real H200 traces, when shared/fixtures is beside the checkout."""
    traces = Path.cwd().parent / "shared" / "fixtures" / "h200-torch2.11" / "traces"
    paths = [traces / f"{name}.pt.trace.json.gz" for name in H200_FIXTURES]
    if not all(p.is_file() for p in paths):
        return
    reports = [_core.analyze(str(p), "", "", "") for p in paths]
    html = os.path.join(out_dir, "h200-fixtures-dashboard.html")
    _core.write_file_atomic(html, _core.render_html(reports, H200_FIXTURES))
    _screenshot(html)


SWEEP_LENGTHS = (64, 128, 256)


def sweep_demo(device: torch.device, out_dir: str) -> str:
    """The tiny LLaMA swept over S with eager and sdpa attention on this machine
    (attnprof.sweep: fits, OOM threshold for the device's memory, backend advice), and its
    heads captured at the longest S: the Report behind the dashboard's scaling and heads
    sections. The weights are random, so the heads section says they look untrained."""
    import contextlib
    import io
    from . import heads
    from .sweep import sweep
    llama = next(m for m in _models() if m.name == "llama")
    model = llama.build("sdpa").to(device).eval()

    def make_inputs(length: int) -> dict:
        ids = torch.randint(0, 1000, (BATCH, length), generator=torch.Generator().manual_seed(0))
        return {"input_ids": ids.to(device)}

    with contextlib.redirect_stderr(io.StringIO()):  # the demo's one progress display stays the only one
        report = sweep(model, make_inputs, SWEEP_LENGTHS, backends=("eager", "sdpa"), out_dir=out_dir,
                       memory_cap=None if device.type == "cuda" else "16GiB")
    with torch.no_grad(), heads.HeadCapture() as cap:
        model(**make_inputs(SWEEP_LENGTHS[-1]))
    return heads.attach(report.to_json(), cap)


def trainer_demo(out_dir: str, verbose: bool = False) -> dict[int, dict]:
    """A tiny LLaMA trained on CPU under transformers.Trainer with AttentionProfilerCallback:
    one warm-up step (torch's profiler advises one), then two profiled steps, each with its
    Report in out_dir/attnprof/ and its scalars in the Trainer's log history. Returns the
    logged scalars per step."""
    import transformers as tf
    from .integrations.transformers import AttentionProfilerCallback
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=1000, hidden_size=64, intermediate_size=128,
                                               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                               max_position_embeddings=SEQ, attn_implementation="sdpa"))
    ids = torch.randint(0, 1000, (6, SEQ), generator=torch.Generator().manual_seed(0))
    args = tf.TrainingArguments(output_dir=out_dir, max_steps=3, per_device_train_batch_size=2, logging_steps=1,
                                report_to="none", use_cpu=True, save_strategy="no", disable_tqdm=True)
    trainer = tf.Trainer(model=model, args=args, train_dataset=[{"input_ids": r, "labels": r} for r in ids])
    if not verbose:  # the Trainer prints each step's metric dict; the demo prints attnprof's scalars itself
        trainer.remove_callback(tf.trainer_callback.PrinterCallback)
    trainer.add_callback(AttentionProfilerCallback(trainer, wait=0, warmup=1, active=2,
                                                   activities=[torch.profiler.ProfilerActivity.CPU]))
    trainer.train()
    return {e["step"]: {k: v for k, v in e.items() if k.startswith("attnprof/")}
            for e in trainer.state.log_history if "attnprof/fused_time_fraction" in e}


VERIFY_LENGTH = 512


def verify_demo(device: torch.device, out_dir: str) -> str:
    """attnprof.verify on the eager LLaMA: each suggested fix applied and timed against it
    (OUT/verify/report.json, report.md); returns the Report JSON for the dashboard."""
    from .verify import verify
    llama = next(m for m in _models() if m.name == "llama")
    model = llama.build("eager").to(device)
    ids = torch.randint(0, 1000, (BATCH, VERIFY_LENGTH), generator=torch.Generator().manual_seed(0)).to(device)
    report = verify(model, {"input_ids": ids}, repeats=10)
    os.makedirs(out_dir, exist_ok=True)
    report.save_json(os.path.join(out_dir, "report.json"))
    report.save_markdown(os.path.join(out_dir, "report.md"))
    for f in report.data["verification"]["fixes"]:
        ratio = _core.ratio_text
        measured = f" {ratio(f['speedup'])} (95% CI {ratio(f['speedup_ci'][0])}-{ratio(f['speedup_ci'][1])})" \
            if f["speedup_ci"] else ""
        print(f"Verified on llama-eager (S={VERIFY_LENGTH}): {f['fix']}: {f['verdict']}{measured}: {f['reason']}")
    return report.to_json()


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    with ProfilerLogsHidden(args.verbose):
        return _run(parser, args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m attnprof.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="attnprof-demo")
    parser.add_argument("--models", default="gpt2,bert,llama,vit,mistral")
    parser.add_argument("--attn", default="eager,sdpa")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quiet", action="store_true", help="no per-run report on stdout")
    parser.add_argument("--verbose", action="store_true",
                        help="also show third-party logs: the profiler library's own start/stop and allocator lines "
                             "(attnprof._quiet) and the Trainer's per-step metric dicts")
    parser.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=True,
                        help="also sweep the tiny LLaMA over S (eager, sdpa) and capture its heads: the "
                             "dashboard's scaling and heads sections (writes OUT/sweep/)")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True,
                        help="also verify the eager LLaMA's suggested fixes with attnprof.verify: each applied and "
                             "timed against the unchanged model (the dashboard's verification section; writes "
                             "OUT/verify/)")
    parser.add_argument("--trainer", action=argparse.BooleanOptionalAction, default=True,
                        help="also train a tiny LLaMA under transformers.Trainer with AttentionProfilerCallback: "
                             "a warm-up step and two profiled steps (CPU; writes OUT/trainer/attnprof/)")
    return parser


def _profile_runs(runs, device, args, reports: list, labels: list) -> None:
    """Profiles each (model, attention) run into OUT/<model>-<attn>/, printing its report unless --quiet."""
    progress = _Progress(len(runs))
    for model, attn in runs:
        run = f"{model.name}-{attn}"
        progress.start(run)
        out_dir = os.path.join(args.out, run)
        report_json = profile_one(model, attn, device, out_dir, os.path.join(args.out, "tensorboard", run))
        reports.append(report_json)
        labels.append(run)
        progress.finish_one()
        if not args.quiet:
            progress.clear()
            print(f"\n=== {run}: {model.what}, {attn}, {device.type} ===\n{_core.render(report_json, 'text')}",
                  flush=True)
    progress.clear()


def _sweep_and_verify(device, args, reports: list, labels: list) -> None:
    if args.sweep:
        sys.stderr.write(f"attnprof demo: scaling sweep (S = {', '.join(map(str, SWEEP_LENGTHS))}) and heads of llama\n")
        reports.append(sweep_demo(device, os.path.join(args.out, "sweep")))
        labels.append("llama-sweep")
    if args.verify:
        sys.stderr.write(f"attnprof demo: verifying the eager llama's fixes (S = {VERIFY_LENGTH})\n")
        reports.append(verify_demo(device, os.path.join(args.out, "verify")))
        labels.append("llama-eager-verified")


def _trainer_outputs(out: str, verbose: bool) -> None:
    trainer_dir = os.path.join(out, "trainer")
    for step, scalars in trainer_demo(trainer_dir, verbose).items():
        shown = ", ".join(f"{k.removeprefix('attnprof/')}={v:g}" for k, v in scalars.items())
        print(f"Trainer step {step} (AttentionProfilerCallback): {shown}")
    print(f"Trainer Reports: {os.path.join(trainer_dir, 'attnprof')}/step-N.report.json, step-N.html")


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    wanted = args.models.split(",")
    models = [m for m in _models() if m.name in wanted]
    unknown = set(wanted) - {m.name for m in models}
    if unknown:
        parser.error(f"unknown model(s): {', '.join(sorted(unknown))}")
    attns = args.attn.split(",")
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    runs = [(m, a) for m in models for a in attns]
    reports, labels, started = [], [], time.perf_counter()
    _profile_runs(runs, device, args, reports, labels)
    _sweep_and_verify(device, args, reports, labels)
    if hasattr(_core, "render_html"):
        _core.write_file_atomic(os.path.join(args.out, "dashboard.html"), _core.render_html(reports, labels))
        _screenshot(os.path.join(args.out, "dashboard.html"))
        _fixture_dashboard(args.out)
    if args.trainer:
        _trainer_outputs(args.out, args.verbose)
    print(f"attnprof demo: {len(runs)} runs in {time.perf_counter() - started:.0f} s on {device.type}; "
          f"outputs in {args.out}/ (per run: trace.json, report.json, report.md"
          f"{', dashboard.html' if hasattr(_core, 'render_html') else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
