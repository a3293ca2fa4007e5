"""attnprof.sweep: run a model at several sequence lengths (and attention backends) under
torch.profiler, then fit time(S) and memory(S) per backend in the C++ core.

    report = attnprof.sweep(model, lambda S: {"input_ids": torch.randint(0, 1000, (2, S))},
                            lengths=[128, 256, 512, 1024], backends=["eager", "sdpa"])
    report.show()                       # fits, OOM threshold, backend advice
    report.data["scaling"]["series"]    # the same as plain data

Python only runs the model and writes traces; fitting, OOM thresholds and advice are the
`attnprof scale` code (attnprof._core.scale), see docs/cost.md.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import torch

from . import _core
from ._quiet import ProfilerLogsHidden
from .report import AttentionReport

# Backend names accepted by sweep(): the model's own attention implementations, and the SDPA
# backends torch.nn.attention.sdpa_kernel can force on a GPU (the core's vocabulary: the
# pinnable backends and their SDPBackend members).
_SDPA_BACKENDS = {b["name"]: b["sdp_backend"] for b in _core.BACKENDS if b["pinnable"]}
_IMPLEMENTATIONS = ("eager", "sdpa")


def _set_implementation(model: torch.nn.Module, name: str) -> None:
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(name)
    elif hasattr(model, "config"):
        model.config._attn_implementation = name
    else:
        raise ValueError(f"cannot switch {type(model).__name__} to attn_implementation={name!r}")


@contextlib.contextmanager
def _attention_backend(model: torch.nn.Module, backend: str) -> Iterator[None]:
    if backend not in _IMPLEMENTATIONS and backend not in _SDPA_BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: use one of "
                         f"{', '.join(_IMPLEMENTATIONS + tuple(_SDPA_BACKENDS))}")
    previous = getattr(getattr(model, "config", None), "_attn_implementation", None)
    _set_implementation(model, "eager" if backend == "eager" else "sdpa")
    try:
        if backend in _SDPA_BACKENDS:
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel([getattr(SDPBackend, _SDPA_BACKENDS[backend])]):
                yield
        else:
            yield
    finally:
        if previous is not None:
            _set_implementation(model, previous)


def _run(model: torch.nn.Module, inputs: Any) -> None:
    with torch.inference_mode():
        if isinstance(inputs, dict):
            model(**inputs)
        elif isinstance(inputs, (tuple, list)):
            model(*inputs)
        else:
            model(inputs)
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _progress(done: int, total: int, label: str) -> None:
    if not sys.stderr.isatty():
        return
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\rattnprof sweep [{'#' * filled}{' ' * (width - filled)}] {done}/{total} {label:<24}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _trace_name(backend: str, length: int) -> str:
    # The core's forced-backend marker in the name of a forced SDPA run: `attnprof scale`
    # treats the other runs as PyTorch's own pick (docs/cost.md, "Backend advice").
    if backend in _SDPA_BACKENDS:
        return f"sweep_sdpa{_core.FORCED_BACKEND_MARKER}{backend}_s{length}.pt.trace.json"
    return f"sweep_{backend}_s{length}.pt.trace.json"


def _backend_of_trace(path: str, backends: list[str]) -> str | None:
    """The sweep backend whose trace name (see _trace_name) the file carries."""
    name = Path(path).name
    for backend in backends:
        if name.startswith(_trace_name(backend, 0).rsplit("_s0", 1)[0] + "_s"):
            return backend
    return None


def _fits_on_device(model: torch.nn.Module, make_inputs: Callable[[int], Any], length: int) -> bool:
    """One cold pass at ``length`` (cache emptied first, as the simulation assumes)."""
    gc.collect()
    torch.cuda.empty_cache()
    try:
        _run(model, make_inputs(length))
        return True
    except torch.cuda.OutOfMemoryError:
        return False
    finally:
        gc.collect()
        torch.cuda.empty_cache()


def _measure_first_oom(model: torch.nn.Module, make_inputs: Callable[[int], Any], start: int,
                       ceiling: int) -> int:
    """Largest S that ran (doubling from ``start`` until a pass fails, then bisection to
    0.5%); ``ceiling`` when nothing up to it failed."""
    good, bad = 0, max(1, start)
    while bad <= ceiling and _fits_on_device(model, make_inputs, bad):
        good, bad = bad, bad * 2
    if bad > ceiling:
        return good
    while bad - good > max(1, good // 200):
        mid = (good + bad) // 2
        if _fits_on_device(model, make_inputs, mid):
            good = mid
        else:
            bad = mid
    return good


def _check_oom_thresholds(report_json: str, model: torch.nn.Module, make_inputs: Callable[[int], Any],
                          backends: list[str], lengths: list[int]) -> str:
    """Adds the measured first-OOM length next to each predicted one (CUDA only)."""
    data = json.loads(report_json)
    scaling = data.get("scaling")
    if not scaling or scaling.get("memory_budget_bytes", 0) <= 0:
        return report_json
    if not torch.cuda.is_available():
        for series in scaling["series"]:
            series["measured_oom_note"] = ("needs a GPU: the check runs the model under "
                                           "torch.cuda.set_per_process_memory_fraction, and this run has no CUDA device")
        return json.dumps(data)
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    fraction = scaling["memory_budget_bytes"] / total
    torch.cuda.set_per_process_memory_fraction(min(1.0, fraction))
    try:
        for series in scaling["series"]:
            backend = _backend_of_trace(series["files"][0], backends) if series.get("files") else None
            if backend is None or series.get("oom_threshold_tokens", -1) < 0:
                continue
            with _attention_backend(model, backend):
                ceiling = max(4 * series["oom_threshold_tokens"], 2 * max(lengths))
                series["measured_oom_tokens"] = _measure_first_oom(model, make_inputs, max(lengths), ceiling)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
    return json.dumps(data)


def _profile_backend(model, make_inputs, lengths: list[int], backend: str, warmup: int, folder: Path,
                     activities: list, paths: list[str], total: int) -> None:
    """One trace per length under one backend, appended to ``paths``."""
    with _attention_backend(model, backend):
        for length in lengths:
            _progress(len(paths), total, f"{backend} S={length}")
            inputs = make_inputs(length)
            for _ in range(warmup):
                _run(model, inputs)
            with torch.profiler.profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
                _run(model, inputs)
            path = folder / _trace_name(backend, length)
            prof.export_chrome_trace(str(path))
            paths.append(str(path))


def sweep(model: torch.nn.Module, make_inputs: Callable[[int], Any], lengths: Iterable[int],
          backends: Iterable[str] = ("sdpa",), *, out_dir: str | os.PathLike | None = None,
          memory_cap: str | None = None, gpu: str | None = None, warmup: int = 1,
          verbose: bool | None = None) -> AttentionReport:
    """Profile ``model(**make_inputs(S))`` for every S in ``lengths`` and every backend
    ("eager", "sdpa", or a forced SDPA backend: "flash", "efficient", "cudnn", "math"), one
    trace per run in ``out_dir`` (a temporary folder when None), then return the Report with
    the scaling section (fits per backend, OOM threshold for ``memory_cap`` such as "24GiB" or
    the memory of ``gpu`` such as "A100-80GB", from a simulation of PyTorch's caching
    allocator) and, with several backends, backend advice.

    With ``memory_cap`` on a CUDA device, each predicted threshold is then checked: the model
    runs under ``torch.cuda.set_per_process_memory_fraction(cap / device memory)`` at growing
    lengths until a pass raises OutOfMemoryError, and the largest length that ran is reported
    next to the prediction (``measured_oom_tokens``). On CPU the report says the check needs a
    GPU. ``verbose=True`` shows the profiler library's own log lines (attnprof._quiet)."""
    lengths = [int(s) for s in lengths]
    backends = list(backends)
    if not lengths or not backends:
        raise ValueError("sweep needs at least one length and one backend")
    folder = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="attnprof-sweep-"))
    folder.mkdir(parents=True, exist_ok=True)
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    paths: list[str] = []
    total = len(lengths) * len(backends)
    with ProfilerLogsHidden(verbose):
        for backend in backends:
            _profile_backend(model, make_inputs, lengths, backend, warmup, folder, activities, paths, total)
    _progress(total, total, "fitting")
    report_json = _core.scale(paths, memory_cap or "", gpu or "")
    if memory_cap:
        report_json = _check_oom_thresholds(report_json, model, make_inputs, backends, lengths)
    return AttentionReport(report_json)
