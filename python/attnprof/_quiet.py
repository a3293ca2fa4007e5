"""Quiet by default: the profiler library's own log lines about attnprof's captures stay off the
user's terminal; ``verbose=True`` (or ``ATTNPROF_VERBOSE=1`` in the environment) shows them.

Kineto writes a "USDT: ... profiler_start" / "profiler_stop" line at every trace start and stop,
and torch's CPU allocator writes a warning when a block allocated before a memory-profiled
window is freed inside it (both from C++, straight to file descriptor 2). While a capture runs,
descriptor 2 goes through a small filter process (attnprof/_log_filter.py) that leaves out exactly
those lines and copies everything else at once; the descriptor is restored when the capture
stops. A separate process, not a thread, so that a crash inside the window still has its
message printed."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

# (line start, text the line must also contain): the only lines ever left out.
PROFILER_LOG_LINES: tuple[tuple[bytes, bytes], ...] = (
    (b"USDT:", b""),    # Kineto's trace start / stop
    (b"STAGE:", b""),   # Kineto's "Completed Stage: Warm Up" and the like
    (b"[W", b"Memory block of unknown size was allocated before the profiling started"),  # c10
)

_FILTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_log_filter.py")
_lock = threading.Lock()
_depth = 0  # nested windows (a demo around a capture) share the outermost filter


def verbose_from_environment() -> bool:
    return os.environ.get("ATTNPROF_VERBOSE", "").strip().lower() not in ("", "0", "false", "no")


def _filter_arguments() -> list[str]:
    return [part for prefix, marker in PROFILER_LOG_LINES for part in (prefix.hex(), marker.hex() or "-")]


class ProfilerLogsHidden:
    """Leaves the profiler library's own lines out of stderr between start() and stop() (or as a
    ``with`` block). Does nothing when verbose, when nested inside another window, or when the
    filter cannot be started (stderr then stays as it was)."""

    def __init__(self, verbose: bool | None = None) -> None:
        self.verbose = verbose_from_environment() if verbose is None else bool(verbose)
        self._saved: int | None = None
        self._process: subprocess.Popen | None = None
        self._counted = False

    def start(self) -> "ProfilerLogsHidden":
        global _depth
        if self.verbose or self._counted:
            return self
        with _lock:
            _depth += 1
            self._counted = True
            if _depth == 1:
                self._redirect()
        return self

    def stop(self) -> None:
        global _depth
        if not self._counted:
            return
        with _lock:
            _depth -= 1
            self._counted = False
            self._restore()

    def __enter__(self) -> "ProfilerLogsHidden":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _redirect(self) -> None:
        try:
            saved = os.dup(2)
        except OSError:
            return
        try:
            process = subprocess.Popen([sys.executable, "-I", _FILTER, *_filter_arguments()],
                                       stdin=subprocess.PIPE, stdout=saved, stderr=saved)
        except OSError:
            os.close(saved)
            return
        sys.stderr.flush()
        os.dup2(process.stdin.fileno(), 2)
        process.stdin.close()  # descriptor 2 is now this process's only way into the pipe
        self._saved, self._process = saved, process

    def _restore(self) -> None:
        if self._saved is None:
            return
        sys.stderr.flush()
        os.dup2(self._saved, 2)  # the pipe's last write end here closes: the filter reads its end
        os.close(self._saved)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass  # a forked child still holds the pipe: the filter ends when it does
        self._saved, self._process = None, None
