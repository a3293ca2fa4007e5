"""The core's one spelling of sizes, times, FLOP/s and percentages as Python sees it
(attnprof._core, cpp/include/attnprof/text_format.h), and the fleet's progress line, which
used to divide by 2**30 itself, spelling its sizes with it."""
from __future__ import annotations

import io

import pytest

attnprof = pytest.importorskip("attnprof")
from attnprof import _core, fleet  # noqa: E402


def test_python_reads_the_same_spellings_as_the_cpp_outputs():
    assert _core.bytes_text(1023) == "1023 B"
    assert _core.bytes_text(1536) == "1.5 KiB"          # 1536 / 1024
    assert _core.bytes_text(3 * 2**30) == "3.00 GiB"
    assert _core.time_text(0.25) == "250 ns"
    assert _core.time_text(1500) == "1.50 ms"
    assert _core.flops_text(0.0523) == "52.3 GFLOP/s"   # 0.0523 TFLOP/s * 1000
    assert _core.percent_text(0.123) == "12.3%"
    assert _core.time_text(float("nan")) == "unknown"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_fleet_progress_line_spells_sizes_as_every_other_output():
    stream = _Terminal()
    fleet._bar(stream)(1, 2, 512 * 1024, 3 * 2**30)
    # 512 KiB of 3 GiB read; the rate and ETA depend on the clock, so only the sizes are pinned.
    assert stream.getvalue().startswith("\rranks 1/2, 512.0 KiB/3.00 GiB, "), repr(stream.getvalue())
