"""Eager attention that transformers does not write, recorded with torch on CPU.

Each test runs a small module once under torch.profiler(record_shapes=True) and checks what
`attnprof analyze` finds: hand-written research attention (matmul, scale, masked_fill with a
tril mask, softmax, matmul) next to an MoE router whose softmax is not attention;
nn.MultiheadAttention's need_weights path (training: bmm/baddbmm, softmax, bmm; inference
fast path: aten::_native_multi_head_attention with the math inside); the same attention
under autocast, where ops are recorded twice, one inside the other.
"""
from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")

B, S, E, HEADS, EXPERTS = 2, 16, 32, 4, 8
D = E // HEADS


class ResearchBlock(torch.nn.Module):
    """Causal self-attention written by hand, then a top-2 MoE router."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(E, 3 * E)
        self.router = torch.nn.Linear(E, EXPERTS)
        self.experts = torch.nn.ModuleList(torch.nn.Linear(E, E) for _ in range(EXPERTS))

    def forward(self, x):
        q, k, v = self.qkv(x).view(B, S, 3, HEADS, D).permute(2, 0, 3, 1, 4)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        causal = torch.tril(torch.ones(S, S, dtype=torch.bool))
        scores = scores.masked_fill(~causal, float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        x = x + torch.matmul(probs, v).transpose(1, 2).reshape(B, S, E)
        gates = torch.softmax(self.router(x), dim=-1)  # [B, S, experts]: a router, not attention
        weights, chosen = torch.topk(gates, 2, dim=-1)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            hit = (chosen == e).any(-1)
            if hit.any():
                out[hit] += expert(x[hit]) * weights[hit][..., :1]
        return out


def record(tmp_path, fn, name):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
    path = tmp_path / f"{name}.json"
    prof.export_chrome_trace(str(path))
    return path


def analyze(run_cli, tmp_path, trace):
    out = tmp_path / "report.json"
    run_cli("analyze", trace, "--json", out, check_code=0)
    return json.loads(out.read_text())


def test_hand_written_masked_attention_is_one_call_and_the_router_is_not(run_cli, tmp_path):
    torch.manual_seed(0)
    block = ResearchBlock().eval()
    x = torch.randn(B, S, E)
    with torch.no_grad():
        trace = record(tmp_path, lambda: block(x), "research")
    report = analyze(run_cli, tmp_path, trace)
    assert len(report["calls"]) == 1, [c["op"] for c in report["calls"]]
    call = report["calls"][0]
    assert call["backend"] == "eager"
    assert (call["shape"]["B"], call["shape"]["Hq"], call["shape"]["Sq"], call["shape"]["Skv"],
            call["shape"]["D"]) == (B, HEADS, S, S, D)
    assert call["mask"]["present"] and call["mask"]["kind"] == "bool"
    # `scores * python_float` records the float as a 0-dim tensor without its value: unknown.
    assert call["scale"] == 0


@pytest.mark.parametrize("training", [True, False])
def test_multihead_attention_with_weights_is_one_unfused_call(run_cli, tmp_path, training):
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(E, HEADS, batch_first=True).train(training)
    x = torch.randn(B, S, E)

    def run():
        with torch.set_grad_enabled(training):
            mha(x, x, x, need_weights=True)

    report = analyze(run_cli, tmp_path, record(tmp_path, run, "mha"))
    forward = [c for c in report["calls"] if c["direction"] == "forward"]
    assert len(forward) == 1, [c["op"] for c in report["calls"]]
    call = forward[0]
    assert not call["fused"]
    assert call["backend"] in ("eager", "math")
    assert call["shape"]["Sq"] == S and call["shape"]["Skv"] == S and call["shape"]["D"] == D
    if not training:  # the fast path: one op with the math inside
        assert call["op"] == "aten::_native_multi_head_attention"
        assert call["shape"]["Hq"] == HEADS and call["shape"]["B"] == B


def test_attention_under_autocast_is_one_call_not_two(run_cli, tmp_path):
    torch.manual_seed(0)
    block = ResearchBlock().eval()
    x = torch.randn(B, S, E)

    def run():
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            block(x)

    report = analyze(run_cli, tmp_path, record(tmp_path, run, "autocast"))
    assert len(report["calls"]) == 1, [c["op"] for c in report["calls"]]
    assert report["calls"][0]["shape"]["Sq"] == S
