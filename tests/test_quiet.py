"""Quiet by default (attnprof._quiet): the profiler library's own stderr lines about attnprof's
captures are left out, everything else passes in order, a crash inside the window still prints,
and verbose (argument or ATTNPROF_VERBOSE=1) shows them."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from attnprof import _log_filter, _quiet

RULES = list(_quiet.PROFILER_LOG_LINES)
KINETO_START = b"USDT:2026-12-07 12:22:06 13167:13167 SyncActivityProfilerHandler.cpp:52] profiler_start\n"
ALLOCATOR = (b"[W1207 12:21:07.809779507 CPUAllocator.cpp:245] Memory block of unknown size was allocated before "
             b"the profiling started, profiler results will not include the deallocation event\n")


def filtered(*chunks: bytes) -> bytes:
    """What the filter writes for stdin arriving in these chunks."""
    read_in, write_in = os.pipe()
    read_out, write_out = os.pipe()
    for chunk in chunks:
        os.write(write_in, chunk)
    os.close(write_in)
    _log_filter.run(RULES, read_in, write_out)
    os.close(read_in)
    os.close(write_out)
    with os.fdopen(read_out, "rb") as out:
        return out.read()


def test_filter_leaves_out_kinetos_start_stop_and_the_allocators_profiling_note_only():
    kept = b"user line\n[W1207 12:21:07.1 other.cpp:1] a warning of the user's own\nsays USDT: mid-line\n"
    assert filtered(KINETO_START, kept, ALLOCATOR, b"STAGE:2026 Completed Stage: Warm Up\n") == kept


def test_filter_judges_a_line_split_across_reads_by_its_start():
    assert filtered(KINETO_START[:3], KINETO_START[3:], b"ok\n") == b"ok\n"
    # The start of a line already let through keeps the rest of it, whatever the rest says.
    assert filtered(b"progress ", b"USDT: is in my message\n") == b"progress USDT: is in my message\n"


def test_filter_passes_carriage_return_redraws_and_an_unfinished_last_line():
    assert filtered(b" 10%\r", b" 20%\r", b"tail without newline") == b" 10%\r 20%\rtail without newline"


def run_script(body: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    script = "import os, sys, torch, attnprof\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120, check=check,
                          env={**os.environ, **(env or {})})


CAPTURE = """
    before = torch.randn(256, 256)            # allocated before the window, freed inside it
    attention = torch.nn.MultiheadAttention(32, 4, batch_first=True)
    x = torch.randn(1, 16, 32)
    with attnprof.profile(profile_memory=True{verbose}):
        del before
        attention(x, x, x)
        sys.stderr.write("the user's own line\\n")
    print("done")
"""


def test_a_live_capture_hides_the_profiler_librarys_lines_and_keeps_the_users():
    done = run_script(CAPTURE.format(verbose=""))
    assert done.stdout == b"done\n"
    assert done.stderr == b"the user's own line\n"


def test_verbose_shows_the_profiler_librarys_lines_as_an_argument_or_from_the_environment():
    for shown in (run_script(CAPTURE.format(verbose=", verbose=True")),
                  run_script(CAPTURE.format(verbose=""), env={"ATTNPROF_VERBOSE": "1"})):
        assert b"profiler_start" in shown.stderr and b"profiler_stop" in shown.stderr
        assert b"Memory block of unknown size" in shown.stderr
        assert b"the user's own line\n" in shown.stderr


def test_a_crash_inside_the_window_still_prints_what_was_written_before_it():
    done = run_script("""
        with attnprof.profile():
            os.write(2, b"last words before the crash\\n")
            os.kill(os.getpid(), 9)
    """, check=False)
    assert done.returncode == -9
    assert done.stderr == b"last words before the crash\n"


def test_stderr_is_the_same_descriptor_target_after_the_window():
    done = run_script("""
        before = os.fstat(2)
        with attnprof.profile():
            pass
        after = os.fstat(2)
        print((before.st_dev, before.st_ino) == (after.st_dev, after.st_ino))
    """)
    assert done.stdout == b"True\n"
