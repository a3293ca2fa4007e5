"""The annotated Chrome/Perfetto trace: original events kept, one overlay slice per attention call."""
from __future__ import annotations

import gzip
import json
import os
import threading

from test_dashboard_cdp import CUDNN_TRACE, EAGER_TRACE, cudnn_report, eager_report

from attnprof import _core
from attnprof.report import analyze_path

OVERLAY_PID = 0x7A770000


def annotate(tmp_path, report, trace, name="annotated.json"):
    out = tmp_path / name
    _core.write_chrome_overlay(json.dumps(report), str(trace), str(out))
    opener = gzip.open if name.endswith(".gz") else open
    with opener(out, "rt", encoding="utf-8") as f:
        return json.load(f)


def original_events(trace):
    with gzip.open(trace, "rt", encoding="utf-8") as f:
        return json.load(f)


def test_annotated_trace_keeps_every_original_event_and_key(tmp_path):
    original = original_events(CUDNN_TRACE)
    annotated = annotate(tmp_path, cudnn_report(), CUDNN_TRACE)
    n = len(original["traceEvents"])
    assert annotated["traceEvents"][:n] == original["traceEvents"]
    assert {k: v for k, v in annotated.items() if k != "traceEvents"} == \
           {k: v for k, v in original.items() if k != "traceEvents"}
    added = annotated["traceEvents"][n:]
    assert added and all(e["pid"] == OVERLAY_PID or e.get("cat") == "attnprof" for e in added)


def overlay_slices(annotated):
    return [e for e in annotated["traceEvents"] if e.get("pid") == OVERLAY_PID and e["ph"] == "X"]


def check_slices_cover_exactly_the_calls(report, annotated):
    slices = overlay_slices(annotated)
    assert sorted(s["args"]["call"] for s in slices) == [c["id"] for c in report["calls"]]
    by_id = {c["id"]: c for c in report["calls"]}
    for s in slices:
        call = by_id[s["args"]["call"]]
        assert s["name"] == f"L{call['layer']} {call['backend']}"
        start = min(k["ts_ns"] for k in call["kernels"]) / 1000
        end = max(k["ts_ns"] / 1000 + k["device_time_us"] for k in call["kernels"])
        assert abs(s["ts"] - start) < 0.01 and abs(s["ts"] + s["dur"] - end) < 0.01
    flows = [e for e in annotated["traceEvents"] if e.get("cat") == "attnprof" and e["ph"] in "sf"]
    assert len(flows) == 2 * sum(len(c["kernels"]) for c in report["calls"])
    # Each arrow ends inside the kernel event it points at (same pid, tid; ts within the slice).
    kernels = {(e["pid"], e["tid"], e["ts"]): e for e in annotated["traceEvents"] if e.get("cat") == "kernel"}
    names = {k["name"] for c in report["calls"] for k in c["kernels"]}
    for f in flows:
        if f["ph"] == "f":
            assert kernels[(f["pid"], f["tid"], f["ts"])]["name"] in names


def test_overlay_slices_cover_exactly_the_fused_calls(tmp_path):
    report = cudnn_report()
    annotated = annotate(tmp_path, report, CUDNN_TRACE)
    check_slices_cover_exactly_the_calls(report, annotated)
    assert {s["cname"] for s in overlay_slices(annotated)} == {"good"}


def test_overlay_slices_span_every_kernel_of_eager_calls(tmp_path):
    report = eager_report()
    annotated = annotate(tmp_path, report, EAGER_TRACE, "eager.json.gz")
    check_slices_cover_exactly_the_calls(report, annotated)
    assert {s["cname"] for s in overlay_slices(annotated)} == {"terrible"}
    assert all(s["args"]["class"] == "eager" for s in overlay_slices(annotated))


def test_analyze_writes_the_annotated_trace_and_tensorboard_from_its_one_read(tmp_path):
    # A named pipe gives its bytes once: a second read of the trace would wait for a writer that
    # never comes, and the analysis would not finish.
    text = gzip.decompress(CUDNN_TRACE.read_bytes())
    fifo = tmp_path / "cudnn.pt.trace.json"
    os.mkfifo(fifo)
    threading.Thread(target=lambda: fifo.write_bytes(text), daemon=True).start()
    result = {}
    analysis = threading.Thread(daemon=True, target=lambda: result.update(report=analyze_path(
        fifo, chrome=tmp_path / "a.json", tensorboard=tmp_path / "tb")))
    analysis.start()
    analysis.join(timeout=120)
    assert "report" in result, "the analysis did not finish: it read the trace a second time"

    # The same bytes as the annotated trace of that Report written from a read of the file.
    copy = tmp_path / "copy.pt.trace.json"
    copy.write_bytes(text)
    _core.write_chrome_overlay(result["report"].to_json(), str(copy), str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes().startswith(text[:text.rindex(b"]")])
    assert (tmp_path / "tb" / "cudnn.0.pt.trace.json.gz").exists()
