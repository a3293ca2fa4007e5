"""AttentionReport: the C++ core's Report as plain Python data, plus its renderers.

All analysis and rendering happen in C++ (attnprof._core); this module only converts."""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from . import _core


class AttentionReport:
    """One Report (schema: docs/report-schema.md). ``.calls``, ``.layers``, ``.summary``,
    ``.findings`` and ``.source`` are plain dicts/lists as in the Report JSON."""

    def __init__(self, report_json: str) -> None:
        self._json = report_json
        self.data: dict = json.loads(report_json)

    calls = property(lambda self: self.data["calls"])
    layers = property(lambda self: self.data["layers"])
    summary = property(lambda self: self.data["summary"])
    findings = property(lambda self: self.data["findings"])
    source = property(lambda self: self.data["source"])

    def to_json(self) -> str:
        return self._json

    def text(self) -> str:
        return _core.render(self._json, "text")

    def show(self, file: TextIO | None = None) -> None:
        print(self.text(), file=file or sys.stdout)

    def save(self, path: str | os.PathLike, fmt: str | None = None) -> None:
        """Writes the report as ``fmt``, one of the C++ format registry's names (``formats()``:
        json, text, markdown, html, csv, chrome, tensorboard); by ``path``'s extension when None.
        Written atomically: no partial file on failure (ValueError with the core's message)."""
        _core.save(self._json, os.fspath(path), fmt or "")

    def save_json(self, path: str | os.PathLike) -> None:
        self.save(path, "json")

    def save_markdown(self, path: str | os.PathLike) -> None:
        self.save(path, "markdown")

    def save_html(self, path: str | os.PathLike) -> None:
        self.save(path, "html")

    def __repr__(self) -> str:
        s = self.summary
        return (f"<AttentionReport calls={s.get('call_count', 0)} layers={len(self.layers)} "
                f"fused_time_fraction={s.get('fused_time_fraction', 0):.2f}>")


def formats() -> list[tuple[str, str]]:
    """The output formats AttentionReport.save writes, as (name, file extension) pairs."""
    return list(_core.formats())


def analyze_path(trace_path: str | os.PathLike, sidecar: str | os.PathLike | None = None,
                 torch_version: str | None = None, arch: str | None = None,
                 gains: str | os.PathLike | None = None, gpu_spec: str | os.PathLike | None = None,
                 kernels: str | os.PathLike | None = None, chrome: str | os.PathLike | None = None,
                 tensorboard: str | os.PathLike | None = None) -> AttentionReport:
    """Trace file (+ capture sidecar beside it, or the one given) -> AttentionReport. ``gains``:
    a file attnprof.verify(gains=...) wrote; the findings' expected gains then prefer it.
    ``gpu_spec``: your measured ceilings (JSON/TOML, docs/cost.md "Bound verdict"); ``kernels``:
    kernel and op names of your own for the catalog (docs/cost.md "Kernels and ops of your own").
    ``chrome``: also write the annotated trace there (gzip when it ends in .gz); ``tensorboard``:
    also append the run to that TensorBoard log dir. Both are written from the one read of the
    trace, which ``report.save(path, "chrome")`` later would read again."""
    path_or_empty = lambda p: "" if p is None else os.fspath(p)  # noqa: E731
    return AttentionReport(_core.analyze(str(trace_path), path_or_empty(sidecar), torch_version or "", arch or "",
                                         path_or_empty(gains), path_or_empty(gpu_spec), path_or_empty(kernels),
                                         path_or_empty(chrome), path_or_empty(tensorboard)))


def export_once(prof: torch.profiler.profile) -> str:
    """torch saves a trace only once: export it to a kept temporary file the first time and
    reuse that file afterwards (``prof.last_trace_path``)."""
    path = getattr(prof, "last_trace_path", None)
    if path and os.path.exists(path):
        return path
    path = os.path.join(tempfile.mkdtemp(prefix="attnprof-"), "trace.json")
    try:
        prof.export_chrome_trace(path)
    except RuntimeError as e:  # torch: "Trace is already saved" -- by someone else, to a path only they know
        raise ValueError("attnprof.analyze: this profiler's trace was already exported elsewhere (e.g. accelerate's "
                         "output_trace_dir/profile_<rank>.json): pass that file's path, or profile with "
                         "attnprof.profile / attnprof.integrations.accelerate.AttentionProfileKwargs") from e
    prof.last_trace_path = path
    return path


def analyze(prof_or_path: Any, **options: Any) -> AttentionReport:
    """Report of an ``attnprof.profile`` or plain ``torch.profiler.profile`` object (after the
    ``with`` block), or of a trace path written by torch.profiler."""
    if isinstance(prof_or_path, (str, Path)):
        return analyze_path(prof_or_path, **options)
    report_of = getattr(prof_or_path, "attention_report", None)
    if report_of is not None:
        return report_of(**options)
    import torch  # here, not at import: an analysis node without PyTorch reads Reports and traces

    if isinstance(prof_or_path, torch.profiler.profile):
        return analyze_path(export_once(prof_or_path), **options)
    raise TypeError(f"attnprof.analyze wants a profiler or a trace path, not {type(prof_or_path).__name__}")
