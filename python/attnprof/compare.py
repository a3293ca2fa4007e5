"""attnprof.compare: did attention get worse between two runs? The comparison runs in the C++
core (the same code as ``attnprof diff``); this module only converts arguments.

    verdict = attnprof.compare("baseline.json", "candidate.pt.trace.json.gz", max_time_increase="5%")
    if verdict.regression:
        print(verdict.markdown)
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

from . import _core

Run = Union[str, os.PathLike, Any]  # a path (trace, Report JSON, directory) or an AttentionReport


class DiffVerdict:
    """The verdict of one comparison (schema: docs/diff.md). ``data`` is the verdict as a dict:
    the diff section of the Report ``attnprof diff --json`` writes; ``markdown`` is the
    pull-request summary, ``text`` the terminal one."""

    def __init__(self, verdict_json: str, markdown: str, text: str) -> None:
        self._json = verdict_json
        self.data: dict = json.loads(verdict_json)
        self.markdown = markdown
        self.text = text

    regression = property(lambda self: bool(self.data["regression"]))
    exit_code = property(lambda self: int(self.data["exit_code"]))  # 0 = ok, 1 = regression
    pairs = property(lambda self: self.data["pairs"])
    reasons = property(lambda self: [r for p in self.pairs for r in p["reasons"]])

    def to_json(self) -> str:
        return self._json

    def __repr__(self) -> str:
        return f"<DiffVerdict regression={self.regression} pairs={len(self.pairs)}>"


def _as_paths(runs: Run | Sequence[Run], tmp: str, side: str) -> list[str]:
    items = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not items:
        raise ValueError(f"attnprof.compare: no {side} run given")
    paths = []
    for i, item in enumerate(items):
        if isinstance(item, (str, os.PathLike)):
            paths.append(os.fspath(item))
        elif hasattr(item, "to_json"):  # an AttentionReport: hand its Report JSON to the core
            path = Path(tmp) / f"{side}{i}.report.json"
            path.write_text(item.to_json())
            paths.append(str(path))
        else:
            raise TypeError(f"attnprof.compare wants paths or AttentionReports, not {type(item).__name__}")
    return paths


def compare(baseline: Run | Sequence[Run], candidate: Run | Sequence[Run], *,
            max_fused_drop: float | None = None, max_time_increase: str | float | None = None,
            max_memory_increase: str | float | None = None, config: str | os.PathLike | None = None,
            repo: str | os.PathLike | None = None) -> DiffVerdict:
    """Compares a baseline with a candidate, each a trace, a Report JSON, a directory of them
    (matched by file name) or an AttentionReport; a list gives several runs of one side (their
    spread is the noise). Thresholds as in ``attnprof diff``: max_fused_drop in percentage points
    (default 5), max_time_increase / max_memory_increase as "10%" or 10 (default 10%)."""
    def pct(v: str | float | None) -> str | None:
        return None if v is None else str(v)

    with tempfile.TemporaryDirectory(prefix="attnprof-diff-") as tmp:
        base = _as_paths(baseline, tmp, "baseline")
        cand = _as_paths(candidate, tmp, "candidate")
        verdict_json, markdown, text = _core.diff(
            base[0], cand[0], base[1:], cand[1:],
            None if max_fused_drop is None else float(max_fused_drop),
            pct(max_time_increase), pct(max_memory_increase),
            "" if config is None else os.fspath(config), "" if repo is None else os.fspath(repo))
    return DiffVerdict(verdict_json, markdown, text)


def code_info(directory: str | os.PathLike = ".") -> dict | None:
    """Git commit, dirty state and root of the work tree holding ``directory``; None outside git."""
    found = _core.code_info(os.fspath(directory))
    return None if found is None else json.loads(found)


__all__: Iterable[str] = ["compare", "DiffVerdict", "code_info"]
