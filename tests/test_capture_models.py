"""Live capture end to end: real torch 2.13 (CPU) runs of real transformers architectures (tiny
configs, random weights) and hand-written modules, through attnprof.profile -> trace + sidecar
-> C++ core -> Report. Each test asserts what it built: module paths, shapes, the backend
PyTorch chose (torch._fused_sdp_choice, asked by the test itself with the same tensors) and
the backend in the Report."""
from __future__ import annotations

import json
import math
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import transformers as tf

import attnprof
from attnprof import _capture

CPU = [torch.profiler.ProfilerActivity.CPU]
B, S, HIDDEN, HEADS, LAYERS = 2, 16, 64, 4, 2
D = HIDDEN // HEADS
SMALL = dict(hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS, intermediate_size=128)


def sdp_choice(q, k, v, mask=None, causal=False, gqa=False) -> str:
    code = torch._fused_sdp_choice(q, k, v, mask, 0.0, causal, enable_gqa=gqa)
    return torch.nn.attention.SDPBackend(code).name


def run_profiled(fn, **prof_kwargs):
    prof_kwargs.setdefault("activities", CPU)
    prof_kwargs.setdefault("record_shapes", True)
    with attnprof.profile(attention_profile=True, **prof_kwargs) as prof:
        out = fn()
    return out, prof, prof.attention_report()


def forward_calls(report):
    return [c for c in report.calls if c["direction"] != "backward"]


def shape_of(call):
    s = call["shape"]
    return (s["B"], s["Hq"], s["Hkv"], s["Sq"], s["Skv"], s["D"])


def ids(seed=0, batch=B, seq=S):
    return torch.randint(0, 100, (batch, seq), generator=torch.Generator().manual_seed(seed))


def build(cls, config):
    torch.manual_seed(0)
    return cls(config).eval()


def assert_self_attention_layers(report, paths, shape, interface, choice, backend):
    calls = forward_calls(report)
    assert [c["module"] for c in calls] == paths
    for c in calls:
        assert c["source"] == "trace+capture"
        assert shape_of(c) == shape
        assert c["capture"]["interface"] == interface
        assert c["capture"]["pytorch_choice"] == choice
        assert c["backend"] == backend
    assert [layer["module"] for layer in report.layers] == paths


# ---- transformers models --------------------------------------------------------------------

def test_gpt2_sdpa_layers_have_module_paths_causal_flag_and_cpu_flash_choice():
    model = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, vocab_size=100,
                                                    n_positions=64, attn_implementation="sdpa"))
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(ids()))
    q = torch.randn(B, HEADS, S, D)
    expected = sdp_choice(q, q, q, causal=True)
    assert expected == "FLASH_ATTENTION"  # CPU flash: fp32, no mask, causal flag
    assert_self_attention_layers(report, ["transformer.h.0.attn", "transformer.h.1.attn"],
                                 (B, HEADS, HEADS, S, S, D), "transformers.sdpa", expected, "cpu_flash")
    for c in forward_calls(report):
        assert c["causal"] is True
        assert c["mask"]["kind"] == "none"
        assert c["capture"]["last_dim_contiguous"] is True
    # the capture gave every call its module path: the Report must not claim they are missing
    assert not any("no module paths" in line for line in report.source["missing"])


def test_gpt2_eager_calls_are_eager_with_a_float_mask_and_no_sdpa_choice():
    model = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, vocab_size=100,
                                                    n_positions=64, attn_implementation="eager"))
    with torch.no_grad():
        _, prof, report = run_profiled(lambda: model(ids()))
    assert_self_attention_layers(report, ["transformer.h.0.attn", "transformer.h.1.attn"],
                                 (B, HEADS, HEADS, S, S, D), "transformers.eager", "", "eager")
    # eager gets transformers' materialised causal mask (additive float, finfo.min above the diagonal)
    assert [r["mask"] for r in prof.capture.records] == [{"kind": "float", "shape": [B, 1, S, S], "dtype": "float32",
                                                   "window": 0, "pattern": "causal"}] * 2  # no window


def test_bert_padding_mask_reaches_sdpa_as_a_4d_bool_mask():
    model = build(tf.BertModel, tf.BertConfig(vocab_size=100, max_position_embeddings=64,
                                              attn_implementation="sdpa", **SMALL))
    mask = torch.ones(B, S, dtype=torch.long)
    mask[1, 10:] = 0
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(ids(), attention_mask=mask))
    q = torch.randn(B, HEADS, S, D)
    bool_mask = torch.ones(B, 1, S, S, dtype=torch.bool)
    expected = sdp_choice(q, q, q, mask=bool_mask)
    paths = [f"encoder.layer.{i}.attention.self" for i in range(LAYERS)]
    assert_self_attention_layers(report, paths, (B, HEADS, HEADS, S, S, D), "transformers.sdpa",
                                 expected, "cpu_flash" if expected == "FLASH_ATTENTION" else "math")
    for c in forward_calls(report):
        assert c["mask"]["kind"] == "bool"
        assert c["mask"]["dims"] == [B, 1, S, S]
        assert c["causal"] is False


def test_llama_gqa_without_mask_uses_enable_gqa_with_fewer_kv_heads():
    model = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="sdpa", **SMALL))
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(ids()))
    q, kv = torch.randn(B, HEADS, S, D), torch.randn(B, 2, S, D)
    expected = sdp_choice(q, kv, kv, causal=True, gqa=True)
    paths = [f"model.layers.{i}.self_attn" for i in range(LAYERS)]
    assert_self_attention_layers(report, paths, (B, HEADS, 2, S, S, D), "transformers.sdpa", expected,
                                 "cpu_flash" if expected == "FLASH_ATTENTION" else "math")
    for c in forward_calls(report):
        assert c["gqa"] is True
        assert c["capture"]["enable_gqa"] is True
        assert c["scale"] == pytest.approx(1 / math.sqrt(D))


def test_vit_patches_plus_cls_token_make_the_sequence():
    model = build(tf.ViTModel, tf.ViTConfig(image_size=32, patch_size=8, attn_implementation="sdpa", **SMALL))
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(torch.randn(B, 3, 32, 32)))
    tokens = (32 // 8) ** 2 + 1
    q = torch.randn(B, HEADS, tokens, D)
    paths = [f"layers.{i}.attention" for i in range(LAYERS)]
    expected = sdp_choice(q, q, q)
    assert_self_attention_layers(report, paths, (B, HEADS, HEADS, tokens, tokens, D), "transformers.sdpa",
                                 expected, "cpu_flash" if expected == "FLASH_ATTENTION" else "math")


def test_mistral_sliding_window_shorter_than_sequence_materialises_a_bool_mask():
    window = 8  # < S: transformers builds the banded mask instead of passing is_causal
    model = build(tf.MistralForCausalLM, tf.MistralConfig(vocab_size=100, num_key_value_heads=2,
                                                          sliding_window=window, attn_implementation="sdpa",
                                                          **SMALL))
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(ids()))
    calls = forward_calls(report)
    assert [c["module"] for c in calls] == [f"model.layers.{i}.self_attn" for i in range(LAYERS)]
    for c in calls:
        assert c["mask"]["kind"] == "bool"
        assert c["mask"]["dims"] == [B, 1, S, S]
        assert c["causal"] is False
        # With a mask, transformers expands K/V to all heads (repeat_kv) instead of enable_gqa.
        assert shape_of(c) == (B, HEADS, HEADS, S, S, D)
        assert c["capture"]["enable_gqa"] is False


def test_bart_cross_attention_has_decoder_queries_and_encoder_keys():
    config = tf.BartConfig(vocab_size=100, d_model=HIDDEN, encoder_layers=1, decoder_layers=1,
                           encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
                           encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64,
                           attn_implementation="sdpa")
    model = build(tf.BartModel, config)
    src, tgt = 12, 5
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(input_ids=ids(seq=src), decoder_input_ids=ids(1, seq=tgt)))
    calls = {c["module"]: c for c in forward_calls(report)}
    assert set(calls) == {"encoder.layers.0.self_attn", "decoder.layers.0.self_attn",
                          "decoder.layers.0.encoder_attn"}
    assert shape_of(calls["encoder.layers.0.self_attn"]) == (B, HEADS, HEADS, src, src, D)
    assert shape_of(calls["decoder.layers.0.self_attn"]) == (B, HEADS, HEADS, tgt, tgt, D)
    cross = calls["decoder.layers.0.encoder_attn"]
    assert shape_of(cross) == (B, HEADS, HEADS, tgt, src, D)
    assert cross["cross"] is True
    assert calls["decoder.layers.0.self_attn"]["causal"] is True
    assert cross["causal"] is False


# ---- hand-written modules ---------------------------------------------------------------------

class _QkvAttention(nn.Module):
    """One fused QKV projection; subclasses say how the [B, H, S, D] heads attend."""

    def __init__(self, dim=HIDDEN, heads=HEADS):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        return self.attend(q, k, v).transpose(1, 2).reshape(b, s, -1)


class SdpaBlock(_QkvAttention):
    def attend(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class NaiveAttention(_QkvAttention):
    def attend(self, q, k, v):
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        return weights @ v


class TwoBlocks(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.blocks = nn.ModuleList([block(), block()])

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x)
        return x


def test_hand_written_sdpa_call_is_captured_with_its_module_path():
    torch.manual_seed(0)
    model = TwoBlocks(SdpaBlock).eval()
    x = torch.randn(B, S, HIDDEN)
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(x))
    q = torch.randn(B, HEADS, S, D)
    expected = sdp_choice(q, q, q, causal=True)
    calls = forward_calls(report)
    assert [c["module"] for c in calls] == ["blocks.0", "blocks.1"]
    for c in calls:
        assert c["capture"]["interface"] == "F.scaled_dot_product_attention"
        assert c["capture"]["pytorch_choice"] == expected
        assert shape_of(c) == (B, HEADS, HEADS, S, S, D)
        # permute() leaves q/k/v non-contiguous but the last dim has stride 1
        assert c["capture"]["last_dim_contiguous"] is True


def test_hand_written_naive_attention_is_named_by_its_module_range():
    torch.manual_seed(0)
    model = TwoBlocks(NaiveAttention).eval()
    with torch.no_grad():
        _, prof, report = run_profiled(lambda: model(torch.randn(B, S, HIDDEN)))
    assert prof.capture.records == []  # no SDPA, no transformers interface: nothing to intercept
    calls = forward_calls(report)
    assert [c["module"] for c in calls] == ["blocks.0", "blocks.1"]
    for c in calls:
        assert c["backend"] == "eager"
        assert c["source"] == "trace+capture"
        assert "capture" not in c or c["capture"] is None


class ScaledDotProductAttention(nn.Module):
    """The parameterless leaf attention of many hand-written transformers."""

    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ v


class LeafAttention(_QkvAttention):
    def __init__(self):
        super().__init__()
        self.inner = ScaledDotProductAttention()

    def attend(self, q, k, v):
        return self.inner(q, k, v)


def module_ranges(prof, tmp_path) -> set[str]:
    """The module paths of the trace's module ranges (the trace attention_report() exported)."""
    if prof.last_trace_path is None:
        prof.export_chrome_trace(str(tmp_path / "trace.json"))
    with open(prof.last_trace_path) as f:
        names = {e.get("name", "") for e in json.load(f)["traceEvents"]}
    return {n.removeprefix(_capture.MODULE_PREFIX) for n in names if n.startswith(_capture.MODULE_PREFIX)}


def test_only_modules_whose_own_code_can_start_attention_get_a_module_range(tmp_path):
    # GPT-2's Conv1D projections, activation, MLP and block, LLaMA's RMSNorms, SiLU, rotary
    # embedding, MLP and decoder layer start no attention call in their own code.
    gpt2 = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=1, n_head=HEADS, vocab_size=100,
                                                   n_positions=64, attn_implementation="eager"))
    llama = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="eager", **{**SMALL, "num_hidden_layers": 1}))
    ranges = []
    for model in (gpt2, llama):
        with torch.no_grad(), attnprof.profile(activities=CPU) as prof:
            model(ids())
        ranges.append(module_ranges(prof, tmp_path))
    assert ranges[0] == {"GPT2LMHeadModel", "transformer", "transformer.h.0.attn"}
    assert ranges[1] == {"LlamaForCausalLM", "model", "model.layers.0.self_attn"}


class AttendingActivation(nn.Module):
    """A hand-written attention over its input's heads, put where GPT-2's MLP activation was."""

    def forward(self, x):
        b, s, _ = x.shape
        q = x.view(b, s, HEADS, -1).transpose(1, 2)
        out = torch.softmax(q @ q.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ q
        return out.transpose(1, 2).reshape(b, s, -1)


def test_an_attention_inside_a_block_without_a_range_is_named_by_its_own_module(tmp_path):
    model = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=1, n_head=HEADS, vocab_size=100,
                                                    n_positions=64, attn_implementation="eager"))
    model.transformer.h[0].mlp.act = AttendingActivation()
    with torch.no_grad():
        _, prof, report = run_profiled(lambda: model(ids()))
    assert [c["module"] for c in forward_calls(report)] == ["transformer.h.0.attn", "transformer.h.0.mlp.act"]
    assert module_ranges(prof, tmp_path) == {"GPT2LMHeadModel", "transformer", "transformer.h.0.attn",
                                             "transformer.h.0.mlp.act"}


def test_a_listed_block_keeps_its_range_when_a_torch_layer_with_submodules_is_below_it():
    block = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=1, n_head=HEADS, vocab_size=100,
                                                    n_positions=64)).transformer.h[0]
    assert _capture.starts_no_attention(block) and _capture.starts_no_attention(block.mlp)
    block.mlp.act = nn.Sequential(nn.GELU())  # a torch container calls what it holds, unranged
    assert not _capture.starts_no_attention(block.mlp) and not _capture.starts_no_attention(block)
    block.mlp.act = nn.MultiheadAttention(HIDDEN, HEADS)  # attends without SDPA when need_weights
    assert not _capture.starts_no_attention(block.mlp)


def test_a_class_named_for_attention_is_never_taken_from_a_pattern():
    attention_block = type("VQVAEAttnBlock", (nn.Module,), {"__module__": "transformers.models.x.modeling_x"})
    plain_block = type("VQVAEResBlock", (nn.Module,), {"__module__": "transformers.models.x.modeling_x"})
    assert not _capture.starts_no_attention(attention_block())
    assert _capture.starts_no_attention(plain_block())


def test_a_parameterless_leaf_attention_module_keeps_its_range_and_names_its_calls(tmp_path):
    torch.manual_seed(0)
    model = TwoBlocks(LeafAttention).eval()
    with torch.no_grad():
        _, prof, report = run_profiled(lambda: model(torch.randn(B, S, HIDDEN)))
    assert [c["module"] for c in forward_calls(report)] == ["blocks.0.inner", "blocks.1.inner"]
    assert {"blocks.0.inner", "blocks.1.inner"} <= module_ranges(prof, tmp_path)


def test_a_listed_class_keeps_its_range_when_subclassed_elsewhere_or_its_forward_replaced():
    from transformers.pytorch_utils import Conv1D

    class OwnProjection(Conv1D):  # a subclass outside transformers may do anything in forward
        pass

    replaced = Conv1D(HIDDEN, HIDDEN)
    replaced.forward = lambda x: x  # accelerate's hooks and users' patches replace it this way
    assert _capture.starts_no_attention(Conv1D(HIDDEN, HIDDEN))
    assert not _capture.starts_no_attention(OwnProjection(HIDDEN, HIDDEN))
    assert not _capture.starts_no_attention(replaced)


def test_module_calls_are_followed_without_global_hooks_and_given_back_after_an_error():
    # A global forward hook would send every module call, torch's own layers too, down the hook
    # path of Module._call_impl; the capture follows module calls without one, and leaves torch's
    # own _call_impl and an empty module stack behind, also when the user's module raised.
    original = nn.Module._call_impl
    seen = {}

    class Failing(nn.Module):
        def forward(self, x):
            hooks = torch.nn.modules.module
            seen["global hooks"] = len(hooks._global_forward_pre_hooks) + len(hooks._global_forward_hooks)
            seen["torch's own call"] = nn.Module._call_impl is original
            raise ValueError("the user's own error")

    with attnprof.profile(activities=CPU) as prof, pytest.raises(ValueError, match="the user's own error"):
        Failing()(torch.zeros(1))
    assert seen == {"global hooks": 0, "torch's own call": False}
    assert nn.Module._call_impl is original
    assert prof.capture.modules == []


def test_sdpa_imported_under_its_own_name_is_captured_and_given_back(tmp_path, monkeypatch):
    # A model file that binds the function at import (`from torch.nn.functional import ...`)
    # calls it without looking it up in torch.nn.functional.
    (tmp_path / "own_sdpa_model.py").write_text(
        "import torch\n"
        "from torch.nn.functional import scaled_dot_product_attention\n"
        "class Attend(torch.nn.Module):\n"
        "    def forward(self, q):\n"
        "        return scaled_dot_product_attention(q, q, q, is_causal=True)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import own_sdpa_model
    model = own_sdpa_model.Attend()
    q = torch.randn(B, HEADS, S, D)
    with torch.no_grad():
        _, prof, report = run_profiled(lambda: model(q))
    assert [r["interface"] for r in prof.capture.records] == ["F.scaled_dot_product_attention"]
    assert [c["capture"]["pytorch_choice"] for c in forward_calls(report)] == [sdp_choice(q, q, q, causal=True)]
    assert own_sdpa_model.scaled_dot_product_attention is torch._C._nn.scaled_dot_product_attention
    assert F.scaled_dot_product_attention is torch._C._nn.scaled_dot_product_attention


def test_heads_and_sidecar_records_come_from_one_installed_capture():
    model = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="sdpa", **SMALL))
    wrappers = []
    model.model.layers[0].register_forward_pre_hook(
        lambda *_: wrappers.append(F.scaled_dot_product_attention.__wrapped__))
    with torch.no_grad(), attnprof.profile(activities=CPU, record_shapes=True, heads=True) as prof:
        model(ids())
    # one wrapper around torch's own function, not one per capture
    assert wrappers == [torch._C._nn.scaled_dot_product_attention]
    assert len(prof.capture.records) == LAYERS
    assert len(prof.capture.calls) == LAYERS  # the same object holds the heads' Q/K/V copies
    report = prof.attention_report()
    assert [c["module"] for c in forward_calls(report)] == [f"model.layers.{i}.self_attn" for i in range(LAYERS)]
    assert report.data["heads"]


# ---- training and generation ----------------------------------------------------------------

def test_training_step_pairs_each_forward_call_with_its_backward():
    model = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="sdpa", **SMALL)).train()
    x = ids()

    def step():
        loss = model(x, labels=x).loss
        loss.backward()
        return loss

    _, _, report = run_profiled(step)
    fwd = forward_calls(report)
    bwd = [c for c in report.calls if c["direction"] == "backward"]
    assert len(fwd) == LAYERS and len(bwd) == LAYERS
    for c in fwd:
        assert c["capture"]["requires_grad"] is True
        partner = report.calls[c["pair_id"]]
        assert partner["direction"] == "backward"
        assert partner["module"] == c["module"]
        assert partner["capture"]["pytorch_choice"] == c["capture"]["pytorch_choice"]


def test_generate_tells_prefill_from_decode():
    model = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="sdpa", **SMALL))
    new_tokens = 3
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model.generate(ids(batch=1), max_new_tokens=new_tokens,
                                                           min_new_tokens=new_tokens, do_sample=False))
    calls = forward_calls(report)
    # one prefill forward (S tokens) then new_tokens - 1 decode forwards (1 token, growing cache)
    assert [c["phase"] for c in calls] == ["prefill"] * LAYERS + ["decode"] * LAYERS * (new_tokens - 1)
    assert [c["shape"]["Sq"] for c in calls] == [S] * LAYERS + [1] * LAYERS * (new_tokens - 1)
    assert [c["shape"]["Skv"] for c in calls[LAYERS:]] == [S + 1] * LAYERS + [S + 2] * LAYERS
    assert all(c["decode"] for c in calls[LAYERS:])


def test_schedule_writes_one_sidecar_per_cycle_with_that_cycles_calls(tmp_path):
    torch.manual_seed(0)
    model = TwoBlocks(SdpaBlock).eval()
    x = torch.randn(1, 8, HIDDEN)
    sched = torch.profiler.schedule(wait=1, warmup=0, active=1, repeat=2)
    with torch.no_grad(), attnprof.profile(activities=CPU, schedule=sched,
                                           on_trace_ready=attnprof.trace_handler(str(tmp_path))) as prof:
        for _ in range(4):
            model(x)
            prof.step()
    traces = sorted(tmp_path.glob("*.pt.trace.json"))
    assert len(traces) == 2
    for trace in traces:
        report = attnprof.analyze(trace)
        assert [c["module"] for c in forward_calls(report)] == ["blocks.0", "blocks.1"]
        assert (trace.parent / (trace.name + ".report.json")).exists()
    # One step each, the cycle's profiler step: steps[] names it, calls[].step indexes steps[].
    reports = [json.loads(attnprof.analyze(t).to_json()) for t in traces]
    assert [[s["marker"] for s in r["steps"]] for r in reports] == [["ProfilerStep#1"], ["ProfilerStep#3"]]
    assert all({c["step"] for c in r["calls"]} == {0} for r in reports)


# ---- non-negotiables --------------------------------------------------------------------------

def test_outputs_are_bit_identical_with_and_without_profiling():
    model = build(tf.LlamaForCausalLM, tf.LlamaConfig(vocab_size=100, num_key_value_heads=2,
                                                      attn_implementation="sdpa", **SMALL))
    x = ids()
    with torch.no_grad():
        plain = model(x).logits
        tokens = model.generate(x[:1], max_new_tokens=3, do_sample=False)
        with attnprof.profile(activities=CPU, record_shapes=True):
            profiled = model(x).logits
            profiled_tokens = model.generate(x[:1], max_new_tokens=3, do_sample=False)
    assert torch.equal(plain, profiled)
    assert torch.equal(tokens, profiled_tokens)


def test_an_exception_inside_a_hook_is_warned_once_and_the_run_continues(monkeypatch):
    model = build(tf.GPT2LMHeadModel, tf.GPT2Config(n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS, vocab_size=100,
                                                    n_positions=64, attn_implementation="sdpa"))
    x = ids()
    with torch.no_grad():
        reference = model(x).logits

    def broken(_t):
        raise RuntimeError("forced failure in attnprof's bookkeeping")

    monkeypatch.setattr(_capture, "_describe_tensor", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.no_grad(), attnprof.profile(activities=CPU) as prof:
            out = model(x).logits
    ours = [w for w in caught if issubclass(w.category, _capture.HookError)]
    assert len(ours) == 1
    assert "forced failure" in str(ours[0].message)
    assert torch.equal(out, reference)
    assert prof.capture.warnings and all("forced failure" in w for w in prof.capture.warnings)
    report = prof.attention_report()
    assert any("forced failure" in line for line in report.source["missing"])


def test_user_exceptions_inside_attention_still_reach_the_user():
    q = torch.randn(1, 2, 4, 8)
    with attnprof.profile(activities=CPU), pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, q[..., :5], q)  # query and key head dims differ


def test_analyze_accepts_a_plain_torch_profiler_and_a_trace_path(tmp_path):
    torch.manual_seed(0)
    model = TwoBlocks(SdpaBlock).eval()
    x = torch.randn(B, S, HIDDEN)
    with torch.no_grad(), torch.profiler.profile(activities=CPU, record_shapes=True) as plain:
        model(x)
    report = attnprof.analyze(plain)
    assert len(forward_calls(report)) == 2
    assert all(c["source"] == "trace" for c in report.calls)  # no capture without attnprof.profile
    assert len(forward_calls(attnprof.analyze(plain))) == 2  # torch saves once; attnprof reuses it
    with torch.no_grad(), torch.profiler.profile(activities=CPU, record_shapes=True) as second:
        model(x)
    path = tmp_path / "plain.json"
    second.export_chrome_trace(str(path))
    assert len(forward_calls(attnprof.analyze(path))) == 2


def test_report_saves_json_markdown_and_html(tmp_path):
    torch.manual_seed(0)
    model = TwoBlocks(SdpaBlock).eval()
    with torch.no_grad():
        _, _, report = run_profiled(lambda: model(torch.randn(B, S, HIDDEN)))
    report.save_json(tmp_path / "r.json")
    report.save_markdown(tmp_path / "r.md")
    report.save_html(tmp_path / "r.html")
    assert '"trace+capture"' in (tmp_path / "r.json").read_text()
    assert "blocks.0" in (tmp_path / "r.md").read_text()
    assert (tmp_path / "r.html").read_text().lstrip().lower().startswith("<!doctype html")


def test_a_hub_function_module_gets_a_range_only_when_its_function_can_start_attention(tmp_path):
    # transformers > 5.24 calls apply_rotary_pos_emb through a `kernels` hub function module
    # (use_kernel_forward_from_hub on a function: one Func nn.Module class per function, its
    # forward calling the function it closes over). Built here with the real `kernels` package.
    kernels = pytest.importorskip("kernels")

    @kernels.use_kernel_forward_from_hub("AttnprofTestRotateHalf")
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    @kernels.use_kernel_forward_from_hub("AttnprofTestAttention")
    def attention_forward(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    assert isinstance(rotate_half, nn.Module) and isinstance(attention_forward, nn.Module)
    assert _capture.starts_no_attention(rotate_half)
    assert not _capture.starts_no_attention(attention_forward)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.rope = rotate_half
            self.attend = attention_forward

        def forward(self, x):
            q = self.rope(x)
            return self.attend(q, x, x)

    model = Layer()
    with torch.no_grad(), attnprof.profile(activities=CPU) as prof:
        model(torch.randn(1, 2, 16, 8))
    assert module_ranges(prof, tmp_path) == {"Layer", "attend"}
    report = json.loads(prof.attention_report().to_json())
    assert len(report["calls"]) == 1
