"""attnprof.profile: torch.profiler.profile plus live attention capture."""
from __future__ import annotations

import os
import socket
import time
import warnings
from typing import Any, Callable

import torch

from . import _core
from ._capture import AttentionCapture, HookError, write_sidecar
from ._quiet import ProfilerLogsHidden


class profile(torch.profiler.profile):  # noqa: N801 - same name and role as torch's class
    """Drop-in for ``torch.profiler.profile`` (same arguments; the trace is exported as usual).

    With ``attention_profile=True`` every attention call is captured while the model runs and
    a sidecar is written next to each exported trace (``<trace>`` + ``.attnprof-capture.json``),
    which ``attention_report()`` / ``attnprof.analyze`` / the ``attnprof`` CLI merge into the
    Report. ``heads=True`` also records Q/K/V of each SDPA call (attnprof.heads) and adds the
    per-head statistics to ``attention_report()``. The profiler library's own log lines
    (Kineto's start/stop, the CPU allocator's note on blocks from before the window) are left
    out of stderr while it runs unless ``verbose=True`` or ``ATTNPROF_VERBOSE=1`` (attnprof._quiet).
    """

    def __init__(self, *args: Any, attention_profile: bool = True, heads: bool = False,
                 verbose: bool | None = None, **torch_profiler_kwargs: Any) -> None:
        super().__init__(*args, **torch_profiler_kwargs)
        self.attention_profile = attention_profile
        self.heads = heads
        self._profiler_logs = ProfilerLogsHidden(verbose)
        self._heads_capture = None  # attnprof.heads.HeadCapture when heads=True
        self._capture: AttentionCapture | None = None
        self._exported_records = 0   # records already written to a sidecar this cycle
        self.last_trace_path: str | None = None

    # ---- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        if (self.attention_profile or self.heads) and self._capture is None and self._heads_capture is None:
            capture = self._new_capture()
            capture.__enter__()
            self._capture = capture if self.attention_profile else None
            self._heads_capture = capture if self.heads else None
        self._profiler_logs.start()
        super().start()

    def _new_capture(self) -> Any:
        """One installation of the capture mode for everything asked (attnprof._capture)."""
        if not self.heads:
            return AttentionCapture(step_of=lambda: self.step_num)
        from .heads import CallsAndHeads, HeadCapture
        return CallsAndHeads(step_of=lambda: self.step_num) if self.attention_profile else HeadCapture()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            capture = self._capture or self._heads_capture
            if capture is not None:
                capture.__exit__(None, None, None)
            self._profiler_logs.stop()

    def step(self) -> None:
        # A new step after an export starts a new cycle: its sidecar holds only its own calls.
        if self._capture is not None and self._exported_records:
            del self._capture.records[:self._exported_records]
            self._exported_records = 0
        super().step()

    # ---- outputs ----------------------------------------------------------------------------

    @property
    def capture(self) -> AttentionCapture | None:
        return self._capture

    def export_chrome_trace(self, path: str, *args: Any, **kwargs: Any) -> Any:
        result = super().export_chrome_trace(path, *args, **kwargs)
        self.last_trace_path = str(path)
        if self._capture is not None:
            records = list(self._capture.records)
            try:
                write_sidecar(_core.sidecar_path_for(str(path)), self._capture.sidecar(records))
            except Exception as e:  # noqa: BLE001 - the trace is written; the Report lacks the capture
                self._capture._hook_failed("writing the capture sidecar", e)
            self._exported_records = len(records)
        return result

    def attention_report(self, **options: Any) -> "AttentionReport":
        """Analyses this run in the C++ core. Uses the last exported trace when there is one,
        else exports the trace (and its sidecar) to a kept temporary folder first (torch saves
        a trace only once; ``last_trace_path`` tells where it went)."""
        from .report import AttentionReport, analyze_path, export_once
        report = analyze_path(export_once(self), **options)
        if self._heads_capture is not None and self._heads_capture.calls:
            from .heads import attach
            report = AttentionReport(attach(report.to_json(), self._heads_capture))
        return report


def trace_handler(dir_name: str, worker_name: str | None = None, use_gzip: bool = False,
                  report: bool = True) -> Callable[[torch.profiler.profile], None]:
    """``on_trace_ready`` handler: exports the trace (+ capture sidecar with attnprof.profile)
    into ``dir_name`` like torch's tensorboard_trace_handler, and writes the Report JSON next to
    it (``<trace>.report.json``) when ``report``. The Report is kept as ``prof.last_report``."""

    warned = False

    def analysis_failed(prof: torch.profiler.profile, error: BaseException) -> None:
        # Runs inside the user's prof.step(): the failure is a warning (once), never an exception.
        nonlocal warned
        capture = getattr(prof, "capture", None)
        if capture is not None:
            capture._hook_failed("analysing the trace", error)
        elif not warned:
            warnings.warn(f"attnprof: analysing the trace failed ({type(error).__name__}: {error}); "
                          f"the run continues, the trace is kept", HookError, stacklevel=3)
        warned = True

    def handler(prof: torch.profiler.profile) -> None:
        from .report import analyze_path
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else ""))
        prof.export_chrome_trace(path)
        if report:
            prof.last_report = None
            try:
                prof.last_report = analyze_path(path)
                prof.last_report.save_json(path + ".report.json")
            except Exception as e:  # noqa: BLE001
                analysis_failed(prof, e)

    return handler
