"""attnprof.fleet on a real local Ray: rank traces made from the H200 fixtures (bench/fleet_traces.py),
the same fleet Report as the in-process path, failed and lost ranks, S3 on a loopback server."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import fleet_traces  # noqa: E402

import attnprof.fleet as fleet  # noqa: E402

ray = pytest.importorskip("ray")
ATTNPROF = str(Path(sys.executable).parent / "attnprof")
MATH_RANK, SLOW_RANK, SLOW_LAYER, CORRUPT_RANK = 5, 2, 1, 7


@pytest.fixture(scope="module")
def eight_ranks(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fleet") / "run"
    fleet_traces.make_fleet(d, 8, math_ranks=(MATH_RANK,), slow_layers={SLOW_RANK: SLOW_LAYER},
                            corrupt_ranks=(CORRUPT_RANK,))
    return d


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def ranks_of(report) -> dict:
    return report.data["ranks"]


def test_ray_fleet_report_is_the_in_process_report(eight_ranks, local_ray):
    on_ray = fleet.analyze(str(eight_ranks), progress=False)
    in_process = fleet.analyze_local(str(eight_ranks))
    assert len(on_ray) == len(in_process) == 1
    assert on_ray[0].to_json() == in_process[0].to_json()


def test_fleet_names_the_rank_of_another_backend_the_slow_layer_and_the_corrupt_file(eight_ranks, local_ray):
    report = fleet.analyze(str(eight_ranks), progress=False)[0]
    section = ranks_of(report)
    assert [r["rank"] for r in section["ranks"]] == [0, 1, 2, 3, 4, 5, 6]
    assert [Path(f["file"]).name for f in section["failed"]] == [f"rank{CORRUPT_RANK}.pt.trace.json.gz"]
    assert "malformed JSON" in section["failed"][0]["error"] or "gzip" in section["failed"][0]["error"]

    backend = [d for d in section["disagreements"] if d["facet"] == "backend"]
    assert {d["rank"] for d in backend} == {MATH_RANK}
    assert {d["layer"] for d in backend} == {0, 1, 2, 3}
    assert all(d["value"] == "math" and d["majority"] == "cudnn" and d["majority_ranks"] == 6 for d in backend)
    assert all("cudnn rejected" in d["cause"] for d in backend)

    overall = {s["rank"]: s for s in section["stragglers"] if s["layer"] == -1}
    assert set(overall) == {MATH_RANK, SLOW_RANK}
    assert overall[SLOW_RANK]["worst_layer"] == SLOW_LAYER
    layer_stragglers = [(s["rank"], s["layer"]) for s in section["stragglers"] if s["layer"] >= 0]
    assert (SLOW_RANK, SLOW_LAYER) in layer_stragglers
    assert not [s for s in layer_stragglers if s[0] == SLOW_RANK and s[1] != SLOW_LAYER]

    groups = {(g["desc"], g["name"]): g for g in section["groups"]}
    assert groups[("tp", "1")]["ranks"] == [0, 1, 2, 3] and groups[("tp", "1")]["slowest_rank"] == SLOW_RANK
    assert groups[("tp", "2")]["ranks"] == [4, 5, 6] and groups[("tp", "2")]["slowest_rank"] == MATH_RANK
    rules = [f["rule"] for f in report.findings[:4]]
    assert rules == ["ranks.failed", "ranks.disagreement", "ranks.stragglers", "ranks.slowest"]


def test_strict_makes_a_failed_rank_an_error(eight_ranks, local_ray):
    with pytest.raises(fleet.FleetError, match="--strict: 1 rank trace"):
        fleet.analyze(str(eight_ranks), strict=True, progress=False)


def test_progress_counts_every_rank_and_byte_once(eight_ranks, local_ray):
    seen = []
    fleet.analyze(str(eight_ranks), progress=lambda *p: seen.append(p))
    total_bytes = sum(p.stat().st_size for p in eight_ranks.iterdir())
    assert [s[0] for s in seen] == list(range(1, 9))
    assert all(s[1] == 8 and s[3] == total_bytes for s in seen)
    assert seen[-1][2] == total_bytes and [s[2] for s in seen] == sorted(s[2] for s in seen)


def test_out_dir_holds_each_ranks_report_and_html(eight_ranks, local_ray, tmp_path):
    report = fleet.analyze(str(eight_ranks), out_dir=str(tmp_path), progress=False)[0]
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted([f"rank{r}.report.json" for r in range(7)] + [f"rank{r}.html" for r in range(7)])
    rank5 = json.loads((tmp_path / "rank5.report.json").read_text())
    assert rank5["summary"]["attention_device_time_us"] == ranks_of(report)["ranks"][5]["attention_device_time_us"]
    assert [r["report_html"] for r in ranks_of(report)["ranks"]] == [f"{tmp_path}/rank{r}.html" for r in range(7)]


def test_glob_and_list_inputs_name_the_same_ranks(eight_ranks, local_ray, tmp_path):
    listing = tmp_path / "ranks.txt"
    listing.write_text("# the run\n" + "\n".join(str(p) for p in sorted(eight_ranks.iterdir())) + "\n")
    by_dir = ranks_of(fleet.analyze(str(eight_ranks), progress=False)[0])
    by_glob = ranks_of(fleet.analyze(str(eight_ranks / "rank*.pt.trace.json.gz"), progress=False)[0])
    by_list = ranks_of(fleet.analyze(f"@{listing}", progress=False)[0])
    assert by_dir == by_glob == by_list


def test_cli_ray_writes_the_same_bytes_as_the_cli_on_local_cores(eight_ranks, tmp_path):
    local = subprocess.run([ATTNPROF, "analyze", str(eight_ranks), "--json", str(tmp_path / "local.json")],
                           capture_output=True, text=True)
    assert local.returncode == 0, local.stderr
    on_ray = subprocess.run([ATTNPROF, "analyze", "--ray", str(eight_ranks), "--json", str(tmp_path / "ray.json"),
                             "--md", str(tmp_path / "ray.md")], capture_output=True, text=True, timeout=300)
    assert on_ray.returncode == 0, on_ray.stderr
    assert (tmp_path / "local.json").read_bytes() == (tmp_path / "ray.json").read_bytes()
    assert "rank 5 ran math" in on_ray.stdout and "rank 5 ran math" in (tmp_path / "ray.md").read_text()
    strict = subprocess.run([ATTNPROF, "analyze", str(eight_ranks), "--ray", "--strict", "--json",
                             str(tmp_path / "strict.json")], capture_output=True, text=True, timeout=300)
    assert strict.returncode == 2 and "--strict: 1 rank trace(s) failed" in strict.stderr
    assert not (tmp_path / "strict.json").exists()


def test_cli_ray_without_ray_says_how_to_install_it(eight_ranks, tmp_path):
    # A Python in which `import ray` fails as it does where Ray is not installed.
    shadow = tmp_path / "no_ray"
    (shadow / "ray").mkdir(parents=True)
    (shadow / "ray" / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    env = dict(os.environ, PYTHONPATH=str(shadow))
    out = subprocess.run([ATTNPROF, "analyze", str(eight_ranks), "--ray", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "attnprof analyze: error: --ray needs Ray, which is not installed: pip install 'attnprof[ray]'"]
    assert not (tmp_path / "r.json").exists()


def test_cli_remote_input_without_ray_is_one_line(tmp_path):
    out = subprocess.run([ATTNPROF, "analyze", "s3://bucket/run/"], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "attnprof analyze: error: s3://bucket/run/: a trace in remote storage is read by the fleet's workers: add --ray"]


CTRL_C_AFTER_TWO_RANKS = """
import json, os, signal, sys
import attnprof.fleet as fleet
# Ctrl-C as a user gives it: SIGINT to the driver while the fleet's tasks run (after two ranks).
fleet._bar = lambda stream=None: (lambda done, *rest: done == 2 and os.kill(os.getpid(), signal.SIGINT))
sys.exit(fleet.main(["--request", json.dumps({"inputs": [sys.argv[1]], "outputs": {"json": sys.argv[2]}})]))
"""


def test_ctrl_c_cancels_the_tasks_and_writes_nothing(tmp_path):
    run = tmp_path / "big"
    fleet_traces.make_fleet(run, 24, padding_events=20_000)
    out_json = tmp_path / "fleet.json"
    proc = subprocess.run([sys.executable, "-c", CTRL_C_AFTER_TWO_RANKS, str(run), str(out_json)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "attnprof analyze: error: interrupted: the fleet's tasks were cancelled and nothing was written")
    assert not out_json.exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_server():
    """moto's S3 server on loopback: a real HTTP S3 endpoint that s3fs talks to as to AWS."""
    pytest.importorskip("moto")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield endpoint
    proc.terminate()
    proc.wait(timeout=10)


def test_traces_in_s3_are_read_by_the_workers(eight_ranks, local_ray, s3_server, tmp_path):
    import s3fs
    options = {"key": "testing", "secret": "testing", "client_kwargs": {"endpoint_url": s3_server}}
    fs = s3fs.S3FileSystem(**options)
    fs.mkdir("traces")
    for p in sorted(eight_ranks.iterdir()):
        fs.put(str(p), f"traces/run/{p.name}")
    reports = fleet.analyze("s3://traces/run/", storage_options=options, out_dir="s3://traces/reports/",
                            progress=False)
    section = ranks_of(reports[0])
    assert [r["file"] for r in section["ranks"]] == [f"s3://traces/run/rank{r}.pt.trace.json.gz" for r in range(7)]
    assert section["failed"][0]["file"] == f"s3://traces/run/rank{CORRUPT_RANK}.pt.trace.json.gz"
    local = ranks_of(fleet.analyze_local(str(eight_ranks))[0])
    assert [r["attention_device_time_us"] for r in section["ranks"]] == \
        [r["attention_device_time_us"] for r in local["ranks"]]
    assert {d["rank"] for d in section["disagreements"] if d["facet"] == "backend"} == {MATH_RANK}
    assert fs.exists("traces/reports/rank5.report.json") and fs.exists("traces/reports/rank5.html")


def test_a_node_removed_mid_run_loses_no_rank(tmp_path):
    """Three nodes on this machine (ray.cluster_utils.Cluster); one is removed while its tasks
    run: Ray retries them on the others and every rank is merged."""
    from ray.cluster_utils import Cluster

    run = tmp_path / "run"
    fleet_traces.make_fleet(run, 12, math_ranks=(3,), padding_events=60_000)
    if ray.is_initialized():
        ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    try:
        workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
        ray.init(address=cluster.address, log_to_driver=False)
        cluster.wait_for_nodes()
        removed = []

        def remove_after_first(done, total, *_):
            if done == 1 and not removed:
                cluster.add_node(num_cpus=1)  # capacity for the retries
                cluster.remove_node(workers[0], allow_graceful=False)
                removed.append(True)

        report = fleet.analyze(str(run), progress=remove_after_first, retries=3)[0]
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert removed
    section = ranks_of(report)
    assert section["failed"] == []
    assert [r["rank"] for r in section["ranks"]] == list(range(12))
    assert {d["rank"] for d in section["disagreements"] if d["facet"] == "backend"} == {3}


def test_fleet_runs_where_pytorch_is_not_installed(eight_ranks, tmp_path):
    # An analysis node without PyTorch: `import torch` fails as it does there.
    shadow = tmp_path / "no_torch"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n")
    script = ("import sys, attnprof, attnprof.fleet as f\n"
              "assert 'torch' not in sys.modules or sys.modules['torch'] is None or not hasattr(attnprof, 'profile')\n"
              "r = f.analyze_local(sys.argv[1])[0]\n"
              "print(len(r.data['ranks']['ranks']), r.data['ranks']['slowest_rank'])\n")
    out = subprocess.run([sys.executable, "-c", script, str(eight_ranks)], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(shadow)), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["7", str(MATH_RANK)]



def test_user_kernels_and_gpu_spec_files_reach_every_worker(tmp_path, fixtures_dir, local_ray):
    # The compiled-flash fixture with its op, inner op and kernel renamed: no built-in catalog
    # entry knows them, the user's --kernels file does.
    import gzip
    text = gzip.open(fixtures_dir / "tracelens" / "torch_compile_triton_trace.json.gz", "rt").read()
    for old, new in (("aten::_scaled_dot_product_flash_attention", "acme::dot_product_fwd"),
                     ("aten::_flash_attention_forward", "acme::dot_product_impl"), ('"attn_fwd"', '"acme_dot_kernel"')):
        text = text.replace(old, new)
    run = tmp_path / "run"
    run.mkdir()
    for rank in (0, 1):
        (run / f"rank{rank}.pt.trace.json").write_text(text)
    kernels = tmp_path / "kernels.toml"
    kernels.write_text('[[kernels]]\npattern = "acme_dot"\nmatch = "prefix"\nlibrary = "acme_kernels"\n'
                       'vendor = "amd"\nbackend = "external"\ndirection = "forward"\n')
    spec = tmp_path / "gpu.json"
    spec.write_text('{"name": "measured MI300X", "bandwidth_gbs": 3000, "tflops": {"bf16": 600}}')
    assert fleet.analyze(str(run), progress=False)[0].calls == []
    report = fleet.analyze(str(run), progress=False, kernels=str(kernels), gpu_spec=str(spec))[0]
    assert {c["library"] for c in report.calls} == {"acme_kernels"}
    assert "measured MI300X" in report.to_json()
    bad = tmp_path / "bad.json"
    bad.write_text('{"kernels": [{"pattern": "x", "match": "glob"}]}')
    with pytest.raises(fleet.FleetError, match="bad.json"):
        fleet.analyze(str(run), progress=False, kernels=str(bad))
