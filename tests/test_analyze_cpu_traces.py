"""`attnprof analyze` on traces this test records itself with torch on CPU.

Tiny transformers models (2 layers, hidden 64, 4 heads), randomly initialised, run once
under torch.profiler(record_shapes=True); the Report must name the backend torch itself
dispatched to (cpu_flash or math for SDPA, eager for attn_implementation="eager"), one
call per layer, with the shapes the model really used.
"""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LAYERS, HIDDEN, HEADS = 2, 64, 4
HEAD_DIM = HIDDEN // HEADS
BATCH, SEQ = 2, 24
CPU_SDPA_OPS = {
    "aten::_scaled_dot_product_flash_attention_for_cpu": "cpu_flash",
    "aten::_scaled_dot_product_attention_math": "math",
}


def tiny_model(kind: str, attn: str):
    t = transformers
    if kind == "gpt2":
        cfg = t.GPT2Config(n_layer=LAYERS, n_embd=HIDDEN, n_head=HEADS, vocab_size=128, n_positions=64,
                             bos_token_id=0, eos_token_id=0)
        model = t.GPT2Model._from_config(cfg, attn_implementation=attn)
    elif kind == "bert":
        cfg = t.BertConfig(num_hidden_layers=LAYERS, hidden_size=HIDDEN, num_attention_heads=HEADS,
                           intermediate_size=128, vocab_size=128, max_position_embeddings=64)
        model = t.BertModel._from_config(cfg, attn_implementation=attn)
    elif kind == "llama":
        cfg = t.LlamaConfig(num_hidden_layers=LAYERS, hidden_size=HIDDEN, num_attention_heads=HEADS,
                            num_key_value_heads=2, intermediate_size=128, vocab_size=128,
                            max_position_embeddings=64)
        model = t.LlamaModel._from_config(cfg, attn_implementation=attn)
    elif kind == "vit":
        cfg = t.ViTConfig(num_hidden_layers=LAYERS, hidden_size=HIDDEN, num_attention_heads=HEADS,
                          intermediate_size=128, image_size=32, patch_size=8)
        model = t.ViTModel._from_config(cfg, attn_implementation=attn)
    else:
        raise ValueError(kind)
    return model.eval()


def model_inputs(kind: str):
    torch.manual_seed(0)
    if kind == "vit":
        return {"pixel_values": torch.randn(BATCH, 3, 32, 32)}
    return {"input_ids": torch.randint(0, 128, (BATCH, SEQ))}


def expected_seq(kind: str) -> int:
    return (32 // 8) ** 2 + 1 if kind == "vit" else SEQ


def record(tmp_path, kind: str, attn: str, with_stack: bool = False):
    """Runs one forward pass under the profiler; returns (trace path, op names torch recorded)."""
    model = tiny_model(kind, attn)
    inputs = model_inputs(kind)
    with torch.no_grad():
        model(**inputs)  # warm-up outside the profiler
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                    with_stack=with_stack) as prof:
            model(**inputs)
    path = tmp_path / f"{kind}_{attn}.pt.trace.json"
    prof.export_chrome_trace(str(path))
    names = {e.key for e in prof.key_averages()}
    return path, names


def analyze(run_cli, tmp_path, trace):
    out = tmp_path / (trace.stem + ".report.json")
    proc = run_cli("analyze", trace, "--json", out, check_code=0)
    return json.loads(out.read_text()), proc.stdout


@pytest.mark.parametrize("kind", ["gpt2", "bert", "llama", "vit"])
def test_sdpa_names_the_cpu_backend_torch_dispatched(run_cli, tmp_path, kind):
    trace, names = record(tmp_path, kind, "sdpa")
    dispatched = [backend for op, backend in CPU_SDPA_OPS.items() if op in names]
    assert len(dispatched) == 1, names
    report, stdout = analyze(run_cli, tmp_path, trace)
    calls = report["calls"]
    assert [c["layer"] for c in calls] == list(range(LAYERS))
    for c in calls:
        assert c["backend"] == dispatched[0]
        assert c["op"] == "aten::scaled_dot_product_attention"
        assert c["fused"] == (dispatched[0] == "cpu_flash")
        assert c["shape"]["B"] == BATCH
        assert c["shape"]["Hq"] == HEADS
        assert c["shape"]["Sq"] == expected_seq(kind)
        assert c["shape"]["D"] == HEAD_DIM
        assert c["shape"]["dtype"] == "fp32"
        assert c["device_time_us"] > 0  # CPU time of the op: the trace has no GPU
    assert report["summary"]["has_gpu"] is False
    assert "Activation map" in stdout


@pytest.mark.parametrize("kind", ["gpt2", "bert", "llama", "vit"])
def test_eager_attention_is_one_unfused_call_per_layer(run_cli, tmp_path, kind):
    trace, names = record(tmp_path, kind, "eager")
    assert "aten::scaled_dot_product_attention" not in names
    report, stdout = analyze(run_cli, tmp_path, trace)
    calls = report["calls"]
    assert [c["layer"] for c in calls] == list(range(LAYERS))
    for c in calls:
        assert c["backend"] == "eager"
        assert c["fused"] is False
        assert c["shape"]["Sq"] == c["shape"]["Skv"] == expected_seq(kind)
        assert c["shape"]["D"] == HEAD_DIM
        assert c["shape"]["B"] * c["shape"]["Hq"] == BATCH * HEADS
    assert report["summary"]["fused_call_fraction"] == 0
    assert stdout.index("Unfused attention calls") < stdout.index("Activation map")


def test_stack_trace_gives_module_paths(run_cli, tmp_path):
    trace, _ = record(tmp_path, "gpt2", "eager", with_stack=True)
    report, _ = analyze(run_cli, tmp_path, trace)
    modules = [c["module"] for c in report["calls"]]
    assert len(modules) == LAYERS
    for i, m in enumerate(modules):
        assert m.endswith(f"GPT2Attention_{i}"), m


def test_trace_without_attention_says_so(run_cli, tmp_path):
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(8, 16)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        torch.log_softmax(mlp(x), dim=-1)
    trace = tmp_path / "mlp.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    report, stdout = analyze(run_cli, tmp_path, trace)
    assert report["calls"] == []
    assert "no attention found" in stdout


@pytest.mark.parametrize("with_stack", [True, False])
def test_generate_loop_gets_one_step_per_token_with_decode_phase(run_cli, tmp_path, with_stack):
    """GPT-2 generate() with a KV cache: a prefill pass, then one pass per new token (Sq == 1).

    With module paths a pass ends when a module runs again; without, when (Sq, Skv) changes."""
    model = tiny_model("gpt2", "sdpa")
    inputs = model_inputs("gpt2")
    new_tokens = 3
    generator = transformers.GPT2LMHeadModel._from_config(model.config, attn_implementation="sdpa").eval()
    with torch.no_grad():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                    with_stack=with_stack) as prof:
            generator.generate(**inputs, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                               pad_token_id=0)
    trace = tmp_path / "gpt2_generate.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    report, _ = analyze(run_cli, tmp_path, trace)
    calls = report["calls"]
    assert len(calls) == LAYERS * new_tokens
    assert [c["step"] for c in calls] == [s for s in range(new_tokens) for _ in range(LAYERS)]
    assert [c["layer"] for c in calls] == list(range(LAYERS)) * new_tokens
    assert [c["phase"] for c in calls[:LAYERS]] == ["prefill"] * LAYERS
    for step in range(1, new_tokens):
        for c in calls[step * LAYERS:(step + 1) * LAYERS]:
            assert c["phase"] == "decode" and c["decode"] is True
            assert c["shape"]["Sq"] == 1
            assert c["shape"]["Skv"] == SEQ + step


def test_eager_training_pairs_each_autograd_backward_with_its_forward_layer(run_cli, tmp_path):
    """Eager attention's backward runs node by node (SoftmaxBackward0, BmmBackward0, ...);
    the nodes carrying the Sequence numbers of one forward call make one backward call."""
    model = tiny_model("gpt2", "eager").train()
    inputs = model_inputs("gpt2")
    model(**inputs).last_hidden_state.sum().backward()  # warm-up
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        model(**inputs).last_hidden_state.sum().backward()
    trace = tmp_path / "gpt2_eager_train.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    report, _ = analyze(run_cli, tmp_path, trace)
    calls = report["calls"]
    forward = [c for c in calls if c["direction"] == "forward"]
    backward = [c for c in calls if c["direction"] == "backward"]
    assert [c["layer"] for c in forward] == list(range(LAYERS))
    assert sorted(c["layer"] for c in backward) == list(range(LAYERS))
    for b in backward:
        f = calls[b["pair_id"]]
        assert f["direction"] == "forward" and f["pair_id"] == b["id"] and f["layer"] == b["layer"]
        assert b["op"] == "SoftmaxBackward0"
        assert b["backend"] == "eager" and b["fused"] is False
        # An unfused backward reads the stored P: four GEMMs, twice the forward (a fused one: 2.5x).
        assert b["flops"] == pytest.approx(2.0 * f["flops"])


def test_flex_attention_without_compile_is_one_unfused_flex_call(run_cli, tmp_path):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    q, k, v = (torch.randn(1, HEADS, 128, HEAD_DIM) for _ in range(3))
    window = create_block_mask(lambda b, h, qi, ki: (qi >= ki) & (qi - ki < 32), 1, HEADS, 128, 128,
                               device="cpu")
    flex_attention(q, k, v, block_mask=window)  # warm-up: the first call traces the op once more
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        flex_attention(q, k, v, block_mask=window)
    trace = tmp_path / "flex.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    report, _ = analyze(run_cli, tmp_path, trace)
    assert [c["backend"] for c in report["calls"]] == ["flex"]
    call = report["calls"][0]
    assert call["fused"] is False
    assert call["op"] == "FlexAttentionAutogradOp"
    assert (call["shape"]["B"], call["shape"]["Hq"], call["shape"]["Sq"], call["shape"]["D"]) == (1, HEADS, 128, HEAD_DIM)


def test_cpu_run_says_ops_not_kernels_and_that_the_roofline_needs_a_gpu_peak(run_cli, tmp_path):
    trace, _ = record(tmp_path, "llama", "eager")
    report, stdout = analyze(run_cli, tmp_path, trace)
    unfused = [f for f in report["findings"] if f["cause"] == "unfused:eager"]
    assert len(unfused) == 1
    assert "separate CPU ops" in unfused[0]["detail"]
    assert "kernel" not in unfused[0]["detail"]
    assert stdout.count("roofline: needs a GPU peak") == 1
    assert "% peak" not in stdout


def test_predict_prints_attention_apart_from_the_whole_forward_pass(run_cli):
    out = run_cli("predict", "--model", "llama-2-7b", "--batch", "16", "--gpu", "A100-80GB", "--lengths", "512",
                  check_code=0).stdout
    header = next(line for line in out.splitlines() if "attention time (us)" in line)
    assert "forward pass time (us)" in header
    row = next(line for line in out.splitlines() if line.strip().startswith("512"))
    attention, whole = (float(x) for x in row.split()[1:3])
    # Projections and MLP dominate a 7B pass at S=512: attention is a small part of it.
    assert 0 < attention < 0.2 * whole
