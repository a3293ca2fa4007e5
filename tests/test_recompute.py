"""Activation checkpointing: the forward attention a checkpointed layer runs again inside the
backward is a recompute of that layer, never a layer of its own (real CPU captures of a small
Llama trained one step under torch.utils.checkpoint, reentrant and not)."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LAYERS = 3


def checkpointed_llama(reentrant: bool):
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=LAYERS,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                      bos_token_id=1, eos_token_id=2, pad_token_id=0, use_cache=False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).train()
    model.set_attn_implementation("sdpa")
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
    return model


def train_step(model):
    ids = torch.randint(3, 128, (1, 32), generator=torch.Generator().manual_seed(1))
    model(input_ids=ids, labels=ids).loss.backward()


def assert_recomputes_belong_to_their_layers(report: dict) -> None:
    calls = report["calls"]
    assert len(report["layers"]) == LAYERS  # not 2 x LAYERS: a recompute is no layer of its own
    forwards = {c["layer"]: c for c in calls if c["direction"] == "forward" and not c["recompute"]}
    recomputes = [c for c in calls if c["recompute"]]
    backwards = [c for c in calls if c["direction"] == "backward"]
    assert sorted(forwards) == list(range(LAYERS))
    assert len(recomputes) == LAYERS and len(backwards) == LAYERS
    # The backward reaches the last layer first, and recomputes it first.
    assert [c["layer"] for c in recomputes] == list(reversed(range(LAYERS)))
    for r in recomputes:
        assert r["direction"] == "forward"
        assert r["pair_id"] == forwards[r["layer"]]["id"]
    for b in backwards:  # each backward pairs with its layer's original forward
        assert b["pair_id"] == forwards[b["layer"]]["id"]
        assert forwards[b["layer"]]["pair_id"] == b["id"]
    summary = report["summary"]
    assert summary["recompute_call_count"] == LAYERS
    assert summary["recompute_time_us"] == pytest.approx(sum(c["device_time_us"] for c in recomputes))
    for layer in report["layers"]:
        assert len(layer["call_ids"]) == 3  # forward, recompute, backward
        assert layer["recompute_time_us"] == pytest.approx(
            sum(c["device_time_us"] for c in recomputes if c["layer"] == layer["index"]))
    finding = next(f for f in report["findings"] if f["rule"] == "calls.recompute")
    assert finding["layers"] == list(range(LAYERS))
    assert "create_selective_checkpoint_contexts" in finding["detail"]


@pytest.mark.parametrize("reentrant", [False, True], ids=["non_reentrant", "reentrant"])
def test_a_plain_trace_of_checkpointed_training_tells_recomputes_apart(tmp_path, run_cli, reentrant):
    model = checkpointed_llama(reentrant)
    with torch.profiler.profile(record_shapes=True) as prof:
        train_step(model)
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    out = tmp_path / "report.json"
    run_cli("analyze", trace, "--json", out, check_code=0)
    assert_recomputes_belong_to_their_layers(json.loads(out.read_text()))


def test_a_live_capture_of_checkpointed_training_pairs_recomputes_by_module():
    import attnprof

    model = checkpointed_llama(reentrant=False)
    with attnprof.profile(attention_profile=True) as prof:
        train_step(model)
    report = json.loads(prof.attention_report().to_json())
    assert_recomputes_belong_to_their_layers(report)
    recomputes = [c for c in report["calls"] if c["recompute"]]
    assert [c["module"] for c in recomputes] == [f"model.layers.{i}.self_attn" for i in reversed(range(LAYERS))]
