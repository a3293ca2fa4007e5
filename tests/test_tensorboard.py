"""TensorBoard event files written by the C++ core, read back by the real tensorboard package."""
from __future__ import annotations

import gzip
import json
import re
import struct

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

from test_dashboard_cdp import CUDNN_TRACE, cudnn_report, original_trace_event_count

from attnprof import _core

MARKDOWN = "# attnprof report\n\n| layer | backend |\n|---|---|\n| 0 | cudnn |\n"
# torch-tb-profiler's run/worker pattern (consts.WORKER_PATTERN).
WORKER_PATTERN = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")


def two_runs(tmp_path):
    first = cudnn_report()
    second = cudnn_report()
    second["summary"]["fused_time_fraction"] = 0.5
    second["layers"][2]["device_time_us"] *= 2
    steps = [_core.write_tensorboard(json.dumps(r), str(tmp_path), MARKDOWN) for r in (first, second)]
    assert steps == [0, 1]
    acc = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return first, second, acc


def test_scalars_match_the_report_and_repeated_runs_form_a_time_series(tmp_path):
    first, second, acc = two_runs(tmp_path)
    tags = acc.Tags()["scalars"]
    for tag in ("attention/fused_time_fraction", "attention/device_time_us", "attention/calls",
                "attention/share_of_gpu_time", "layer/00/device_time_us", "layer/03/fused_time_fraction"):
        assert tag in tags
    series = acc.Scalars("attention/fused_time_fraction")
    assert [(e.step, e.value) for e in series] == [(0, 1.0), (1, 0.5)]
    for i in range(4):
        values = [e.value for e in acc.Scalars(f"layer/{i:02d}/device_time_us")]
        assert values == pytest.approx([first["layers"][i]["device_time_us"], second["layers"][i]["device_time_us"]],
                                       rel=1e-6)
    assert [e.value for e in acc.Scalars("attention/calls")] == [4, 4]


def test_markdown_report_is_a_text_summary(tmp_path):
    _, _, acc = two_runs(tmp_path)
    assert "attnprof/report" in acc.Tags()["tensors"]
    assert acc.SummaryMetadata("attnprof/report").plugin_data.plugin_name == "text"
    texts = acc.Tensors("attnprof/report")
    assert [t.step for t in texts] == [0, 1]
    assert texts[0].tensor_proto.string_val[0].decode() == MARKDOWN


def test_records_carry_valid_masked_crc32c(tmp_path):
    two_runs(tmp_path)
    files = sorted(tmp_path.glob("events.out.tfevents.*"))
    assert len(files) == 2
    data = files[0].read_bytes()
    records = 0
    while data:
        header = data[:8]
        (length,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[8:12])[0] == masked_crc32c(header)
        payload = data[12:12 + length]
        assert struct.unpack("<I", data[12 + length:16 + length])[0] == masked_crc32c(payload)
        data = data[16 + length:]
        records += 1
    assert records == 3  # file_version, scalars, text


def test_trace_is_placed_where_the_pytorch_profiler_plugin_looks(tmp_path):
    two_runs(tmp_path)
    traces = sorted(p.name for p in tmp_path.iterdir() if WORKER_PATTERN.match(p.name))
    assert traces == ["llama7b4l_sdpa_bf16_b4_s2048.0.pt.trace.json.gz", "llama7b4l_sdpa_bf16_b4_s2048.1.pt.trace.json.gz"]
    worker, span = WORKER_PATTERN.match(traces[1]).groups()
    assert (worker, span) == ("llama7b4l_sdpa_bf16_b4_s2048", ".1")
    with gzip.open(tmp_path / traces[0], "rt") as f:
        events = json.load(f)["traceEvents"]
    assert len(events) > original_trace_event_count(CUDNN_TRACE)
