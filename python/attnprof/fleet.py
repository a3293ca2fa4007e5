"""attnprof.fleet: thousands of rank traces analysed on Ray, merged into one fleet Report.

    import attnprof.fleet
    reports = attnprof.fleet.analyze("s3://bucket/run-17/", address="auto", out_dir="s3://bucket/run-17-reports/")
    reports[0].show()

One Ray task per trace runs the C++ engine (GIL released) and returns the rank's compact summary;
the driver holds summaries only and the core merges them (cpp/src/fleet), the same merge as
`attnprof analyze DIR` on local cores, so both give the same Report. `attnprof analyze ... --ray`
runs this module. Ray and fsspec are optional: ``pip install 'attnprof[ray]'`` (docs/fleet.md).
"""
from __future__ import annotations

import glob as _glob
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Callable, Iterable, Sequence

from . import _core

INSTALL_HINT = "pip install 'attnprof[ray]'"
# A task the scheduler lost (worker killed, node gone) is run again this many times before its
# rank is listed as failed.
DEFAULT_RETRIES = 2
EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 2, 130

ProgressFn = Callable[[int, int, int, int], None]  # files done, files total, bytes done, bytes total


class FleetError(Exception):
    """A one-line error for the user: bad input, Ray missing, every rank failed."""


# --- inputs -----------------------------------------------------------------------------------

def _is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _fsspec():
    try:
        import fsspec
    except ImportError:
        raise FleetError(f"traces in remote storage are read with fsspec: {INSTALL_HINT}") from None
    return fsspec


def _list_file(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\r ") for line in f.read().split("\n")]
    except OSError:
        raise FleetError(f"{path}: cannot read this list of traces") from None
    files = [line for line in lines if line and not line.startswith("#")]
    if not files:
        raise FleetError(f"{path}: the list names no trace")
    return files


def _remote_files(url: str, storage_options: dict) -> list[str]:
    fsspec = _fsspec()
    fs, root = fsspec.core.url_to_fs(url, **storage_options)
    protocol = url.split("://", 1)[0]
    try:
        if any(c in root for c in "*?["):
            found = fs.glob(root)
        elif fs.isdir(root):
            found = [p for p in fs.ls(root, detail=False) if _core.is_trace_file_name(p.rsplit("/", 1)[-1])]
        else:
            return [url]
    except Exception as e:  # the storage's own error (credentials, bucket) in one line
        raise FleetError(f"{url}: {type(e).__name__}: {e}") from None
    files = sorted(f"{protocol}://{p.lstrip('/')}" if protocol != "file" else p for p in found)
    if not files:
        raise FleetError(f"{url}: no trace files (*.pt.trace.json[.gz], *trace*.json[.gz]) there")
    return files


def expand_input(spec: str, storage_options: dict | None = None) -> list[str]:
    """The rank traces one input names: a directory's trace files, a glob's matches, an @list's
    lines (blank and # lines skipped), or the trace itself; local paths or fsspec URLs. The same
    files, in the same order, as ``attnprof analyze`` finds for a local input."""
    if spec.startswith("@") and len(spec) > 1:
        return _list_file(spec[1:])
    if _is_url(spec):
        return _remote_files(spec, storage_options or {})
    path = _local(spec)
    if os.path.isdir(path):
        files = _core.find_trace_files(path)
        if not files:
            raise FleetError(f"{path}: no trace files (*.pt.trace.json[.gz], *trace*.json[.gz]) in this directory")
        return files
    if any(c in path for c in "*?[") and not os.path.exists(path):
        files = sorted(_glob.glob(path))
        if not files:
            raise FleetError(f"{path}: no file matches")
        return files
    return [path]


def _size(path: str, storage_options: dict) -> int:
    try:
        if _is_url(path):
            fs, root = _fsspec().core.url_to_fs(path, **storage_options)
            return int(fs.size(root) or 0)
        return os.path.getsize(_local(path))
    except Exception:
        return 0  # the worker reports why the trace cannot be read


# --- the worker -------------------------------------------------------------------------------

def _stem(path: str) -> str:
    return _core.rank_report_stem(path.rstrip("/"))


def _write_text(target: str, text: str, storage_options: dict) -> None:
    if _is_url(target):
        with _fsspec().open(target, "w", **storage_options) as f:
            f.write(text)
    else:
        _core.write_file_atomic(_local(target), text)


def _write_rank_report(report_json: str, out_dir: str, trace: str, storage_options: dict) -> None:
    base = out_dir.rstrip("/") + "/" + _stem(trace)
    _write_text(base + ".report.json", _core.render(report_json, "json"), storage_options)
    _write_text(base + ".html", _core.render(report_json, "html"), storage_options)


def _analyze_one(path: str, want_report: bool, out_dir: str, torch_version: str, arch: str,
                 storage_options: dict, user_files: dict) -> tuple[str, str]:
    """One rank: (summary JSON, Report JSON or ""). Runs in a Ray worker; a remote trace is
    copied to the worker's disk first (the engine reads local files)."""
    copy_dir = None
    try:
        read_path = _local(path)
        if _is_url(path):
            copy_dir = tempfile.mkdtemp(prefix="attnprof-rank-")
            read_path = os.path.join(copy_dir, path.rsplit("/", 1)[-1])
            with _fsspec().open(path, "rb", **storage_options) as src, open(read_path, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        summary, report = _core.analyze_rank(read_path, path, want_report or bool(out_dir), torch_version, arch, 1,
                                             **user_files)
        if out_dir and report:
            _write_rank_report(report, out_dir, path, storage_options)
        return summary, report if want_report else ""
    except Exception as e:  # storage errors, a full disk: this rank fails, the fleet goes on
        return _core.failed_rank(path, f"{path}: {type(e).__name__}: {e}"), ""
    finally:
        if copy_dir:
            shutil.rmtree(copy_dir, ignore_errors=True)


# --- the driver -------------------------------------------------------------------------------

def _ray():
    try:
        import ray
    except ImportError:
        raise FleetError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def _connect(ray, address: str | None, runtime_env: dict | None) -> None:
    if ray.is_initialized():
        return
    import logging
    ray.init(address=address or None, runtime_env=runtime_env, include_dashboard=False,
             log_to_driver=False, logging_level=logging.ERROR)


def _largest_node_memory(ray) -> int:
    sizes = [int(n.get("Resources", {}).get("memory", 0)) for n in ray.nodes() if n.get("Alive")]
    return max(sizes, default=0)


def _bar(stream=None) -> ProgressFn:
    """One line on stderr over all ranks: files, bytes, rate and ETA (silent when not a terminal)."""
    stream = stream or sys.stderr
    start = time.monotonic()

    def draw(done: int, total: int, bytes_done: int, bytes_total: int) -> None:
        if not stream.isatty():
            return
        elapsed = max(time.monotonic() - start, 1e-6)
        rate = bytes_done / elapsed
        eta = (bytes_total - bytes_done) / rate if rate > 0 and done < total else 0.0
        stream.write(f"\rranks {done}/{total}, {_core.bytes_text(bytes_done)}/{_core.bytes_text(bytes_total)}, "
                     f"{_core.bytes_text(rate)}/s, ETA {_core.time_text(eta * 1e6)} ")
        if done == total:
            stream.write("\n")
        stream.flush()
    return draw


def _lost_rank(path: str, error: Exception, retries: int) -> str:
    first_line = (str(error).strip().splitlines() or [""])[0][:300]
    return _core.failed_rank(path, f"{path}: worker lost after {retries} retries ({type(error).__name__}: {first_line})")


def _run_tasks(ray, task, files: Sequence[str], sizes: Sequence[int], *, want_report: bool, out_dir: str,
               options: dict, retries: int, progress: ProgressFn | None) -> list[tuple[str, str]]:
    """Every file as a task; results as they complete. Ctrl-C cancels what is still running."""
    largest = _largest_node_memory(ray)
    pending: dict[Any, int] = {}
    for i, (path, size) in enumerate(zip(files, sizes)):
        memory = _core.rank_task_memory_bytes(size, path.endswith(".gz"))
        if largest:
            memory = min(memory, largest)  # a task no node can hold would wait forever
        ref = task.options(memory=memory, max_retries=retries).remote(path, want_report, out_dir, **options)
        pending[ref] = i
    results: list[tuple[str, str] | None] = [None] * len(files)
    total_bytes, done_bytes, done = sum(sizes), 0, 0
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    results[i] = ray.get(ref)
                except ray.exceptions.RayError as e:  # killed worker, lost node, OOM: retried, then failed
                    results[i] = (_lost_rank(files[i], e, retries), "")
                done, done_bytes = done + 1, done_bytes + sizes[i]
                if progress:
                    progress(done, len(files), done_bytes, total_bytes)
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    return results  # type: ignore[return-value]


def _read_text(path: str, storage_options: dict) -> str:
    if _is_url(path):
        with _fsspec().open(path, "r", **storage_options) as f:
            return f.read()
    with open(_local(path), encoding="utf-8") as f:
        return f.read()


def _rank_files(paths: str | Iterable[str], storage: dict) -> tuple[list[str], str]:
    """The rank traces ``paths`` names, and the fleet's label (the first spec, and how many more)."""
    specs = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    specs = [os.fspath(s) for s in specs]
    files = [f for spec in specs for f in expand_input(spec, storage)]
    if not files:
        raise FleetError("no rank traces given")
    return files, specs[0] if len(specs) == 1 else f"{specs[0]} (+{len(specs) - 1} more)"


def _raise_on_failed_ranks(summaries: list[str]) -> None:
    failed = [s for s in map(json.loads, summaries) if s.get("error")]
    if failed:
        raise FleetError(f"--strict: {len(failed)} rank trace(s) failed; first: {failed[0]['error']}")


def _user_files(**paths: str | None) -> dict:
    """Each given user file as (name, text), checked by the core before any task starts."""
    files = {}
    for kind, path in paths.items():
        if not path:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                files[kind] = (os.fspath(path), f.read())
        except OSError as e:
            raise FleetError(f"{path}: {e.strerror or e}") from None
    try:
        _core.check_user_files(**files)
    except ValueError as e:
        raise FleetError(str(e)) from None
    return files


def analyze(paths: str | Iterable[str], address: str | None = None, *, out_dir: str | None = None,
            strict: bool = False, progress: ProgressFn | bool | None = None, retries: int = DEFAULT_RETRIES,
            torch_version: str = "", arch: str = "", storage_options: dict | None = None,
            runtime_env: dict | None = None, gpu_spec: str | None = None, kernels: str | None = None) -> list:
    """Analyses rank traces on Ray and returns the fleet Report of each profiling stage
    (AttentionReport; one for a run without stages). ``paths``: a directory, glob, @list, trace
    or URL, or a list of them (all one fleet). ``address``: None starts a local Ray (or uses the
    one this process already joined), "auto" / "ray://head:10001" an existing cluster.
    ``out_dir``: each rank's full Report (``<trace>.report.json`` and ``.html``) written there by
    its worker. ``strict``: a rank that fails raises FleetError instead of being listed. Raises
    FleetError with one line for bad input or a missing Ray. ``gpu_spec`` and ``kernels``: the
    user files of ``attnprof analyze --gpu-spec/--kernels``, read here and sent to every worker."""
    from .report import AttentionReport

    storage = storage_options or {}
    files, label = _rank_files(paths, storage)
    ray = _ray()
    _connect(ray, address, runtime_env)
    task = ray.remote(_analyze_one)
    options = {"torch_version": torch_version, "arch": arch, "storage_options": storage,
               "user_files": _user_files(gpu_spec=gpu_spec, kernels=kernels)}
    report_fn = _bar() if progress is True or progress is None else (progress or None)
    sizes = [_size(f, storage) for f in files]
    results = _run_tasks(ray, task, files, sizes, want_report=False, out_dir=out_dir or "", options=options,
                         retries=retries, progress=report_fn)
    summaries = [summary for summary, _ in results]
    if strict:
        _raise_on_failed_ranks(summaries)
    try:
        body_files = _core.fleet_body_files(summaries, label)
    except ValueError as e:
        raise FleetError(str(e)) from None
    bodies = _bodies(ray, task, body_files, out_dir, options, retries, storage)
    return [AttentionReport(j) for j in _core.merge_fleet(summaries, bodies, label, out_dir or "")]


def _bodies(ray, task, body_files: list[str], out_dir: str | None, options: dict, retries: int,
            storage: dict) -> dict[str, str]:
    """The Report of each stage's body rank: read from out_dir where its worker wrote it, else
    analysed once more (one rank of the fleet)."""
    bodies: dict[str, str] = {}
    if out_dir:
        for f in body_files:
            try:
                bodies[f] = _read_text(out_dir.rstrip("/") + "/" + _stem(f) + ".report.json", storage)
            except OSError:
                pass
    missing = [f for f in body_files if f not in bodies]
    if missing:
        results = _run_tasks(ray, task, missing, [0] * len(missing), want_report=True, out_dir="",
                             options=options, retries=retries, progress=None)
        for f, (summary, report) in zip(missing, results):
            if not report:
                raise FleetError(json.loads(summary).get("error") or f"{f}: no Report")
            bodies[f] = report
    return bodies


def analyze_local(paths: str | Iterable[str]) -> list:
    """The in-process path (local cores, no Ray), as ``attnprof analyze DIR``: one fleet Report
    per stage over the same files as analyze()."""
    from .report import AttentionReport

    specs = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    specs = [os.fspath(s) for s in specs]
    files = [f for spec in specs for f in expand_input(spec)]
    label = specs[0] if len(specs) == 1 else f"{specs[0]} (+{len(specs) - 1} more)"
    try:
        return [AttentionReport(j) for j in _core.analyze_files(files, label)]
    except ValueError as e:
        raise FleetError(str(e)) from None


# --- `attnprof analyze --ray` -----------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    """Runs the request `attnprof analyze ... --ray` hands over (--request JSON): each input its
    own fleet, as the CLI does on local cores; outputs written once every rank is merged."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2 or argv[0] != "--request":
        print("usage: python -m attnprof.fleet --request JSON (run by `attnprof analyze ... --ray`)", file=sys.stderr)
        return EXIT_BAD_INPUT
    request = json.loads(argv[1])
    try:
        reports = []
        for spec in request["inputs"]:
            reports += analyze(spec, request.get("address") or None, out_dir=request.get("out_dir") or None,
                               strict=bool(request.get("strict")), torch_version=request.get("torch", ""),
                               arch=request.get("arch", ""), gpu_spec=request.get("gpu_spec") or None,
                               kernels=request.get("kernels") or None)
        printed = _core.write_reports([r.to_json() for r in reports], request.get("outputs", {}),
                                      request.get("print_format", "text"))
    except (FleetError, ValueError) as e:
        print(f"attnprof analyze: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("attnprof analyze: error: interrupted: the fleet's tasks were cancelled and nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    sys.stdout.write(printed)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
