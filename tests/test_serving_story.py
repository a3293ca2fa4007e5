"""The story of a serving run: engine steps, prefill and decode, one row per layer.

Multi-step runs are built from the real single-step serving traces (tracelens and
tracelens-inference fixtures): the step's events repeated and shifted in time, with their ids
renumbered, annotations edited and layers removed, as the issue's tests ask; plus a real CPU
capture of a serving-like loop (one prefill step, then decode steps under ProfilerStep)."""
from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

ID_KEYS = ("correlation", "External id", "Python id", "Python parent id", "Ev Idx", "Record function id")
ID_STRIDE = 50_000_000


def load(path: Path) -> dict:
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    return doc if isinstance(doc, dict) else {"traceEvents": doc}


def repeat_steps(doc: dict, steps: int, gap_us: float, edit=None) -> dict:
    """`steps` copies of the trace's timed events, each shifted past the previous one by its span
    plus gap_us, ids renumbered per copy; edit(k, event) may rename (return the event) or drop
    (return None) an event of copy k."""
    events = doc["traceEvents"]
    timed = [e for e in events if "ts" in e and e.get("ph") != "M"]
    untimed = [e for e in events if not ("ts" in e and e.get("ph") != "M")]
    start = min(float(e["ts"]) for e in timed)
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    out = list(untimed)
    for k in range(steps):
        shift = k * (end - start + gap_us)
        for e in timed:
            c = copy.deepcopy(e)
            c["ts"] = float(c["ts"]) + shift
            args = c.get("args", {})
            for key in ID_KEYS:
                if isinstance(args.get(key), int) and args[key] >= 0:
                    args[key] += k * ID_STRIDE
            if isinstance(c.get("id"), int):
                c["id"] += k * ID_STRIDE
            if edit is not None:
                c = edit(k, c)
                if c is None:
                    continue
            out.append(c)
    return {**doc, "traceEvents": out}


def write(doc: dict, path: Path) -> Path:
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def analyze(run_cli, trace: Path, tmp_path: Path) -> dict:
    out = tmp_path / (trace.name + ".report.json")
    run_cli("analyze", trace, "--json", out, check_code=0)
    return json.loads(out.read_text())


def forward_calls_per_layer(report: dict) -> dict[int, int]:
    per_layer: dict[int, int] = {}
    for c in report["calls"]:
        if c["direction"] == "forward":
            per_layer[c["layer"]] = per_layer.get(c["layer"], 0) + 1
    return per_layer


SGLANG = "tracelens-inference/sglang_qwen3_8b_decode_graph_capture.json.gz"
B200 = "tracelens/b200_eager_trace.json.gz"
VLLM_GRAPH = "tracelens-inference/vllm_gptoss_decode_full_graph_capture.pt.trace.json.gz"
SGLANG_OP = "sglang_profiler::attention_paged_attention_ragged"


def renumber_profiler_step(k, e):
    if e.get("name", "").startswith("ProfilerStep#"):
        e["name"] = f"ProfilerStep#{134 + k}"
    return e


def test_ten_profiler_steps_of_36_layers_are_36_layers_of_ten_calls(fixtures_dir, tmp_path, run_cli):
    doc = repeat_steps(load(fixtures_dir / SGLANG), 10, 20_000, renumber_profiler_step)
    report = analyze(run_cli, write(doc, tmp_path / "sglang10.json.gz"), tmp_path)
    assert len(report["calls"]) == 360
    assert len(report["layers"]) == 36
    assert set(forward_calls_per_layer(report).values()) == {10}
    assert [s["marker"] for s in report["steps"]] == [f"ProfilerStep#{134 + k}" for k in range(10)]
    assert all(s["call_count"] == 36 and s["marker_kind"] == "profiler_step" for s in report["steps"])
    # One query token per sequence: decode, inferred (no engine annotation says it).
    assert {(c["phase"], c["phase_inferred"]) for c in report["calls"]} == {("decode", True)}
    assert [(p["phase"], p["calls"], p["steps"]) for p in report["summary"]["phases"]] == [("decode", 360, 10)]


def test_steps_without_any_marker_are_found_by_the_period_of_the_calls(fixtures_dir, tmp_path, run_cli):
    def drop_step_marker(k, e):
        return None if e.get("name", "").startswith("ProfilerStep#") else e

    doc = repeat_steps(load(fixtures_dir / SGLANG), 10, 20_000, drop_step_marker)
    report = analyze(run_cli, write(doc, tmp_path / "sglang10_nomarker.json.gz"), tmp_path)
    assert len(report["layers"]) == 36
    assert len(report["steps"]) == 10
    assert {s["marker_kind"] for s in report["steps"]} == {"period"}
    assert set(forward_calls_per_layer(report).values()) == {10}


def test_a_step_with_fewer_layers_keeps_the_layer_count_and_says_how_layers_were_assigned(
        fixtures_dir, tmp_path, run_cli):
    seen = {"n": 0}

    def drop_two_layers_of_step_3(k, e):
        e = renumber_profiler_step(k, e)
        if k == 3 and e.get("ph") == "X" and e.get("name", "").startswith(SGLANG_OP):
            seen["n"] += 1
            if seen["n"] > 34:  # the last two attention ops of that step
                return None
        return e

    doc = repeat_steps(load(fixtures_dir / SGLANG), 5, 20_000, drop_two_layers_of_step_3)
    report = analyze(run_cli, write(doc, tmp_path / "sglang_uneven.json.gz"), tmp_path)
    assert len(report["layers"]) == 36
    assert [s["call_count"] for s in report["steps"]] == [36, 36, 36, 34, 36]
    uneven = [f for f in report["findings"] if f["rule"] == "steps.uneven_calls"]
    assert len(uneven) == 1
    assert "34 calls in step 3" in uneven[0]["title"] and "36 calls in steps" in uneven[0]["title"]


def test_vllm_annotations_give_each_step_its_phase_and_token_counts(fixtures_dir, tmp_path, run_cli):
    def prefill_then_decode(k, e):
        if k > 0 and e.get("name", "").startswith("execute_context_"):
            e["name"] = "execute_context_0(0)_generation_4(4)"
        return e

    doc = repeat_steps(load(fixtures_dir / B200), 4, 50_000, prefill_then_decode)
    report = analyze(run_cli, write(doc, tmp_path / "b200_steps.json.gz"), tmp_path)
    steps = report["steps"]
    assert len(steps) == 4 and len(report["layers"]) == 36
    assert all(s["marker_kind"] == "annotation" and s["call_count"] == 36 for s in steps)
    first = steps[0]
    assert (first["phase"], first["prefill_requests"], first["prefill_tokens"], first["sum_sq_sk"]) == (
        "prefill", 1, 888, 788544)
    assert all((s["phase"], s["decode_requests"], s["decode_tokens"], s["prefill_requests"]) == ("decode", 4, 4, 0)
               for s in steps[1:])
    assert not any(s["phase_inferred"] for s in steps)
    phases = {p["phase"]: p for p in report["summary"]["phases"]}
    assert (phases["prefill"]["calls"], phases["prefill"]["steps"]) == (36, 1)
    assert (phases["decode"]["calls"], phases["decode"]["steps"]) == (108, 3)
    assert abs(phases["prefill"]["share"] + phases["decode"]["share"] - 1) < 1e-9
    # Each layer has a column per phase.
    layer0 = report["layers"][0]
    assert {(p["phase"], p["calls"]) for p in layer0["phases"]} == {("prefill", 1), ("decode", 3)}
    # Each step's attention time is its calls' and its share of the step's GPU time.
    for s in steps:
        calls = [c for c in report["calls"] if c["step"] == s["index"]]
        assert s["attention_device_time_us"] == pytest.approx(sum(c["device_time_us"] for c in calls))
        assert 0 < s["attention_share"] < 1
        assert s["attention_share"] == pytest.approx(s["attention_device_time_us"] / s["gpu_time_us"])


def test_kv_cache_writes_are_overhead_of_the_call_not_its_attention_time(fixtures_dir, tmp_path, run_cli):
    report = analyze(run_cli, fixtures_dir / B200, tmp_path)
    for c in report["calls"]:
        fused = sum(k["device_time_us"] for k in c["kernels"] if k["component"] == "fused")
        overhead = [k for k in c["kernels"] if k["component"] == "overhead"]
        assert overhead and all("reshape_and_cache" in k["name"] for k in overhead)
        assert c["overhead_time_us"] == pytest.approx(sum(k["device_time_us"] for k in overhead))
        assert c["device_time_us"] == pytest.approx(fused)
    assert report["steps"][0]["overhead_time_us"] == pytest.approx(sum(c["overhead_time_us"] for c in report["calls"]))


def test_tensor_parallel_ranks_are_named_with_their_world_size(fixtures_dir, tmp_path, run_cli):
    # The B200 vLLM trace: GPT-OSS-120B at TP 8 (64/8 heads per rank), all-gathers between layers.
    report = analyze(run_cli, fixtures_dir / B200, tmp_path)
    assert report["source"]["tensor_parallel"] == 8
    assert any(f["rule"] == "steps.tensor_parallel" for f in report["findings"])
    single = analyze(run_cli, fixtures_dir / "tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", tmp_path)
    assert single["source"]["tensor_parallel"] == 0


def test_an_unrecorded_shape_is_null_in_the_report(fixtures_dir, tmp_path, run_cli):
    # vLLM's decode under a full CUDA graph: the kernel spells D = 64, nothing records the
    # batch or the key length.
    report = analyze(run_cli, fixtures_dir / VLLM_GRAPH, tmp_path)
    call = report["calls"][0]
    assert call["shape"]["Sq"] is None and call["shape"]["Skv"] is None and call["shape"]["B"] is None
    assert {"B", "Skv"} <= set(call["unknown"]) and call["shape"]["D"] == 64
    assert call["flops"] == 0 and call["flops_executed"] == 0


def test_a_step_annotation_gives_the_lengths_the_ops_do_not_record(fixtures_dir, tmp_path, run_cli):
    # B200 vLLM: the ops record no query or key length; the step's execute_context_1(888_788544)
    # annotation gives one prefill request of 888 tokens.
    report = analyze(run_cli, fixtures_dir / B200, tmp_path)
    for call in report["calls"]:
        assert call["shape"]["lengths_from"] == "annotation"
        assert call["shape"]["seqlens_q"] == [888] and call["shape"]["seqlens_k"] == [888]
        assert call["unknown"] == []


def test_a_real_cpu_serving_loop_is_one_prefill_step_then_decode_steps(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import attnprof

    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                      bos_token_id=1, eos_token_id=2, pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    model.set_attn_implementation("sdpa")
    prompt = torch.randint(3, 128, (1, 24))
    with torch.no_grad(), attnprof.profile(attention_profile=True) as prof:
        out = model(input_ids=prompt, use_cache=True)
        prof.step()
        past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
        for _ in range(4):
            out = model(input_ids=token, past_key_values=past, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1:].argmax(-1)
            prof.step()
    report = json.loads(prof.attention_report().to_json())
    assert len(report["layers"]) == 3
    assert [s["phase"] for s in report["steps"]] == ["prefill", "decode", "decode", "decode", "decode"]
    assert all(s["call_count"] == 3 for s in report["steps"])
    assert {c["device"] for c in report["calls"]} == {"cpu"}
