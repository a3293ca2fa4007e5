"""attnprof.verify: each fix the Report suggests, applied to the model in this process and timed
against the unchanged model on the same inputs (docs/verify.md).

    report = attnprof.verify(model, {"input_ids": ids})
    report.show()            # the "Verified fixes" table; verified findings are marked

The fixes are planned from the findings' rule ids and judged in the C++ core
(cpp/src/verify); this module applies them, runs the model and measures.
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import weakref
from typing import Any, Callable, Iterator, Sequence

import torch

from . import _core
from ._capture import _dtype_name, _lengths, _sdpa_arguments, patch_sdpa, tensor_mask_pattern, visible_keys
from .profile import profile
from .report import AttentionReport

FIX_IDS = tuple(w["id"] for w in _core.FIXES)


class NotApplicable(Exception):
    """A fix that cannot be applied to this model; the message says why."""


# ---- the model's forward ---------------------------------------------------------------------

def _forward_of(model: torch.nn.Module, inputs: Any) -> Callable[[], Any]:
    """inputs: a dict (keyword arguments), a tuple or list (positional), one tensor, or a
    callable returning any of these (called once: every run sees the same inputs)."""
    if callable(inputs) and not isinstance(inputs, torch.Tensor):
        inputs = inputs()
    if isinstance(inputs, dict):
        return lambda: model(**inputs)
    if isinstance(inputs, (tuple, list)):
        return lambda: model(*inputs)
    if isinstance(inputs, torch.Tensor):
        return lambda: model(inputs)
    raise TypeError(f"attnprof.verify: inputs must be a dict, tuple, tensor or a callable returning one, "
                    f"not {type(inputs).__name__}")


def _tensors(output: Any) -> list[torch.Tensor]:
    """The floating-point tensors of a model output (ModelOutput, dict, tuple, tensor), in order."""
    if isinstance(output, torch.Tensor):
        return [output] if output.is_floating_point() else []
    if isinstance(output, dict):
        return [t for v in output.values() for t in _tensors(v)]
    if isinstance(output, (tuple, list)):
        return [t for v in output for t in _tensors(v)]
    return []


def _difference(baseline: list[torch.Tensor], fixed: list[torch.Tensor]) -> tuple[float, float]:
    """Max |a - b| over every output tensor, and that over max |a|: a relative difference that
    does not explode where outputs are near zero."""
    if len(baseline) != len(fixed) or any(a.shape != b.shape for a, b in zip(baseline, fixed)):
        return _DIFFERENT, _DIFFERENT
    abs_diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(baseline, fixed) if a.numel()),
                   default=0.0)
    scale = max((float(a.double().abs().max()) for a in baseline if a.numel()), default=0.0)
    return abs_diff, abs_diff / scale if scale > 0 else (0.0 if abs_diff == 0 else _DIFFERENT)


_DIFFERENT = 1e300  # outputs of other shapes, or a change where every baseline value is 0 (JSON has no inf)


def _dtype_of(tensors: list[torch.Tensor]) -> str:
    """torch's spelling of the outputs' dtype; the core reads it as the Report's (dtype_of_spelling)."""
    return _dtype_name(tensors[0].dtype) if tensors else ""


# ---- the fixes -------------------------------------------------------------------------------

class _Fix:
    """One fix: `check()` raises NotApplicable before anything changes; `applied()` is a context
    manager in which the model runs fixed; `took_effect()` says after a fixed run why the
    change did nothing ("" when it did)."""

    def __init__(self, model: torch.nn.Module, plan: dict) -> None:
        self.model, self.plan = model, plan

    def check(self) -> None:
        pass

    def applied(self) -> contextlib.AbstractContextManager:
        raise NotImplementedError

    def took_effect(self) -> str:
        return ""


class _AttentionImplementation(_Fix):
    """transformers' attn_implementation switched for the run and switched back after it."""
    implementation = ""

    def check(self) -> None:
        config = getattr(self.model, "config", None)
        if getattr(self.model, "set_attn_implementation", None) is None or config is None:
            raise NotApplicable(
                f"{type(self.model).__name__} has no attention implementation switch (transformers' "
                f"attn_implementation): change its attention code by hand")
        current = getattr(config, "_attn_implementation", None)
        if current == self.implementation:
            raise NotApplicable(f"the model already runs attn_implementation={self.implementation!r}")
        try:
            with self.applied():
                pass
        except (ValueError, ImportError, NotImplementedError) as e:
            raise NotApplicable(f"transformers refuses attn_implementation={self.implementation!r} for "
                                f"{type(self.model).__name__}: {e}") from e

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        before = self.model.config._attn_implementation
        self.model.set_attn_implementation(self.implementation)
        try:
            yield
        finally:
            self.model.set_attn_implementation(before)


class _UseSdpa(_AttentionImplementation):
    implementation = "sdpa"


class _FlexAttention(_AttentionImplementation):
    implementation = "flex_attention"


class _UnforceBackend(_Fix):
    """Every SDPA backend PyTorch has enabled for the run (sdpa_kernel restores the flags)."""

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        members = {w["sdp_backend"] for w in _core.BACKENDS if w["sdp_backend"]}
        backends = [getattr(SDPBackend, m) for m in sorted(members) if hasattr(SDPBackend, m)]
        with sdpa_kernel(backends):
            yield


class _CausalMaskAsFlag:
    """While entered, scaled_dot_product_attention runs through the capture's patch_sdpa (every
    module that holds the function, no tax on other ops): a call whose mask is exactly causal
    runs with is_causal=True and no mask. Each distinct mask tensor is checked once."""

    def __init__(self) -> None:
        self.replaced = 0
        self._checked: dict[int, tuple[Any, int, bool]] = {}
        self._undo: Callable[[], None] | None = None

    def _is_causal(self, mask: torch.Tensor, sq: int, skv: int) -> bool:
        seen = self._checked.get(id(mask))
        if seen is not None and seen[0]() is mask and seen[1] == mask._version:
            return seen[2]
        result = causal_mask(mask, sq, skv)
        self._checked[id(mask)] = (weakref.ref(mask), mask._version, result)
        return result

    def _call(self, original: Callable, args: tuple, kwargs: dict) -> Any:
        bound = _sdpa_arguments(args, kwargs)
        mask = bound["attn_mask"]
        if isinstance(mask, torch.Tensor) and not bound["is_causal"] and \
                self._is_causal(mask, *_lengths(bound["query"], bound["key"])):
            bound.update(attn_mask=None, is_causal=True)
            self.replaced += 1
            return original(**bound)
        return original(*args, **kwargs)

    def __enter__(self) -> None:
        self._undo = patch_sdpa(self._call)

    def __exit__(self, *exc: Any) -> None:
        self._undo()


def causal_mask(mask: torch.Tensor, sq: int, skv: int) -> bool:
    """Whether an SDPA mask keeps exactly the causal pairs j <= i of a square call, the same for
    every batch and head: is_causal=True aligns at the top left, tensor_mask_pattern's "causal"
    at the bottom right (the same when square), and that reads head 0, so every head must agree;
    a float mask adds nothing to the scores it keeps."""
    if sq != skv or tensor_mask_pattern(mask, sq, skv) != _core.mask_pattern.CAUSAL:
        return False
    if mask.is_floating_point() and bool((mask[visible_keys(mask)] != 0).any()):
        return False  # it also adds to the scores it keeps: is_causal would drop that
    return mask.dim() < 3 or mask.shape[-3] == 1 or bool((mask == mask[..., :1, :, :]).all())


class _IsCausal(_Fix):
    def __init__(self, model: torch.nn.Module, plan: dict) -> None:
        super().__init__(model, plan)
        self.mode = _CausalMaskAsFlag()

    def applied(self) -> contextlib.AbstractContextManager:
        return self.mode

    def took_effect(self) -> str:
        if self.mode.replaced:
            return ""
        return ("no torch.nn.functional.scaled_dot_product_attention call received a materialised causal mask (the "
                "finding's calls do not go through SDPA, their mask is not exactly causal, or the code holds its own "
                "reference to the function): pass is_causal=True by hand")


class _AutocastBf16(_Fix):
    def check(self) -> None:
        device = _device_of(self.model)
        if device.type == "cuda" and not torch.cuda.is_bf16_supported():
            raise NotApplicable(f"{torch.cuda.get_device_name(device)} has no bf16")

    def applied(self) -> contextlib.AbstractContextManager:
        return torch.autocast(_device_of(self.model).type, dtype=torch.bfloat16)


class _Manual(_Fix):
    def check(self) -> None:
        raise NotApplicable("the fix changes the model's code or inputs, which verify does not do")


_FIXES: dict[str, type[_Fix]] = {"use_sdpa": _UseSdpa, "unforce_backend": _UnforceBackend, "is_causal": _IsCausal,
                                 "flex_attention": _FlexAttention, "autocast_bf16": _AutocastBf16, "manual": _Manual}
assert set(_FIXES) == set(FIX_IDS), "every fix of the core's vocabulary has an applier here"


# ---- measuring -------------------------------------------------------------------------------

def _device_of(model: torch.nn.Module) -> torch.device:
    param = next(model.parameters(), None)
    return param.device if param is not None else torch.device("cpu")


class _Clock:
    """Device-synchronised milliseconds of one call: CUDA events on a GPU, perf_counter on CPU."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"
        self.name = "cuda_events" if self.cuda else "perf_counter"

    def time(self, run: Callable[[], Any]) -> float:
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            run()
            end.record()
            torch.cuda.synchronize()
            return float(start.elapsed_time(end))
        t0 = time.perf_counter()
        run()
        return (time.perf_counter() - t0) * 1e3


def _profiled(run: Callable[[], Any], device: torch.device, folder: str, name: str) -> tuple[AttentionReport, int]:
    """One profiled forward: its Report and the allocator's peak above what it held before
    (max_memory_allocated on a GPU, the trace's [memory] events on CPU; 0 when unknown)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
        held = torch.cuda.memory_allocated(device)
    path = os.path.join(folder, f"{name}.pt.trace.json")
    with profile(activities=activities, record_shapes=True, profile_memory=True) as prof:
        run()
    prof.export_chrome_trace(path)
    report_json, memory = _core.analyze_with_memory(path)  # the trace is read once for both
    if device.type == "cuda":
        return AttentionReport(report_json), int(torch.cuda.max_memory_allocated(device) - held)
    return AttentionReport(report_json), max(0, int(memory["peak_activation_bytes"]))


def _backends(report: AttentionReport) -> list[str]:
    return sorted({c["backend"] for c in report.calls if c.get("direction") != _core.direction.BACKWARD and c["backend"]})


def _kernels(report: AttentionReport) -> list[str]:
    """The attention kernels of the forward calls; a call without device kernels (CPU) by its op."""
    names = set()
    for c in report.calls:
        if c.get("direction") != _core.direction.BACKWARD:
            names.update([k["name"] for k in c.get("kernels", [])] or ([c["op"]] if c.get("op") else []))
    return sorted(names)


def _load_average() -> list[float]:
    try:
        return list(os.getloadavg())
    except OSError:  # not on this platform
        return []


def _measure(fix: _Fix, run: Callable[[], Any], clock: _Clock, baseline_outputs: list[torch.Tensor],
             repeats: int, warmup: int, device: torch.device, folder: str) -> dict:
    measurement: dict = {"plan": fix.plan, "applied": False, "baseline_ms": [], "fixed_ms": []}
    try:
        fix.check()
    except NotApplicable as e:
        measurement["not_applied_reason"] = str(e)
        return measurement
    for _ in range(warmup):
        run()
        with fix.applied():
            run()
    if reason := fix.took_effect():
        measurement["not_applied_reason"] = reason
        return measurement
    for _ in range(repeats):  # A B A B ...: both sides see the same drift of the machine
        measurement["baseline_ms"].append(clock.time(run))
        with fix.applied():
            measurement["fixed_ms"].append(clock.time(run))
    with fix.applied():
        fixed_outputs = _tensors(run())
        report, peak = _profiled(run, device, folder, fix.plan["fix"])
    measurement["max_abs_diff"], measurement["max_rel_diff"] = _difference(baseline_outputs, fixed_outputs)
    measurement.update(applied=True, peak_bytes_after=peak, backends_after=_backends(report),
                       kernels_after=_kernels(report))
    return measurement


def _wanted(fixes: str | Sequence[str]) -> list[str] | None:
    """The fix ids asked for, None for "auto"; an unknown id is refused before anything runs."""
    if fixes == "auto":
        return None
    wanted = [fixes] if isinstance(fixes, str) else list(fixes)
    unknown = [f for f in wanted if f not in FIX_IDS]
    if unknown:
        raise ValueError(f"attnprof.verify: unknown fix {unknown[0]!r} (one of {', '.join(FIX_IDS)})")
    return wanted


def _plans(report: AttentionReport, wanted: list[str] | None) -> list[dict]:
    planned = json.loads(_core.plan_fixes(report.to_json()))
    if wanted is None:
        return planned
    # A fix asked for by name answers the finding that calls for it, or none when none does.
    return [next((p for p in planned if p["fix"] == f), {"fix": f, "finding_rule": "", "layers": []}) for f in wanted]


# ---- saved gains -----------------------------------------------------------------------------

def _gain_entries(plans: list[dict], verified: list[dict], model: str) -> list[dict]:
    """The fixes measured with equal results, keyed as the core planned them (FixPlan: backend,
    dtype, length and device of the finding's calls); a finding without one key is not saved."""
    entries = []
    for plan, v in zip(plans, verified):
        if v["verdict"] not in ("confirmed", "no_gain") or not (plan.get("from_backend") and plan.get("dtype")
                                                                 and plan.get("seq_len") and plan.get("device")):
            continue
        before, after = v.get("peak_bytes_before", 0), v.get("peak_bytes_after", 0)
        entries.append({"fix": v["fix"], "from_backend": plan["from_backend"], "dtype": plan["dtype"],
                        "device": plan["device"], "seq_len": plan["seq_len"], "speedup": v["speedup"],
                        "speedup_ci": v["speedup_ci"], "memory_ratio": before / after if before > 0 and after > 0 else 0.0,
                        "model": model})
    return entries


def save_gains(path: str | os.PathLike, entries: list[dict]) -> None:
    """Adds the entries to a gains file (created when absent), replacing an entry of the same
    fix, backend, dtype, device, length and model; written atomically."""
    path = os.fspath(path)
    gains: list[dict] = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            gains = json.load(f).get("gains", [])
    key = lambda g: (g["fix"], g["from_backend"], g["dtype"], g["device"], g["seq_len"], g.get("model", ""))  # noqa: E731
    fresh = {key(e) for e in entries}
    gains = [g for g in gains if key(g) not in fresh] + entries
    _core.write_file_atomic(path, json.dumps({"gains": gains}, indent=2) + "\n")


class _Restored:
    """The model's training flag, restored after verify (it runs the model in eval mode)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model, self.training = model, model.training

    def __enter__(self) -> None:
        self.model.eval()

    def __exit__(self, *exc: Any) -> None:
        self.model.train(self.training)


def verify(model: torch.nn.Module, inputs: Any, report: AttentionReport | None = None,
           fixes: str | Sequence[str] = "auto", repeats: int = 10, warmup: int = 2,
           gains: str | os.PathLike | None = None, progress: bool = False) -> AttentionReport:
    """Applies each fix the findings call for (``fixes="auto"``) or the fixes named
    (ids of ``attnprof._core.FIXES``: use_sdpa, unforce_backend, is_causal, flex_attention,
    autocast_bf16), times the model with and without it in alternating pairs,
    compares their outputs, and returns the Report with its ``verification`` section.

    ``report``: the model's Report from ``attnprof.profile`` (profiled here when None). The
    model runs in eval mode under ``torch.no_grad()``; it and its attention implementation are
    left as they were. ``gains``: a file the measured gains are added to; ``attnprof analyze
    --gains FILE`` and ``attnprof.analyze(..., gains=FILE)`` then prefer them to the fixture
    estimates for matching calls."""
    if repeats < 2:
        raise ValueError("attnprof.verify: repeats must be at least 2 (an interval needs pairs)")
    wanted = _wanted(fixes)
    run = _forward_of(model, inputs)
    device = _device_of(model)
    clock = _Clock(device)
    with _Restored(model), torch.no_grad(), tempfile.TemporaryDirectory(prefix="attnprof-verify-") as folder:
        run()  # warm: the profile below sees the model's steady state
        before, peak_before = _profiled(run, device, folder, "baseline")
        report = report or before
        baseline_outputs = _tensors(run())
        measured = []
        plans = _plans(report, wanted)
        for i, plan in enumerate(plans):
            if progress:
                print(f"attnprof verify [{i + 1}/{len(plans)}] {plan['fix']}", flush=True)
            m = _measure(_FIXES[plan["fix"]](model, plan), run, clock, baseline_outputs, repeats, warmup, device,
                         folder)
            m.update(dtype=_dtype_of(baseline_outputs), backends_before=_backends(before),
                     kernels_before=_kernels(before), peak_bytes_before=peak_before)
            measured.append(json.loads(_core.judge_fix(json.dumps(m))))
    section = {"device": str(device) if device.type != "cuda" else f"{device} ({torch.cuda.get_device_name(device)})",
               "timer": clock.name, "load_average": _load_average(), "warmup": warmup,
               "model": type(model).__name__, "fixes": measured}
    if gains is not None:
        save_gains(gains, _gain_entries(plans, measured, type(model).__name__))
    return AttentionReport(_core.with_verification(report.to_json(), json.dumps(section)))


__all__ = ["verify", "FIX_IDS", "NotApplicable", "causal_mask", "save_gains"]
