"""The core's vocabulary as Python sees it (attnprof._core): every backend's SDPBackend member
and every dtype's torch spelling exist in the installed torch, and the Python code that used to
keep its own lists (sweep.py) reads these instead."""
from __future__ import annotations

import ast
import importlib
import pathlib

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


def test_mask_kinds_patterns_directions_and_phases_come_from_the_core():
    assert {r["name"] for r in _core.MASK_KINDS} == {"none", "bool", "float", "causal_flag", "block_mask", "unknown"}
    assert _core.mask_pattern.SLIDING_WINDOW == "sliding_window"
    assert _core.mask_kind.BLOCK_MASK == "block_mask"
    assert _core.direction.BACKWARD == "backward" and _core.phase.DECODE == "decode"
    labels = {r["name"]: r["label"] for r in _core.MASK_PATTERNS}
    assert labels["padding"] == "padding mask"


def test_the_capture_names_mask_patterns_with_the_cores_words():
    capture = importlib.import_module("attnprof._capture")
    causal = torch.ones(4, 4, dtype=torch.bool).tril()
    assert capture.tensor_mask_pattern(causal, 4, 4) == _core.mask_pattern.CAUSAL
    assert capture.tensor_mask_pattern(torch.ones(4, 4, dtype=torch.bool), 4, 4) == _core.mask_pattern.FULL
    assert capture._MaskFacts().describe(None, 4, 4) == {"kind": _core.mask_kind.NONE}


# Literals in python/attnprof equal to a vocabulary word that mean something else.
_ALLOWED_SPELLINGS = {
    ("_capture.py", "forward"): "the nn.Module method",
    ("_capture.py", "eager"): "transformers' attn_implementation",
    ("demo.py", "eager"): "transformers' attn_implementation",
    ("sweep.py", "eager"): "transformers' attn_implementation",
    ("heads.py", "causal"): "a metadata key of the heads file (docs/heads.md)",
    ("heads.py", "sliding_window"): "a metadata key of the heads file",
}


def _vocabulary_words() -> set[str]:
    words = {b["name"] for b in _core.BACKENDS}
    words |= {r["name"] for r in _core.MASK_KINDS} | {r["name"] for r in _core.MASK_PATTERNS}
    words |= {v for m in (_core.direction, _core.phase) for k, v in vars(m).items() if k.isupper()}
    # Plain words of other fields too (report_to="none", a window source "unknown").
    return words - {"none", "unknown", "full"}


def _string_literals(path: pathlib.Path) -> list[str]:
    """The string constants of a module, docstrings left out (they may name the words)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_python_module_spells_a_vocabulary_word_of_its_own():
    words = _vocabulary_words()
    assert {"flash", "sliding_window", "backward", "decode", "block_mask"} <= words
    package = pathlib.Path(attnprof.__file__).parent
    seen = set()
    for path in sorted(package.rglob("*.py")):
        for literal in _string_literals(path):
            if literal in words:
                seen.add((path.name, literal))
                assert (path.name, literal) in _ALLOWED_SPELLINGS, f"{path.name} spells {literal!r}: read it from _core"
    assert set(_ALLOWED_SPELLINGS) <= seen, "an allowed spelling is gone: drop it from _ALLOWED_SPELLINGS"


def test_the_literal_scan_leaves_docstrings_out_and_finds_code_strings(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""names "flash"."""\ndef f():\n    """flash"""\n    return "flash"\n')
    assert _string_literals(module) == ["flash"]
