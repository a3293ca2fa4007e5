"""Live capture never raises into the user's code and never changes its results: every hook of
the capture is made to fail in turn (the module call, SDPA interception, the transformers attention
interface, installing and removing the hooks, the sidecar write, the analysis of the trace
handler), and the model's outputs must stay bit-identical to an unprofiled run, with at most one
warning reaching the user. docs/reliability.md, "Live capture"."""
from __future__ import annotations

import importlib
import warnings

import pytest
import torch
import transformers as tf

import attnprof
from attnprof import _capture

# The modules, not the names the package re-exports (attnprof.profile is also the class).
attnprof_profile = importlib.import_module("attnprof.profile")
attnprof_report = importlib.import_module("attnprof.report")

CPU = [torch.profiler.ProfilerActivity.CPU]


def forced(*_args, **_kwargs):
    raise RuntimeError("forced failure in attnprof")


def fail_module_call_start(mp):
    mp.setattr(_capture.AttentionCapture, "_range_name", forced)


def fail_closing_ranges(mp):
    mp.setattr(_capture, "_close_range", forced)  # module, SDPA and interface ranges alike


def fail_sdpa_arguments(mp):
    mp.setattr(_capture, "_sdpa_arguments", forced)


def fail_sdpa_choice(mp):
    mp.setattr(_capture._ChoiceCache, "choice", forced)


def fail_interface_records(mp):
    mp.setattr(_capture.AttentionCapture, "_fill_arguments", forced)


def fail_installing(mp):
    mp.setattr(_capture, "patch_attention_interface", forced)


def fail_removing(mp):
    original = _capture.patch_attention_interface

    def patch(wrap):
        undo = original(wrap)

        def broken_undo():
            undo()
            forced()

        return broken_undo

    mp.setattr(_capture, "patch_attention_interface", patch)


def fail_sidecar_write(mp):
    def disk_full(*_args):
        raise OSError(28, "No space left on device (forced failure in attnprof)")

    mp.setattr(attnprof_profile, "write_sidecar", disk_full)


def fail_analysis(mp):
    mp.setattr(attnprof_report, "analyze_path", forced)


FAILURES = [fail_module_call_start, fail_closing_ranges, fail_sdpa_arguments, fail_sdpa_choice,
            fail_interface_records, fail_installing, fail_removing, fail_sidecar_write, fail_analysis]


@pytest.fixture(scope="module")
def model_and_inputs():
    torch.manual_seed(0)
    config = tf.LlamaConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, intermediate_size=128, attn_implementation="sdpa")
    model = tf.LlamaForCausalLM(config).eval()
    x = torch.randint(0, 100, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        reference = model(x).logits
    return model, x, reference


def profiled_run(model, x, out_dir):
    """The user's code: a profiled forward, a step that exports the trace, its sidecar and Report."""
    schedule = torch.profiler.schedule(wait=0, warmup=0, active=1, repeat=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad(), attnprof.profile(activities=CPU, record_shapes=True, schedule=schedule,
                                               on_trace_ready=attnprof.trace_handler(str(out_dir))) as prof:
            logits = model(x).logits
            prof.step()
    ours = [w for w in caught if issubclass(w.category, _capture.HookError)]
    return logits, prof, ours


def test_without_a_failure_the_run_is_captured_and_silent(model_and_inputs, tmp_path):
    model, x, reference = model_and_inputs
    logits, prof, ours = profiled_run(model, x, tmp_path)
    assert torch.equal(logits, reference)
    assert ours == []
    assert [c["module"] for c in prof.last_report.calls] == ["model.layers.0.self_attn", "model.layers.1.self_attn"]


@pytest.mark.parametrize("fail", FAILURES, ids=lambda f: f.__name__[len("fail_"):])
def test_a_failing_capture_hook_never_reaches_the_user_and_changes_nothing(model_and_inputs, tmp_path,
                                                                          monkeypatch, fail):
    model, x, reference = model_and_inputs
    fail(monkeypatch)
    logits, prof, ours = profiled_run(model, x, tmp_path)
    assert torch.equal(logits, reference)
    assert len(ours) == 1, [str(w.message) for w in ours]
    assert "forced failure in attnprof" in str(ours[0].message)
    assert list(tmp_path.glob("*.pt.trace.json")), "the trace itself is always written"
    # No hook is left behind: the same model, now unprofiled, runs exactly as before.
    monkeypatch.undo()
    with torch.no_grad():
        assert torch.equal(model(x).logits, reference)
