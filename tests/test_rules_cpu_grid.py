"""The rules against real torch CPU decisions: a grid of SDPA inputs goes through
torch._fused_sdp_choice (the function SDPA dispatches with) and through
`attnprof explain --inputs --arch cpu --torch <this torch>`; both must agree on every row."""
from __future__ import annotations

import itertools
import json
import random

import pytest

torch = pytest.importorskip("torch")

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp64": torch.float64}
CHOICE = {0: "MATH", 1: "FLASH_ATTENTION"}
B, HQ = 2, 8


def _tensor(shape, dtype, grad, last_stride=1):
    if last_stride == 1:
        t = torch.randn(*shape, dtype=dtype)
    else:  # same shape, stride(-1) != 1
        t = torch.randn(*shape[:-1], shape[-1] * last_stride, dtype=dtype)[..., ::last_stride]
    return t.requires_grad_(grad)


def _mask(kind, dims, dtype):
    if kind == "none":
        return None
    if kind == "bool":
        return torch.ones(*dims, dtype=torch.bool)
    return torch.zeros(*dims, dtype=dtype)


def _row(hd, hd_v, dtype, hkv, gqa, sq, skv, mask, mask_rank, causal, dropout, grad, q_stride):
    mask_dims = {4: [B, 1, sq, skv], 2: [sq, skv], 3: [1, sq, skv]}[mask_rank] if mask != "none" else []
    return dict(device="cpu", hd=hd, hd_v=hd_v, dtype=dtype, B=B, Hq=HQ, Hkv=hkv, gqa=gqa, Sq=sq, Skv=skv,
                mask=mask, mask_dims=mask_dims, causal=causal, dropout=dropout, requires_grad=grad,
                q_stride_last=q_stride)


def _torch_choice(r):
    dt = DTYPES[r["dtype"]]
    q = _tensor((B, HQ, r["Sq"], r["hd"]), dt, r["requires_grad"], r["q_stride_last"])
    k = _tensor((B, r["Hkv"], r["Skv"], r["hd"]), dt, r["requires_grad"])
    v = _tensor((B, r["Hkv"], r["Skv"], r["hd_v"]), dt, r["requires_grad"])
    m = _mask(r["mask"], r["mask_dims"], dt)
    return CHOICE[torch._fused_sdp_choice(q, k, v, attn_mask=m, dropout_p=r["dropout"], is_causal=r["causal"],
                                          enable_gqa=r["gqa"])]


def _grid():
    rng = random.Random(13)
    rows = []
    # Every factor against a plain baseline ...
    space = dict(hd=[8, 64, 100, 320], dtype=list(DTYPES), heads=[(8, False), (2, True), (2, False), (1, False),
                                                                   (1, True)],
                 seq=[(16, 16), (1, 16), (8, 24)], mask=[("none", 4), ("bool", 4), ("float", 4), ("bool", 2),
                                                        ("float", 3)],
                 causal=[False, True], dropout=[0.0, 0.1], grad=[False, True], q_stride=[1, 2], hd_v=[None, 32])
    base = dict(hd=64, dtype="fp32", heads=(8, False), seq=(16, 16), mask=("none", 4), causal=False, dropout=0.0,
                grad=False, q_stride=1, hd_v=None)
    combos = [base]
    for key, values in space.items():
        combos += [{**base, key: v} for v in values]
    # ... plus random combinations of all of them.
    keys = list(space)
    for _ in range(700):
        combos.append({k: rng.choice(space[k]) for k in keys})
    for c in combos:
        if c["mask"][0] != "none" and c["causal"]:
            continue  # SDPA rejects attn_mask with is_causal=True before choosing a backend
        hkv, gqa = c["heads"]
        sq, skv = c["seq"]
        rows.append(_row(c["hd"], c["hd_v"] or c["hd"], c["dtype"], hkv, gqa, sq, skv, c["mask"][0], c["mask"][1],
                         c["causal"], c["dropout"], c["grad"], c["q_stride"]))
    return rows


def test_explain_batch_agrees_with_torch_fused_sdp_choice_on_cpu(run_cli, tmp_path):
    torch.manual_seed(0)
    rows = _grid()
    expected = [_torch_choice(r) for r in rows]
    assert {"MATH", "FLASH_ATTENTION"} <= set(expected), "the grid must exercise both CPU backends"
    src = tmp_path / "grid.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    version = torch.__version__.split("+")[0]
    proc = run_cli("explain", "--inputs", src, "--arch", "cpu", "--torch", version, "--json", "-", check_code=0)
    got = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(got) == len(rows)
    wrong = [(r, e, g["fused_choice"], g["can_use_flash_attention"]["rules"])
             for r, e, g in zip(rows, expected, got) if g["fused_choice"] != e]
    assert not wrong, f"{len(wrong)} of {len(rows)} rows disagree, first: {wrong[:3]}"


def test_explain_batch_reads_stdin_and_names_the_failing_cpu_rule(run_cli, attnprof_cli):
    import subprocess
    row = _row(64, 64, "fp32", 8, False, 16, 16, "none", 4, False, 0.1, False, 1)
    proc = subprocess.run([attnprof_cli, "explain", "--inputs", "-", "--arch", "cpu", "--torch", "2.13"],
                          input=json.dumps(row) + "\n", capture_output=True, text=True, check=True)
    out = json.loads(proc.stdout)
    assert out["fused_choice"] == "MATH"
    assert out["can_use_flash_attention"]["rules"] == ["cpu_flash.dropout"]
    assert out["can_use_flash_attention"]["why"] == [
        "Both fused kernels do not support non-zero dropout. (function check_for_dropout)"]


@pytest.mark.parametrize("bad", ["{not json", json.dumps({"hd": 64}), json.dumps({**_row(64, 64, "int3", 8, False, 16, 16, "none", 4, False, 0, False, 1)})])
def test_explain_batch_bad_line_is_one_error_line_and_exit_2(run_cli, tmp_path, bad):
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps(_row(64, 64, "fp32", 8, False, 16, 16, "none", 4, False, 0, False, 1)) + "\n" + bad + "\n")
    out = tmp_path / "out.jsonl"
    proc = run_cli("explain", "--inputs", src, "--arch", "cpu", "--torch", "2.13", "--json", out)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "line 2" in proc.stderr
    assert not out.exists()


def test_analyze_explains_a_real_cpu_trace_consistently(run_cli, tmp_path):
    import torch.nn.functional as F
    from torch.profiler import ProfilerActivity, profile

    q = torch.randn(2, 4, 64, 32)
    kv = torch.randn(2, 2, 64, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        F.scaled_dot_product_attention(q, q, q, is_causal=True)    # CPU flash
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)     # math: the CPU flash path has no dropout
        F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)  # CPU flash with GQA
    trace = tmp_path / "cpu_sdpa.json"
    prof.export_chrome_trace(str(trace))
    out = tmp_path / "report.json"
    run_cli("analyze", trace, "--arch", "cpu", "--torch", torch.__version__.split("+")[0], "--json", out,
            check_code=0)
    calls = json.loads(out.read_text())["calls"]
    assert [c["backend"] for c in calls] == ["cpu_flash", "math", "cpu_flash"]
    for c in calls:
        e = c["explanation"]
        assert e["consistent"] and e["predicted_backend"] == c["backend"], e
    math = calls[1]["explanation"]
    flash = next(v for v in math["backends"] if v["backend"] == "cpu_flash")
    assert [f["rule"] for f in flash["failed"]] == ["cpu_flash.dropout"]
    assert "dropout" in math["fix"]
