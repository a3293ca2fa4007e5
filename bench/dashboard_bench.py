"""Dashboard size and open time: a 16-layer model with every section, in headless Chromium.

Printed, never asserted (targets: under 2 MB, opens in under 2 s). The Report is `analyze` of
the real cuDNN H200 trace (kernels, times, shapes, per-call roofline costs), its 4 layers
repeated to 16, with every optional section filled (scaling, 16 x 32 heads, advice, ranks,
what-if), plus a before/after pair for the multi-run view.

    python bench/dashboard_bench.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_dashboard import full_report  # noqa: E402
from test_dashboard_cdp import CUDNN_TRACE, DOM_FACTS, Browser, eager_report  # noqa: E402

from attnprof import _core  # noqa: E402

LAYERS = 16


def widen(report: dict, layers: int) -> dict:
    """Repeats the report's calls until it has `layers` layers (ids and layer indices renumbered)."""
    r = copy.deepcopy(report)
    base_calls, base_layers = r["calls"], r["layers"]
    r["calls"], r["layers"] = [], []
    for i in range(layers):
        call = copy.deepcopy(base_calls[i % len(base_calls)])
        call["id"] = call["layer"] = i
        call["module"] = f"model.layers.{i}.self_attn"
        layer = copy.deepcopy(base_layers[i % len(base_layers)])
        layer.update(index=i, module=call["module"], call_ids=[i])
        r["calls"].append(call)
        r["layers"].append(layer)
    if "heads" in r:
        r["heads"]["heads"] = [{"layer": l, "head": h, "entropy": ((l * 7 + h) % 32) / 32,
                                "block_coverage_90": (h % 8) / 8, "kind": "dense"}
                               for l in range(layers) for h in range(32)]
    s = r["summary"]
    s["call_count"] = layers
    s["fused_call_count"] = sum(c["fused"] for c in r["calls"])
    s["attention_device_time_us"] = sum(c["device_time_us"] for c in r["calls"])
    return r


def analyzed_full_report() -> dict:
    """`analyze` of the cuDNN trace plus every optional section of test_dashboard.full_report()."""
    r = json.loads(_core.analyze(str(CUDNN_TRACE)))
    sections = full_report()
    for key in ("scaling", "heads", "advice", "ranks"):
        r[key] = sections[key]
    r["findings"] = r.get("findings", []) + sections["findings"]
    r["whatif"] = {"model": "llama-2-7b", "window": 4096, "requests": 100, "mean_tokens": 2400,
                   "covered_share": 0.85, "full_flops": 4.1e15, "window_flops": 2.9e15, "flops_saving": 0.29,
                   "full_kv_bytes": 1.2e11, "window_kv_bytes": 8.0e10, "memory_saving": 0.33}
    return r


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    after = widen(analyzed_full_report(), LAYERS)
    before = widen(eager_report(), LAYERS)
    pages = {"16 layers, all sections": [after], "16 layers, before/after": [before, after]}
    with tempfile.TemporaryDirectory() as tmp, Browser() as browser:
        for name, reports in pages.items():
            texts = [json.dumps(r) for r in reports]
            t0 = time.perf_counter()
            page = _core.render_html(texts, [])
            render_ms = (time.perf_counter() - t0) * 1000
            path = Path(tmp) / "dash.html"
            path.write_text(page, encoding="utf-8")
            load = os.getloadavg()[0]
            opens, draws = [], []
            for _ in range(args.repeat):
                browser.events.clear()
                opens.append(browser.open(path))
                draws.append(json.loads(browser.evaluate(DOM_FACTS))["renderMs"])
            errors = browser.errors()
            empty = [k for k, v in json.loads(browser.evaluate(DOM_FACTS))["why"].items() if v]
            size = len(page.encode())
            print(f"{name}: {size / 1e6:.3f} MB (target < 2 MB, {size / 2e6:.2f}x of it); "
                  f"C++ render {render_ms:.1f} ms; open in Chromium median {statistics.median(opens):.3f} s "
                  f"(target < 2 s, {statistics.median(opens) / 2:.2f}x), script draw median "
                  f"{statistics.median(draws):.1f} ms; console errors: {len(errors)}; load average {load:.1f}; sections without data: {', '.join(empty) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
