"""`attnprof analyze DIR` on the directories vLLM's and SGLang's profilers write, laid out at test
time from the real serving-engine traces (tracelens-inference fixtures) under the engines' own
file names (docs/cli.md, "Directories")."""
from __future__ import annotations

import json
import shutil


def lay_out(fixtures_dir, tmp_path, files: dict[str, str]):
    """files: name in the directory -> fixture file name."""
    for name, fixture in files.items():
        shutil.copyfile(fixtures_dir / "tracelens-inference" / fixture, tmp_path / name)
    return tmp_path


def test_vllm_profiler_directory_is_one_report_with_a_rank_per_worker(fixtures_dir, tmp_path, run_cli):
    # VLLM_TORCH_PROFILER_DIR/<instance_id>-rank-<rank>.<time_ns>.pt.trace.json.gz
    d = lay_out(fixtures_dir, tmp_path, {
        "5e1d-rank-0.1764581234567890123.pt.trace.json.gz": "vllm_gptoss_decode_full_graph_capture.pt.trace.json.gz",
        "5e1d-rank-1.1764581234567899999.pt.trace.json.gz": "vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz",
    })
    (d / "profiler_out_0.txt").write_text("key_averages table, not a trace")
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    run_cli("analyze", d, "--json", out, check_code=0)
    report = json.loads(out.read_text())
    ranks = report["ranks"]["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert "5e1d-rank-0." in ranks[0]["file"] and "5e1d-rank-1." in ranks[1]["file"]
    assert any(c["op"] == "vllm::unified_attention_with_output" for c in report["calls"])


def test_sglang_stage_files_give_one_report_per_stage_with_its_ranks(fixtures_dir, tmp_path, run_cli):
    # SGLANG_TORCH_PROFILER_DIR/<profile_id>-TP-<tp>-<stage>.trace.json.gz (profile_by_stage);
    # the 8192-token vLLM capture stands in for a prefill, SGLang's decode capture is the decode.
    files = {}
    for tp in (0, 1):
        files[f"1764581234.5-TP-{tp}-prefill.trace.json.gz"] = "vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz"
        files[f"1764581234.5-TP-{tp}-decode.trace.json.gz"] = "sglang_qwen3_8b_decode_graph_capture.json.gz"
    d = lay_out(fixtures_dir, tmp_path, files)
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    proc = run_cli("analyze", d, "--json", out, check_code=0)
    reports = json.loads(out.read_text())
    assert isinstance(reports, list) and len(reports) == 2
    prefill, decode = reports
    for report, stage in ((prefill, "prefill"), (decode, "decode")):
        ranks = report["ranks"]["ranks"]
        assert [r["rank"] for r in ranks] == [0, 1]
        assert all(f"-{stage}.trace.json.gz" in r["file"] for r in ranks)
        assert {c["phase"] for c in report["calls"]} == {stage}
    # 24 vLLM attention ops per forward; the 36 SGLang attention ops of the decode capture,
    # whose device time is unknown (ops traced during the HIP graph capture).
    assert sum(c["op"] == "vllm::unified_attention_with_output" for c in prefill["calls"]) % 24 == 0
    assert len(decode["calls"]) == 36
    assert all(c["device_time_unknown"] for c in decode["calls"])
    assert proc.stdout.count("TP-0-prefill.trace.json.gz") >= 1 and proc.stdout.count("TP-0-decode.trace.json.gz") >= 1


def test_two_runs_of_one_rank_and_stage_exit_2_naming_both(fixtures_dir, tmp_path, run_cli):
    # Two /start_profile cycles of SGLang into one directory: two profile ids, same rank and stage.
    fixture = "sglang_qwen3_8b_decode_graph_capture.json.gz"
    d = lay_out(fixtures_dir, tmp_path, {"1764581234.5-TP-0-decode.trace.json.gz": fixture,
                                         "1764589999.0-TP-0-decode.trace.json.gz": fixture})
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    proc = run_cli("analyze", d, "--json", out, check_code=2)
    assert proc.stderr.count("\n") == 1
    assert "1764581234.5-TP-0-decode.trace.json.gz" in proc.stderr and "1764589999.0-TP-0-decode.trace.json.gz" in proc.stderr
    assert not out.exists()
