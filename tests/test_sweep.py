"""attnprof.sweep on CPU: a small LLaMA-style model at 4 lengths, eager vs SDPA, end to end
(torch.profiler traces -> the C++ scale pipeline through the bindings)."""
from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers")
attnprof = pytest.importorskip("attnprof")

LENGTHS = [128, 256, 512, 1024]


@pytest.fixture(scope="module")
def small_llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                                      intermediate_size=128, num_hidden_layers=2, vocab_size=1000,
                                      max_position_embeddings=4096)
    return transformers.LlamaModel(config).eval()


def make_inputs(length: int) -> dict:
    return {"input_ids": torch.randint(0, 1000, (2, length)), "use_cache": False}


@pytest.fixture(scope="module")
def sweep_report(small_llama, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    report = attnprof.sweep(small_llama, make_inputs, lengths=LENGTHS, backends=["eager", "sdpa"],
                            out_dir=out, memory_cap="64MiB")
    return report, out


def series_by_backend(report) -> dict:
    return {s["backend"]: s for s in report.data["scaling"]["series"]}


def test_sweep_writes_one_trace_per_backend_and_length(sweep_report):
    _, out = sweep_report
    assert sorted(p.name for p in out.glob("*.json")) == sorted(
        [f"sweep_eager_s{s}.pt.trace.json" for s in LENGTHS] + [f"sweep_sdpa_s{s}.pt.trace.json" for s in LENGTHS])


def test_eager_memory_fit_is_quadratic(sweep_report):
    eager = series_by_backend(sweep_report[0])["eager"]
    assert eager["lengths"] == LENGTHS
    assert eager["memory_fit"]["growth"] == "quadratic"
    assert eager["memory_fit"]["c2"] > 0
    # Scores of 2 layers' worth of B*H*S^2 grow 4x per doubling: the last point dominates.
    assert eager["peak_bytes"][-1] > 3 * eager["peak_bytes"][-2]


def test_sdpa_flash_memory_fit_is_linear(sweep_report):
    series = series_by_backend(sweep_report[0])
    fused = [s for name, s in series.items() if name != "eager"]
    assert len(fused) == 1, series.keys()
    sdpa = fused[0]
    assert sdpa["memory_fit"]["growth"] == "linear"
    assert sdpa["memory_fit"]["rel_rms_error"] < 0.05
    ratio = sdpa["peak_bytes"][-1] / sdpa["peak_bytes"][-2]
    assert 1.8 < ratio < 2.2  # doubling S doubles the activation


def test_oom_threshold_is_reported_per_backend_for_the_cap(sweep_report):
    report = sweep_report[0]
    scaling = report.data["scaling"]
    assert scaling["memory_budget_bytes"] == 64 * 2**20
    series = series_by_backend(report)
    eager_max = series["eager"]["oom_threshold_tokens"]
    fused_max = [s for n, s in series.items() if n != "eager"][0]["oom_threshold_tokens"]
    assert 0 < eager_max < fused_max  # the quadratic eager curve hits the cap first
    assert "Scaling with sequence length" in report.text()


def test_cpu_runs_use_the_allocated_bytes_threshold_and_say_the_live_check_needs_a_gpu(sweep_report):
    if torch.cuda.is_available():
        pytest.skip("on CUDA the sweep measures the first-OOM length instead")
    report = sweep_report[0]
    for series in report.data["scaling"]["series"]:
        # CPU traces: the CPU allocator is not PyTorch's caching allocator (nothing to replay).
        assert series["oom_method"] == "allocated-bytes fit"
        assert "caching allocator" in series["oom_note"]
        assert series["measured_oom_tokens"] == -1
        assert series["measured_oom_note"].startswith("needs a GPU")
    assert "measured: needs a GPU" in report.text()


def test_unknown_backend_is_a_value_error(small_llama):
    with pytest.raises(ValueError, match="unknown backend"):
        attnprof.sweep(small_llama, make_inputs, lengths=[64], backends=["warp-speed"])
