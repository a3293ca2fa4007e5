"""`attnprof analyze DIR` draws one aggregated progress line on stderr when stderr is a terminal
(files done / total, bytes read over all ranks) and writes nothing on stderr otherwise."""
from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess

import pytest

TRACES = "h200-torch2.11/traces"


@pytest.fixture()
def two_rank_dir(tmp_path, fixtures_dir):
    """Two real H200 traces as the two ranks of one job (copies in a temporary directory)."""
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank, name in enumerate(["llama7b4l_sdpa_bf16_b4_s2048", "llama7b4l_sdpa_bf16_b4_s4096"]):
        shutil.copyfile(fixtures_dir / TRACES / f"{name}.pt.trace.json.gz",
                        ranks / f"rank{rank}.pt.trace.json.gz")
    return ranks


def run_with_stderr_on_pty(args: list[str], timeout: float = 120) -> tuple[int, str]:
    """Runs args with stderr on a pseudo-terminal; returns (exit code, what the terminal got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                pytest.fail(f"no output on the terminal for {timeout} s: {' '.join(args)}")
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")


def test_directory_on_a_terminal_draws_one_bar_ending_at_all_files_and_100_percent(
        attnprof_cli, two_rank_dir, tmp_path):
    code, terminal = run_with_stderr_on_pty([attnprof_cli, "analyze", str(two_rank_dir),
                                             "--json", str(tmp_path / "report.json")])
    assert code == 0, terminal
    total = sum(f.stat().st_size for f in two_rank_dir.iterdir())
    # Sizes are spelled in KiB with one decimal from 1024 B up to 1 MiB (docs/outputs.md); the two
    # compressed traces together are about 85 KiB.
    assert 1024 <= total < 2**20
    spelled = f"{total / 1024:.1f} KiB"
    # One line redrawn in place (carriage returns), ended by its only newline at 100%.
    text = terminal.replace("\r\n", "\n")  # the terminal turns "\n" into "\r\n"
    assert text.count("\n") == 1 and text.endswith("\n"), repr(terminal)
    draws = text[:-1].split("\r")
    assert draws[0] == "" and len(draws) >= 3, repr(terminal)  # starts with "\r", drawn more than once
    last_draw = draws[-1]
    assert last_draw.startswith(f"reading {two_rank_dir} (2/2 files, {spelled}/{spelled}) ["), repr(last_draw)
    assert last_draw.endswith("100%"), repr(last_draw)
    assert (tmp_path / "report.json").is_file()


def test_directory_without_a_terminal_writes_nothing_on_stderr(run_cli, two_rank_dir, tmp_path):
    proc = run_cli("analyze", two_rank_dir, "--json", tmp_path / "report.json", check_code=0)
    assert proc.stderr == ""
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["ranks"]["ranks"]) == 2
