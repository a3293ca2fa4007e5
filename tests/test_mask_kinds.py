"""Mask kinds read from real mask values: masks built the way SDPA users build them, and real
transformers runs (torch 2.13 CPU, tiny configs) through attnprof.profile -> sidecar -> Report,
where each kind must get its own verdict and fix (docs/heads.md, "Mask kinds")."""
from __future__ import annotations

import torch
import transformers as tf

import attnprof
from attnprof import _capture

CPU = [torch.profiler.ProfilerActivity.CPU]
B, S, HIDDEN, HEADS, LAYERS = 2, 16, 64, 4, 2
SMALL = dict(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=128)
KEYS = torch.arange(S)[None, :]
QUERIES = torch.arange(S)[:, None]
CAUSAL = KEYS <= QUERIES


def pattern(mask: torch.Tensor) -> str:
    return _capture.tensor_mask_pattern(mask, mask.shape[-2], mask.shape[-1])


def test_causal_window_padding_and_document_masks_are_told_apart():
    valid = torch.ones(B, S, dtype=torch.bool)
    valid[1, :5] = False  # left padding of the second sequence
    padded = (CAUSAL[None] & valid[:, None, :])[:, None]
    window = (CAUSAL & (KEYS > QUERIES - 4))[None, None]
    docs = torch.tensor([0] * 6 + [1] * 10)
    document = (CAUSAL & (docs[:, None] == docs[None, :]))[None, None]
    assert pattern(CAUSAL[None, None].expand(B, 1, S, S)) == "causal"
    assert pattern(padded) == "padding"
    assert pattern(window) == "sliding_window"
    assert pattern(document) == "block"
    assert pattern(valid[:, None, None, :].expand(B, 1, S, S)) == "padding"  # bidirectional (BERT) padding
    assert pattern(torch.ones(1, 1, S, S, dtype=torch.bool)) == "full"


def test_float_masks_with_graded_scores_are_a_bias_and_random_masks_arbitrary():
    alibi = -(QUERIES - KEYS).abs().float()[None, None]
    assert pattern(alibi) == "bias"
    zero_or_min = torch.zeros(S, S).masked_fill(~CAUSAL, torch.finfo(torch.float32).min)[None, None]
    assert pattern(zero_or_min) == "causal"  # 0 / -inf floats are a boolean mask
    scattered = torch.rand(1, 1, S, S, generator=torch.Generator().manual_seed(0)) > 0.5
    scattered[..., 0] = True
    assert pattern(scattered) == "arbitrary"


def profiled_report(model, **inputs):
    with torch.no_grad(), attnprof.profile(attention_profile=True, activities=CPU, record_shapes=True) as prof:
        model(**inputs)
    return prof.attention_report()


def verdicts(report) -> list[dict]:
    return report.data["heads"]["sliding_window"]


def test_padded_llama_batch_gets_padding_advice_and_no_window_advice():
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=100, num_key_value_heads=2, attn_implementation="sdpa",
                                               **SMALL)).eval()
    attention_mask = torch.ones(B, S, dtype=torch.long)
    attention_mask[1, :5] = 0
    report = profiled_report(model, input_ids=torch.randint(0, 100, (B, S)), attention_mask=attention_mask)
    found = verdicts(report)
    assert [v["mask_kind"] for v in found] == ["padding"] * LAYERS
    assert all("unpad" in v["verdict"] and "window_size" not in v["verdict"] for v in found)
    rules = {f["rule"] for f in report.findings}
    assert "heads.sliding_window" not in rules


def test_mistral_window_shorter_than_the_sequence_keeps_window_advice():
    torch.manual_seed(0)
    model = tf.MistralForCausalLM(tf.MistralConfig(vocab_size=100, num_key_value_heads=2, sliding_window=8,
                                                   attn_implementation="sdpa", **SMALL)).eval()
    report = profiled_report(model, input_ids=torch.randint(0, 100, (B, S)))
    found = verdicts(report)
    assert [v["mask_kind"] for v in found] == ["sliding_window"] * LAYERS
    assert all(v["window"] == 8 and "window_size" in v["verdict"] for v in found)
