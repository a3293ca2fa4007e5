"""The core's vocabulary as Python sees it (attnprof._core): every backend's SDPBackend member
and every dtype's torch spelling exist in the installed torch, and the Python code that used to
keep its own lists (sweep.py) reads these instead."""
from __future__ import annotations

import importlib

import pytest
import torch

attnprof = pytest.importorskip("attnprof")
from attnprof import _core  # noqa: E402

sweep = importlib.import_module("attnprof.sweep")  # the module: attnprof.sweep is also the function


def test_every_sdp_backend_member_of_the_vocabulary_is_a_member_of_torchs_sdpbackend():
    members = {b["sdp_backend"] for b in _core.BACKENDS if b["sdp_backend"]}
    assert members >= {"FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"}
    for member in members:
        assert hasattr(torch.nn.attention.SDPBackend, member), member


def test_every_torch_spelling_of_a_dtype_is_a_torch_dtype_of_its_size():
    for row in _core.DTYPES:
        assert row["torch"], row["name"]
        for name in row["torch"]:
            dtype = getattr(torch, name)
            assert isinstance(dtype, torch.dtype), name
            assert dtype.itemsize == row["bytes"], name


def test_the_backend_classes_are_fused_fallback_and_eager():
    kinds = {b["name"]: b["kind"] for b in _core.BACKENDS}
    assert kinds["cudnn"] == "fused" and kinds["math"] == "fallback" and kinds["eager"] == "eager"


def test_sweep_forces_the_pinnable_backends_and_names_their_traces_with_the_cores_marker():
    assert sweep._SDPA_BACKENDS == {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                                    "cudnn": "CUDNN_ATTENTION", "math": "MATH"}
    assert _core.FORCED_BACKEND_MARKER in sweep._trace_name("math", 512)
    assert _core.FORCED_BACKEND_MARKER not in sweep._trace_name("eager", 512)
    assert sweep._backend_of_trace(sweep._trace_name("cudnn", 2048), ["eager", "cudnn"]) == "cudnn"


def test_finding_ids_and_ingest_issue_kinds_are_exposed():
    assert "rules.forced_backend" in _core.FINDING_IDS
    assert "cost.roofline" in _core.FINDING_IDS
    assert "negative_duration" in _core.INGEST_ISSUE_KINDS
