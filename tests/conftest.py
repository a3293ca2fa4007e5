"""Shared pytest fixtures: where the real traces are and how to run the `attnprof` CLI."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not FIXTURES.is_dir():
        pytest.fail(f"shared fixtures not found at {FIXTURES}")
    return FIXTURES


def _find_cli() -> str:
    explicit = os.environ.get("ATTNPROF_CLI")
    if explicit:
        return explicit
    found = shutil.which("attnprof")
    if found:
        return found
    for candidate in sorted((REPO / "build").glob("*/attnprof")):
        return str(candidate)
    pytest.fail("the attnprof command is not installed (run `make install` or set ATTNPROF_CLI)")


@pytest.fixture(scope="session")
def attnprof_cli() -> str:
    return _find_cli()


@pytest.fixture(scope="session")
def run_cli(attnprof_cli):
    """run_cli(*args) -> CompletedProcess with text stdout/stderr; never raises on exit code."""

    def run(*args, check_code: int | None = None, timeout: int = 300):
        proc = subprocess.run([attnprof_cli, *map(str, args)], capture_output=True, text=True,
                              timeout=timeout)
        if check_code is not None and proc.returncode != check_code:
            raise AssertionError(
                f"attnprof {' '.join(map(str, args))} exited {proc.returncode}, wanted {check_code}\n"
                f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
        return proc

    return run
