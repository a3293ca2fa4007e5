"""attnprof diff / attnprof.compare on real torch 2.13 CPU runs: two runs of the same model do
not trip the gate (noise), a commit that changes head_dim is named as the cause (temporary git
repository), and the Python API returns the CLI's verdict."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import attnprof
from attnprof.testing import assert_no_attention_regression

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "h200-torch2.11" / "traces"
LLAMA = FIXTURES / "llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz"
LLAMA_MATH = FIXTURES / "llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz"

# A two-layer attention model with its head_dim in the source, and a script that profiles
# STEPS forward passes (one ProfilerStep each, with_stack so frames name model.py).
MODEL_PY = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

HEAD_DIM = {head_dim}
HEADS = 4


class Attention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.qkv = nn.Linear(hidden, 3 * HEADS * HEAD_DIM)
        self.out = nn.Linear(HEADS * HEAD_DIM, hidden)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, HEADS, HEAD_DIM).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, s, HEADS * HEAD_DIM))


class Model(nn.Module):
    def __init__(self, hidden=64, layers=2):
        super().__init__()
        self.layers = nn.ModuleList(Attention(hidden) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x
"""

RUN_PY = """\
import sys
import torch
from model import Model

torch.manual_seed(0)
torch.set_num_threads(1)
model = Model().eval()
x = torch.randn(2, 64, 64)
steps = int(sys.argv[2])
with torch.no_grad():
    for _ in range(3):
        model(x)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                with_stack=True) as prof:
        for _ in range(steps):
            model(x)
            prof.step()
prof.export_chrome_trace(sys.argv[1])
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=attnprof", "-c", "user.email=t@example.com", *args],
                           cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def record(repo: Path, trace: Path, steps: int = 5) -> None:
    subprocess.run([sys.executable, "run.py", str(trace), str(steps)], cwd=repo, check=True, timeout=300)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A git work tree holding the model; the first commit is recorded twice (two runs)."""
    repo = tmp_path_factory.mktemp("project")
    git(repo, "init", "-q")
    (repo / "model.py").write_text(MODEL_PY.format(head_dim=32))
    (repo / "run.py").write_text(RUN_PY)
    (repo / "README.md").write_text("tiny model\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tiny model with head_dim 32")
    (repo / "traces").mkdir()
    record(repo, repo / "traces" / "run1.json")
    record(repo, repo / "traces" / "run2.json")
    return repo


def test_two_cpu_runs_of_the_same_model_do_not_trip_the_gate(project, run_cli, tmp_path):
    out = tmp_path / "verdict.json"
    candidate = project / "traces" / "run2.json"
    proc = run_cli("diff", project / "traces" / "run1.json", candidate, "--json", out)
    # A build or another job starting on this 2-core machine between the two recordings slows
    # the second one for real (seen once: 2x). Re-record it, at most twice: a gate that trips
    # on identical runs recorded under steady load fails all three attempts.
    for attempt in range(2):
        if proc.returncode == 0:
            break
        candidate = project / "traces" / f"run2_again{attempt}.json"
        record(project, candidate)
        proc = run_cli("diff", project / "traces" / "run1.json", candidate, "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pair = json.loads(out.read_text())["diff"]["pairs"][0]  # --json writes a Report; the verdict is its diff
    assert pair["regression"] is False
    assert pair["calls_before"] == pair["calls_after"] == 2 * 5  # 2 layers x 5 steps
    time = pair["attention_device_time_us"]
    assert time["before_samples"] == time["after_samples"] == 5  # one sample per profiler step
    assert time["noise"] > 0
    assert pair["backend_changes"] == [] and pair["causes"]["inputs"] == []


def test_commit_changing_head_dim_is_named(project, attnprof_cli, run_cli, tmp_path):
    repo = project
    before = git(repo, "rev-parse", "HEAD")
    # Reports of traces inside the work tree carry its commit and the model's file (SourceInfo.code).
    r = subprocess.run([attnprof_cli, "analyze", "traces/run1.json", "--json", str(tmp_path / "before.json")],
                       cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    (repo / "model.py").write_text(MODEL_PY.format(head_dim=16))
    git(repo, "commit", "-q", "-am", "halve head_dim to 16")
    changed = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("tiny model, docs\n")
    git(repo, "commit", "-q", "-am", "docs only")
    record(repo, repo / "traces" / "after.json", steps=2)
    r = subprocess.run([attnprof_cli, "analyze", "traces/after.json", "--json", str(tmp_path / "after.json")],
                       cwd=repo, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr

    recorded = json.loads((tmp_path / "before.json").read_text())["source"]["code"]
    assert recorded["git_commit"] == before and recorded["git_dirty"] is False
    assert "model.py" in recorded["source_files"]

    md = tmp_path / "pr.md"
    proc = run_cli("diff", tmp_path / "before.json", tmp_path / "after.json", "--md", md)
    assert proc.returncode in (0, 1), proc.stderr
    text = md.read_text()
    assert f"{before[:12]} -> {git(repo, 'rev-parse', 'HEAD')[:12]}" in text
    assert "1 commit(s) in between touching model.py" in text
    assert f"`{changed[:12]}` halve head\\_dim to 16" in text  # Markdown: the underscore escaped
    assert "docs only" not in text  # README-only commit: not a file of the attention modules
    assert "head\\_dim 32 -> 16 (layers 0-1)" in text  # as Markdown shows them literally


def test_compare_returns_the_cli_verdict_and_the_pytest_helper_raises_with_markdown(run_cli, tmp_path):
    verdict = attnprof.compare(LLAMA, LLAMA_MATH)
    assert verdict.regression and verdict.exit_code == 1
    cli = run_cli("diff", LLAMA, LLAMA_MATH, "--json", tmp_path / "v.json")
    assert cli.returncode == 1
    assert verdict.data == json.loads((tmp_path / "v.json").read_text())["diff"]
    assert "| 0 |  | cudnn -> math |" in verdict.markdown

    assert attnprof.compare(LLAMA, LLAMA_MATH, max_fused_drop=100, max_time_increase="5000%",
                            max_memory_increase="10000%").regression is False
    with pytest.raises(AssertionError, match="layers 0-3: cudnn -> math"):
        assert_no_attention_regression(LLAMA, LLAMA_MATH)
    assert assert_no_attention_regression(LLAMA, LLAMA).regression is False
    with pytest.raises(ValueError, match="not a percentage"):
        attnprof.compare(LLAMA, LLAMA, max_time_increase="lots")


def test_compare_accepts_attention_reports_and_several_runs(tmp_path):
    base = attnprof.analyze(LLAMA)
    verdict = attnprof.compare([base, LLAMA], LLAMA_MATH)
    pair = verdict.pairs[0]
    assert pair["baseline_runs"] == 2
    assert pair["attention_device_time_us"]["before_samples"] == 2
    assert [c["layers_text"] for c in pair["backend_changes"]] == ["layers 0-3"]
