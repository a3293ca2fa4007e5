"""The HTML dashboard in a real browser (headless Chromium over the DevTools pipe)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from test_dashboard_cdp import DOM_FACTS, Browser, cudnn_report, eager_report, keep_screenshot

from attnprof import _core

COMPONENTS = ["qk", "mask", "softmax", "dropout", "av", "fused"]
COLOURS = {"fused": "#2e9d4f", "fallback": "#e8952f", "eager": "#d64541", "absent": "#e9ecef"}

def expected_class(call: dict) -> str:
    if call["fused"]:
        return "fused"
    return "eager" if call["backend"] == "eager" else "fallback"


def render(tmp_path: Path, reports: list[dict], labels: list[str] | None = None, name="dash.html") -> Path:
    page = _core.render_html([json.dumps(r) for r in reports], labels or [])
    out = tmp_path / name
    out.write_text(page, encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def open_page(browser: Browser, page: Path) -> dict:
    browser.events.clear()
    browser.open(page)
    facts = json.loads(browser.evaluate(DOM_FACTS))
    assert browser.errors() == []
    return facts


def test_dashboard_has_one_coloured_cell_per_layer_and_component(browser, tmp_path):
    before, after = eager_report(), cudnn_report()
    assert len(before["calls"]) == 4 and len(after["calls"]) == 4  # 4 layers in both real traces
    page = render(tmp_path, [before, after], ["eager", "sdpa"])
    facts = open_page(browser, page)
    for section in ("runs", "regressions", "summary", "activation-map", "model-graph", "findings"):
        assert section in facts["sections"]
    cells = facts["cells"]
    assert len(cells) == 4 * len(COMPONENTS)
    assert {(c["layer"], c["component"]) for c in cells} == {(l, c) for l in range(4) for c in COMPONENTS}
    for c in cells:
        assert c["fill"] == COLOURS[c["cls"]]
        want = "eager" if c["component"] in ("qk", "softmax", "av") else "absent"
        assert c["cls"] == want, c
    # The second run (cuDNN): only the fused column is filled, in the fused colour.
    browser.evaluate("document.querySelector('button.tab[data-run=\"1\"]').click()")
    facts = json.loads(browser.evaluate(DOM_FACTS))
    fused_cells = [c for c in facts["cells"] if c["cls"] != "absent"]
    assert [(c["layer"], c["component"]) for c in fused_cells] == [(l, "fused") for l in range(4)]
    assert all(c["fill"] == COLOURS["fused"] for c in fused_cells)
    assert [n["cls"] for n in facts["attentionNodes"]] == [expected_class(c) for c in after["calls"]]
    assert "cudnn_generated_fort_native_sdpa_sm90_flash_fprop" in browser.evaluate(
        "document.querySelector('rect.cell[data-component=fused]').dispatchEvent(new Event('click'));"
        "document.getElementById('detail').textContent")
    shot = tmp_path / "dashboard_eager_vs_sdpa.png"
    browser.screenshot(shot)
    assert shot.stat().st_size > 10_000
    keep_screenshot(shot)
    assert browser.errors() == []


def test_a_later_run_draws_its_comparison_with_the_first_as_its_diff_section(browser, tmp_path):
    before, after = eager_report(), cudnn_report()
    facts = open_page(browser, render(tmp_path, [before, after], ["eager", "sdpa"]))
    assert facts["why"]["diff"], "the first run is the baseline: its diff section says how to get one"
    browser.evaluate("document.querySelector('button.tab[data-run=\"1\"]').click()")
    facts = json.loads(browser.evaluate(DOM_FACTS))
    assert facts["why"]["diff"] is None
    diff = browser.evaluate("document.getElementById('diff').textContent")
    assert "layers 0-3: eager \u2192 cudnn" in diff  # every layer of the eager run ran cuDNN in the second
    bars = json.loads(browser.evaluate("JSON.stringify([...document.querySelectorAll('rect.diff-bar')]"
                                       ".map(r => [r.dataset.side, r.dataset.backend]))"))
    assert sorted(bars) == sorted([["before", "eager"], ["after", "cudnn"]] * 4)
    assert browser.errors() == []


def full_report() -> dict:
    """The cuDNN report with every optional section filled (values are display data)."""
    r = cudnn_report()
    for layer in r["layers"]:
        layer["cost"] = {"achieved_tflops": 400.0 + layer["index"], "peak_fraction": 0.4,
                         "peak_bytes": (1 + layer["index"]) << 28, "bytes_per_q_head": 1 << 23,
                         "bytes_per_kv_head": 1 << 23, "disproportionate": layer["index"] == 3}
    r["scaling"] = {"memory_budget_bytes": 150 << 30, "budget_source": "deviceProperties",
                    "series": [{"backend": "eager", "lengths": [512, 1024, 2048, 4096],
                                "time_us": [100, 380, 1500, 6000], "peak_bytes": [1 << 30, 4 << 30, 16 << 30, 64 << 30],
                                "oom_threshold_tokens": 6100,
                                "time_fit": {"growth": "quadratic"}, "memory_fit": {"growth": "quadratic"}},
                               {"backend": "cudnn", "lengths": [512, 1024, 2048, 4096],
                                "time_us": [20, 70, 280, 1100], "peak_bytes": [1 << 28, 1 << 29, 1 << 30, 2 << 30],
                                "time_fit": {"growth": "quadratic"}, "memory_fit": {"growth": "linear"}}]}
    r["heads"] = {"heads": [{"layer": l, "head": h, "entropy": (l * 8 + h) / 32, "block_coverage_90": h / 8,
                             "kind": "dense"} for l in range(4) for h in range(8)],
                  "candidates": [{"layer": 2, "head": 5, "action": "prune", "reason": "output share 0.01"}]}
    r["advice"] = {"rows": [{"shape": "B=4 H=32 S=2048 D=128 bf16", "fastest_backend": "flash",
                             "heuristic_backend": "cudnn", "gain": 1.1,
                             "code": "with sdpa_kernel(SDPBackend.FLASH_ATTENTION): ..."}]}
    r["ranks"] = {"ranks": [{"rank": 0, "file": "r0.json", "attention_device_time_us": 100},
                            {"rank": 1, "file": "r1.json", "attention_device_time_us": 140}],
                  "slowest_rank": 1, "slowest_over_median": 1.17}
    r["findings"] = [{"severity": "high", "title": "Layer 3 runs eager attention", "detail": "use sdpa",
                      "rule": "core.eager", "layers": [3], "expected_gain": 3.5}]
    return r


def test_dashboard_draws_every_optional_section_present_in_the_report(browser, tmp_path):
    facts = open_page(browser, render(tmp_path, [full_report()]))
    for section in ("roofline", "memory", "scaling", "heads", "advice", "ranks", "findings"):
        assert section in facts["sections"]
    assert "runs" not in facts["sections"]  # one Report: no multi-run view
    assert "Layer 3 runs eager attention" in facts["bodyText"]
    assert "eager OOM above S = 6100" in facts["svgText"]
    # The pruning candidate is outlined and lettered in each heat map (entropy, sink mass, coverage).
    marked = browser.evaluate("[...document.querySelectorAll('rect.heat.candidate')].map(r => r.dataset.layer + '/' + r.dataset.head)")
    assert marked == ["2/5"] * 3
    shot = tmp_path / "dashboard_all_sections.png"
    browser.screenshot(shot)
    keep_screenshot(shot)


def fleet_report() -> dict:
    """The cuDNN report as the body of an 8-rank fleet: rank 5 ran layer 3 on math, 2.6x that layer's median."""
    r = cudnn_report()
    ranks = []
    for rank in range(8):
        layers = [{"index": l, "time_us": 250.0, "backend": "flash", "kernel": "pytorch_flash::flash_fwd_kernel",
                   "shape": "B4 H32/8 S2048x2048 D128", "mask": "none", "dtype": "bf16"} for l in range(4)]
        if rank == 5:
            layers[3].update(time_us=650.0, backend="math", mask="bool padding")
        ranks.append({"rank": rank, "file": f"rank{rank}.pt.trace.json.gz", "layers": layers,
                      "report_html": "reports/rank2.html" if rank == 2 else "",  # only rank 2's was written
                      "layer_time_us": [l["time_us"] for l in layers],
                      "attention_device_time_us": sum(l["time_us"] for l in layers), "fused_time_fraction": 1.0})
    r["ranks"] = {"ranks": ranks, "median_attention_us": 1000, "layer_median_us": [250, 250, 250, 250], "slowest_rank": 5, "slowest_over_median": 1.4,
                  "straggler_threshold": 1.05,
                  "failed": [{"rank": 8, "file": "rank8.pt.trace.json.gz", "error": "truncated gzip stream"}],
                  "stragglers": [{"rank": 5, "layer": -1, "time_us": 1400, "median_us": 1000, "over_median": 1.4,
                                  "worst_layer": 3}],
                  "disagreements": [{"layer": 3, "facet": "backend", "majority": "flash", "majority_ranks": 7, "rank": 5,
                                     "value": "math", "cause": "flash rejected: attn_mask is set [flash.attn_mask]"}]}
    return r


def test_the_ranks_section_draws_a_rank_by_layer_heat_map_and_marks_the_rank_that_differs(browser, tmp_path):
    facts = open_page(browser, render(tmp_path, [fleet_report()]))
    assert facts["why"]["ranks"] is None
    cells = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('#rank-heat rect.rank-cell')].map(r => "
        "[Number(r.dataset.rank), Number(r.dataset.layer), r.dataset.ratio, r.dataset.disagree]))"))
    assert len(cells) == 8 * 4
    assert [c for c in cells if c[3]] == [[5, 3, "2.600", "backend"]]
    assert {c[2] for c in cells if c[:2] != [5, 3]} == {"1.000"}
    text = facts["bodyText"]
    assert "layer 3: rank 5 ran math (most ranks: flash, 7 of 8): flash rejected: attn_mask is set [flash.attn_mask]" in text
    assert "truncated gzip stream" in text
    # Only the rank whose own dashboard was written links to it (its heat-map row and its table row).
    links = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('#ranks a')].map(a => a.getAttribute('href')))"))
    assert links == ["reports/rank2.html", "reports/rank2.html"]
    shot = tmp_path / "dashboard_ranks.png"
    browser.screenshot(shot, selector="#ranks")
    keep_screenshot(shot)
    assert browser.errors() == []


ALL_SECTIONS = ["summary", "steps", "activation-map", "model-graph", "roofline", "spread", "memory", "scaling", "heads", "advice",
                "ranks", "whatif", "verification", "diff", "findings"]


def test_dashboard_without_optional_data_says_in_one_line_why_each_section_is_empty(browser, tmp_path):
    facts = open_page(browser, render(tmp_path, [cudnn_report()]))
    assert facts["sections"] == ALL_SECTIONS
    for empty in ("steps", "roofline", "spread", "memory", "scaling", "heads", "advice", "ranks", "whatif", "verification", "diff"):
        assert facts["why"][empty] and "\n" not in facts["why"][empty], empty
    for drawn in ("summary", "activation-map", "model-graph"):
        assert facts["why"][drawn] is None, drawn


HOSTILE_KERNEL = "</script><script>window.pwned=true;document.title='pwned'</script>"
HOSTILE_MODULE = "model.layers.0.<img src=x onerror=\"window.pwned=true;document.title='pwned'\">"


def test_hostile_trace_strings_are_shown_as_text_and_never_run(browser, tmp_path):
    r = copy.deepcopy(cudnn_report())
    r["calls"][0]["kernels"][0]["name"] = HOSTILE_KERNEL
    r["calls"][0]["module"] = HOSTILE_MODULE
    r["source"]["files"] = ["/tmp/<svg onload=alert(1)>'\".json"]
    page = render(tmp_path, [r])
    facts = open_page(browser, page)
    assert facts["pwned"] is False
    assert facts["title"].startswith("attnprof") and "pwned" not in facts["title"]
    assert facts["images"] == 0
    assert facts["scripts"] == 2  # the JSON data block and the dashboard's own script
    assert "<img src=x onerror=" in facts["svgText"]  # the module tree shows the name as text
    detail = browser.evaluate(
        "document.querySelector('rect.cell[data-layer=\"0\"][data-component=fused]').dispatchEvent(new Event('click'));"
        "document.getElementById('detail').textContent")
    assert HOSTILE_KERNEL in detail
    assert browser.evaluate("window.pwned === true") is False
    assert browser.errors() == []


STACK_TRACE = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / \
    "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz"
INJECT = "<img src=x onerror=\"window.pwned=true\">'\"</script><script>window.pwned=true;document.title='pwned'</script>"


def test_hostile_names_in_a_real_trace_stay_inert_through_the_cli(browser, tmp_path, run_cli):
    """Kernel and module names of a real trace carrying markup, quotes and non-UTF-8 bytes."""
    import gzip
    raw = gzip.decompress(STACK_TRACE.read_bytes())
    hostile_bytes = INJECT.replace('"', '\\"').encode() + b"\xff\xfe"
    raw = raw.replace(b"\"name\": \"nn.Module: LlamaAttention_0\"",
                      b"\"name\": \"nn.Module: LlamaAttention_0" + hostile_bytes + b"\"")
    raw = raw.replace(b"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_",
                      b"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_" + hostile_bytes)
    trace = tmp_path / "hostile.pt.trace.json"
    trace.write_bytes(raw)
    page = tmp_path / "hostile.html"
    run_cli("analyze", trace, "--html", page, check_code=0)
    facts = open_page(browser, page)
    assert facts["pwned"] is False and facts["title"] == "attnprof \u2014 hostile.pt.trace.json"
    assert facts["images"] == 0 and facts["scripts"] == 2
    assert {c["cls"] for c in facts["cells"] if c["component"] == "fused"} == {"fused"}
    module_names = "\n".join(n["path"] for n in facts["attentionNodes"])
    assert "<img src=x onerror=" in module_names and "</script><script>" in module_names
    detail = browser.evaluate(
        "document.querySelector('rect.cell[data-layer=\"0\"][data-component=fused]').dispatchEvent(new Event('click'));"
        "document.getElementById('detail').textContent")
    assert "knob_<img src=x onerror=" in detail
    assert browser.evaluate("window.pwned === true") is False
    shot = tmp_path / "dashboard_hostile.png"
    browser.screenshot(shot)
    keep_screenshot(shot)
    assert browser.errors() == []


def test_hostile_strings_stay_inert_in_every_section_view(browser, tmp_path):
    """Every string of every optional section carries markup: the pages show it as text."""
    r = copy.deepcopy(full_report())
    r["calls"][0]["kernels"][0]["name"] = HOSTILE_KERNEL
    r["calls"][0]["module"] = HOSTILE_MODULE
    r["source"]["device_name"] = INJECT
    for s in r["scaling"]["series"]:
        s["backend"] += INJECT
        s["oom_note"] = INJECT
    r["scaling"]["budget_source"] = INJECT
    r["heads"]["notes"] = [INJECT]
    r["heads"]["sampling_note"] = INJECT
    r["heads"]["candidates"] = [{"layer": 0, "head": 1, "action": "prune" + INJECT, "reason": INJECT}]
    r["heads"]["sliding_window"] = [{"call_id": 0, "layer": 0, "backend": INJECT, "mask": INJECT, "mask_kind": INJECT,
                                     "verdict": INJECT, "wasted_flops_share": 0.5}]
    r["heads"]["heads"][0]["kind"] = INJECT
    r["advice"]["rows"][0]["code"] = INJECT
    r["whatif"] = {"model": INJECT, "window": 1024, "requests": 3, "mean_tokens": 100, "full_flops": 10,
                   "window_flops": 5, "length_histogram": [[64, 3]]}
    r["findings"][0]["title"] = INJECT
    facts = open_page(browser, render(tmp_path, [r]))
    for section in ("scaling", "heads", "advice", "whatif", "findings"):
        assert section in facts["sections"] and facts["why"][section] is None, section
    assert facts["pwned"] is False and "pwned" not in facts["title"]
    assert facts["images"] == 0 and facts["scripts"] == 2
    assert facts["bodyText"].count("<img src=x onerror=") >= 6  # shown as text: heads, advice, whatif, ...
    assert browser.evaluate("window.pwned === true") is False
    assert browser.errors() == []


def test_a_verified_report_draws_the_fixes_table_and_marks_the_finding_it_answers(browser, tmp_path):
    report = eager_report()
    report["findings"] = [{"severity": "high", "title": "layers 0-3: eager attention", "detail": "use SDPA",
                           "rule": "rules.eager_attention", "layers": [0, 1, 2, 3], "expected_gain": 1.5, "cause": ""}]
    measured = {"plan": {"fix": "use_sdpa", "finding_rule": "rules.eager_attention", "layers": [0, 1, 2, 3],
                         "predicted_speedup": 1.5},
                "applied": True, "baseline_ms": [10, 11, 10.5, 10.2], "fixed_ms": [4, 4.2, 4.1, 4.3], "dtype": "bf16",
                "backends_before": ["eager"], "backends_after": ["cudnn"], "max_rel_diff": 2e-3}
    report["verification"] = {"device": "cuda:0 (NVIDIA H200)", "timer": "cuda_events", "load_average": [0.5, 0.4, 0.3],
                              "warmup": 2, "model": "LlamaForCausalLM",
                              "fixes": [json.loads(_core.judge_fix(json.dumps(measured)))]}
    facts = open_page(browser, render(tmp_path, [report]))
    assert facts["why"]["verification"] is None
    cells = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('#verification tbody td')].map(td => td.textContent))"))
    assert cells[:5] == ["use_sdpa", "layers 0-3", "confirmed", "2.49x (2.37x-2.62x)", "~1.5x"]
    marks = json.loads(browser.evaluate(
        "JSON.stringify([...document.querySelectorAll('#findings p.verified')].map(p => p.className + ': ' + p.textContent))"))
    assert marks == ["verified verdict-confirmed: verified on this model: 2.49x faster (2.37x-2.62x), same results"]
