"""AttentionReport.save(path, fmt): every format of the C++ registry, by name or by extension."""
from __future__ import annotations

import gzip
import json

import pytest

import attnprof
from attnprof import _core
from attnprof.report import formats

TRACE = "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz"


@pytest.fixture(scope="module")
def report(fixtures_dir):
    return attnprof.analyze(fixtures_dir / TRACE)


def test_formats_are_the_registry_rows():
    assert [name for name, _ in formats()] == ["json", "text", "markdown", "html", "csv", "chrome", "tensorboard"]
    assert dict(formats())["markdown"] == ".md"


@pytest.mark.parametrize("name,extension", [("json", ".json"), ("text", ".txt"), ("markdown", ".md")])
def test_save_by_extension_writes_what_render_returns(report, tmp_path, name, extension):
    path = tmp_path / f"report{extension}"
    report.save(path)
    assert path.read_text(encoding="utf-8") == _core.render(report.to_json(), name)


def test_save_chrome_annotates_the_reports_own_trace(report, tmp_path):
    path = tmp_path / "annotated.json.gz"
    report.save(path)  # .json.gz: the annotated trace
    with gzip.open(path, "rt", encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    names = {e["name"] for e in events if e.get("cat") == "attnprof" and e["ph"] == "X"}
    assert names == {f"L{i} cudnn" for i in range(4)}


def test_unknown_format_or_extension_is_a_value_error_naming_the_formats(report, tmp_path):
    with pytest.raises(ValueError, match="json, text, markdown, html, csv, chrome, tensorboard"):
        report.save(tmp_path / "r.out", "pdf")
    with pytest.raises(ValueError, match="r.pdf: no report format"):
        report.save(tmp_path / "r.pdf")
    assert not list(tmp_path.iterdir())
