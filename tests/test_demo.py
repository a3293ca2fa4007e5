"""`make demo` (python -m attnprof.demo): one small run end to end, outputs checked."""
from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys

from attnprof import demo


def test_demo_writes_trace_sidecar_reports_and_dashboard_for_each_run(tmp_path, capsys):
    assert demo.main(["--out", str(tmp_path), "--models", "gpt2,llama", "--attn", "sdpa", "--device", "cpu",
                      "--no-trainer"]) == 0
    for run, layers in (("gpt2-sdpa", ["transformer.h.0.attn", "transformer.h.1.attn"]),
                        ("llama-sdpa", ["model.layers.0.self_attn", "model.layers.1.self_attn"])):
        d = tmp_path / run
        assert (d / "trace.json").exists()
        assert (d / "trace.json.attnprof-capture.json").exists()
        report = json.loads((d / "report.json").read_text())
        assert [layer["module"] for layer in report["layers"]] == layers
        assert {c["source"] for c in report["calls"]} == {"trace+capture"}
        assert (d / "report.md").read_text().strip()
        # The annotated trace and the TensorBoard run come from the one read of the trace.
        annotated = json.loads(gzip.decompress((d / "trace.attnprof.json.gz").read_bytes()))
        assert len(annotated["traceEvents"]) > len(json.loads((d / "trace.json").read_text())["traceEvents"])
        assert list((tmp_path / "tensorboard" / run).glob("events.out.tfevents.*"))
    page = (tmp_path / "dashboard.html").read_text()
    start = page.index('id="attnprof-data">') + len('id="attnprof-data">')
    runs = json.loads(page[start:page.index("</script>", start)])["runs"]
    # The CPU sweep's run: measured points per backend and length, and the captured heads.
    sweep = next(r for r in runs if r["label"] == "llama-sweep")
    # On CPU, sdpa's series is the backend PyTorch picked there: its flash kernel.
    assert sorted(s["backend"] for s in sweep["scaling"]["series"]) == ["cpu_flash", "eager"]
    assert all(s["lengths"] == list(demo.SWEEP_LENGTHS) for s in sweep["scaling"]["series"])
    assert sweep["heads"]["layers"] == 2 and sweep["heads"]["heads"] == 4  # the tiny LLaMA's 2 x 4 heads
    # The verified eager LLaMA: its SDPA fix measured against it, shown in the dashboard.
    verified = next(r for r in runs if r["label"] == "llama-eager-verified")
    row = verified["verification"]["rows"][0]
    assert row[:2] == ["use_sdpa", "layers 0-1"] and "eager -> cpu_flash" in row
    assert row[2] in ("confirmed", "no_gain")  # the verdict is a timing of this machine (tests/test_verify.py pins it)
    assert json.loads((tmp_path / "verify" / "report.json").read_text())["verification"]["model"] == "LlamaForCausalLM"
    printed = capsys.readouterr()
    assert "=== gpt2-sdpa" in printed.out and "=== llama-sdpa" in printed.out
    assert "Verified on llama-eager (S=512): use_sdpa: " in printed.out
    # One progress display: a line per run (stderr is not a terminal here), no other bar.
    progress = [line for line in printed.err.splitlines() if line.startswith("attnprof demo [")]
    assert progress == ["attnprof demo [1/2] gpt2-sdpa", "attnprof demo [2/2] llama-sdpa"]
    assert "\r" not in printed.err and "it/s" not in printed.err


def test_demo_output_holds_attnprofs_answers_without_the_profiler_librarys_log_or_config_warnings(tmp_path):
    # Kineto writes "USDT:... profiler_start/stop" to file descriptor 2 at every trace; a
    # subprocess sees what a user of `make demo` sees.
    # The Trainer part memory-profiles training steps (torch's allocator notes blocks from before
    # the window) and would print each step's metric dict.
    done = subprocess.run([sys.executable, "-m", "attnprof.demo", "--out", str(tmp_path), "--models", "gpt2",
                           "--attn", "sdpa", "--no-sweep", "--no-verify", "--device", "cpu"],
                          capture_output=True, text=True, timeout=300, check=True)
    printed = done.stdout + done.stderr
    assert "=== gpt2-sdpa" in done.stdout
    assert "attnprof demo [1/1] gpt2-sdpa" in done.stderr  # the demo's own stderr still passes
    assert "Trainer step 2 (AttentionProfilerCallback): " in done.stdout
    for foreign in ("USDT:", "STAGE:", "profiler_start", "bos_token_id", "eos_token_id",
                    "Memory block of unknown size", "{'loss'", "'train_runtime'"):
        assert foreign not in printed, foreign


def test_demo_verbose_trainer_prints_the_trainers_own_metric_dicts(tmp_path, capsys):
    demo.trainer_demo(str(tmp_path), verbose=True)
    assert "{'loss': " in capsys.readouterr().out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_demo_progress_on_a_terminal_is_one_line_redrawn_in_place_and_cleared_before_each_report(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = demo._Progress(2)
    for run in ("gpt2-sdpa", "llama-sdpa"):
        progress.start(run)
        progress.finish_one()
        progress.clear()
    shown = terminal.getvalue()
    assert "\n" not in shown
    assert shown.count("\r\033[K") == 2
    assert "] 0/2 gpt2-sdpa" in shown and "] 1/2 llama-sdpa" in shown


def test_demo_rejects_an_unknown_model(tmp_path, capsys):
    try:
        demo.main(["--out", str(tmp_path), "--models", "gpt5"])
    except SystemExit as e:
        assert e.code == 2
    else:
        raise AssertionError("an unknown model name must be a usage error")
    assert "gpt5" in capsys.readouterr().err


def test_demo_trainer_step_profiles_both_training_steps(tmp_path):
    logged = demo.trainer_demo(str(tmp_path))
    assert sorted(logged) == [2, 3]  # step 1 is the warm-up
    for step in (2, 3):
        report = json.loads((tmp_path / "attnprof" / f"step-{step}.report.json").read_text())
        assert logged[step]["attnprof/fused_time_fraction"] == report["summary"]["fused_time_fraction"]
        assert {c["module"] for c in report["calls"]} == {"model.layers.0.self_attn", "model.layers.1.self_attn"}
    assert "attnprof/regression" in logged[3] and "attnprof/regression" not in logged[2]
