"""Helpers for a project's own test suite.

    from attnprof.testing import assert_no_attention_regression

    def test_attention_did_not_regress(tmp_path):
        ...  # record tmp_path / "candidate.json" with attnprof.profile
        assert_no_attention_regression("baselines/attention.json", tmp_path / "candidate.json")
"""
from __future__ import annotations

from typing import Any

from .compare import DiffVerdict, compare


def assert_no_attention_regression(baseline: Any, candidate: Any, **thresholds: Any) -> DiffVerdict:
    """Fails the test (AssertionError with the Markdown summary) when ``attnprof.compare`` finds
    a regression; returns the verdict otherwise. Arguments are those of ``attnprof.compare``."""
    verdict = compare(baseline, candidate, **thresholds)
    if verdict.regression:
        raise AssertionError("attention regression:\n" + verdict.markdown)
    return verdict
