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
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import torch

from . import _core
from .report import AttentionReport

# Backend names accepted by sweep(): the model's own attention implementations, and SDPA
# backends forced with torch.nn.attention.sdpa_kernel.
_SDPA_BACKENDS = {"flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                  "cudnn": "CUDNN_ATTENTION", "math": "MATH"}
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
    # "_force_" marks a forced SDPA backend: the core's advice treats the other runs as
    # PyTorch's own pick (docs/cost.md, "Backend advice").
    if backend in _SDPA_BACKENDS:
        return f"sweep_sdpa_force_{backend}_s{length}.pt.trace.json"
    return f"sweep_{backend}_s{length}.pt.trace.json"


def sweep(model: torch.nn.Module, make_inputs: Callable[[int], Any], lengths: Iterable[int],
          backends: Iterable[str] = ("sdpa",), *, out_dir: str | os.PathLike | None = None,
          memory_cap: str | None = None, gpu: str | None = None, warmup: int = 1) -> AttentionReport:
    """Profile ``model(**make_inputs(S))`` for every S in ``lengths`` and every backend
    ("eager", "sdpa", or a forced SDPA backend "flash", "efficient", "cudnn", "math"), one
    trace per run in ``out_dir`` (a temporary folder when None), then return the Report with
    the scaling section (fits per backend, OOM threshold for ``memory_cap`` such as "24GiB" or
    the memory of ``gpu`` such as "A100-80GB") and, with several backends, backend advice."""
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
    for backend in backends:
        with _attention_backend(model, backend):
            for length in lengths:
                _progress(len(paths), total, f"{backend} S={length}")
                inputs = make_inputs(length)
                for _ in range(warmup):
                    _run(model, inputs)
                with torch.profiler.profile(activities=activities, record_shapes=True,
                                            profile_memory=True) as prof:
                    _run(model, inputs)
                path = folder / _trace_name(backend, length)
                prof.export_chrome_trace(str(path))
                paths.append(str(path))
    _progress(total, total, "fitting")
    return AttentionReport(_core.scale(paths, memory_cap or "", gpu or ""))
