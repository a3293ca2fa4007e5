"""Live capture of attention calls inside the user's process.

What a trace cannot say, recorded while the model runs:
- every call of ``F.scaled_dot_product_attention`` (a ``TorchFunctionMode``) and of the
  transformers attention interface (``eager``, ``sdpa``, ``flex_attention``, ...), with its exact
  arguments and the backend PyTorch really chooses (``torch._fused_sdp_choice``);
- the nn.Module path of the layer that made it (global forward pre-hooks);
- record_function ranges (``attnprof.call#N`` per call, ``attnprof.module <path>`` per
  non-torch module) so the C++ core can match records to trace events by time
  (cpp/include/attnprof/capture.h; sidecar format in docs/capture-sidecar.md).

Profiling never changes or breaks the run: the intercepted function is always called with the
caller's own arguments, and an error inside attnprof's bookkeeping is caught, reported once as
a warning, and the run continues.
"""
from __future__ import annotations

import itertools
import json
import threading
import warnings
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from . import _core

SIDECAR_FORMAT = "attnprof-capture"
CALL_PREFIX: str = _core.CALL_ANNOTATION_PREFIX
MODULE_PREFIX: str = _core.MODULE_ANNOTATION_PREFIX

_SDPA = torch._C._nn.scaled_dot_product_attention
_SDPA_ARG_NAMES = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
_SDP_BACKEND_NAMES = {int(b): b.name for b in torch.nn.attention.SDPBackend.__members__.values()}

# Annotation ids are unique per process so several profiles (or schedule cycles) never clash.
_call_ids = itertools.count()


class HookError(RuntimeWarning):
    """attnprof's capture failed on one call; the run went on (the capture may be partial)."""


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _describe_tensor(t: Any) -> dict | None:
    if not isinstance(t, torch.Tensor):
        return None
    return {"shape": list(t.shape), "stride": list(t.stride()), "dtype": _dtype_name(t.dtype),
            "requires_grad": bool(t.requires_grad)}


def visible_keys(mask_values: torch.Tensor) -> torch.Tensor:
    """'Key visible' of SDPA mask values (bool: True = attend; float: above -inf-ish)."""
    if mask_values.dtype == torch.bool:
        return mask_values
    return mask_values > torch.finfo(mask_values.dtype).min / 2


def causal_window(visible_row: Callable[[int], torch.Tensor], sq: int, skv: int) -> tuple[bool, int]:
    """(causal, W) of a mask whose query i sees exactly the keys (i' - W, i'] (i' = i + Skv - Sq:
    keys aligned at the end), W = 0 for plain causal (keys <= i'); (False, 0) for any other
    mask or Sq < 2. Read from the last and the middle query row (``visible_row(i)``: [Skv])."""
    if sq < 2:
        return False, 0
    offset = skv - sq
    seen = int(visible_row(sq - 1).sum())
    if seen == 0:
        return False, 0
    window = seen if seen < skv else 0
    for i in (sq - 1, sq // 2):
        end = i + offset + 1
        expected = torch.zeros(skv, dtype=torch.bool)
        expected[max(0, end - window) if window else 0:end] = True
        if not torch.equal(visible_row(i).to("cpu", torch.bool).expand(skv), expected):
            return False, 0
    return True, window


def tensor_mask_window(mask: torch.Tensor, sq: int, skv: int) -> int:
    """The causal_window() W of a materialised [.., Sq, Skv] SDPA mask (batch 0, head 0)."""
    if mask.dim() < 2 or mask.shape[-2] != sq or mask.shape[-1] != skv:
        return 0
    plane = mask.detach()[(0,) * (mask.dim() - 2)]
    return causal_window(lambda i: visible_keys(plane[i]), sq, skv)[1]


def _visible_planes(mask: torch.Tensor, sq: int, skv: int) -> torch.Tensor:
    """'Key visible' [batch, Sq, Skv] of a materialised mask, head 0 of every batch element."""
    planes = mask.detach().reshape(-1, *mask.shape[-3:]) if mask.dim() >= 3 else mask.detach()[None, None]
    planes = planes[:, 0] if mask.dim() >= 4 else planes.reshape(-1, sq, skv)
    return visible_keys(planes)


def _same_segment(visible: torch.Tensor) -> torch.Tensor:
    """[batch, S, S]: query i and key j start at the same first visible key (one document)."""
    first = visible.to(torch.int8).argmax(dim=-1)  # first key each row sees
    return first[:, :, None] == first[:, None, :]


def tensor_mask_pattern(mask: torch.Tensor, sq: int, skv: int) -> str:
    """What a materialised [.., Sq, Skv] mask holds (docs/heads.md, mask kinds): "bias" (finite
    additive scores: ALiBi, position bias), "causal", "sliding_window", "padding" (key columns
    masked per batch element, on top of causal or full), "block" (block-diagonal documents),
    "full" (keeps every score), else "arbitrary"; "" when the shape is not [.., Sq, Skv]."""
    if mask.dim() < 2 or mask.shape[-2] != sq or mask.shape[-1] != skv:
        return ""
    if mask.is_floating_point():
        kept = mask.detach()[visible_keys(mask.detach())]
        if kept.numel() and bool((kept != kept.flatten()[0]).any()):
            return "bias"
    visible = _visible_planes(mask, sq, skv)
    key = torch.arange(skv, device=visible.device)[None, :]
    causal = key <= torch.arange(sq, device=visible.device)[:, None] + (skv - sq)
    sees = visible.any(dim=-1, keepdim=True)  # fully masked (padded) query rows carry no evidence
    valid_keys = visible.any(dim=-2, keepdim=True)
    for base, name in ((causal, "causal"), (torch.ones_like(causal), "full")):
        if torch.equal(visible & sees, base & valid_keys & sees):
            return name if bool(valid_keys.all()) else "padding"
    window = tensor_mask_window(mask, sq, skv)
    if window and torch.equal(visible, (causal & (key > torch.arange(sq, device=visible.device)[:, None]
                                                   + (skv - sq) - window)).expand_as(visible)):
        return "sliding_window"
    if sq == skv and (torch.equal(visible, _same_segment(visible) & causal)
                      or torch.equal(visible, _same_segment(visible))):
        return "block"
    return "arbitrary"


def block_mask_causal_window(mask: Any) -> tuple[bool, int]:
    """causal_window() of a FlexAttention BlockMask, from its mask_mod (batch 0, head 0)."""
    sq, skv = mask.seq_lengths
    device = mask.kv_num_blocks.device
    zero = torch.zeros((), dtype=torch.int64, device=device)
    keys = torch.arange(skv, device=device)
    return causal_window(lambda i: mask.mask_mod(zero, zero, torch.tensor(i, device=device), keys), sq, skv)


def block_mask_window(mask: Any) -> int:
    return block_mask_causal_window(mask)[1]


def _best_effort(read_window: Callable[..., Any], *args: Any, default: Any = 0) -> Any:
    """A window is a hint: a mask whose values cannot be read (a mask_mod that needs more than
    index tensors, a meta tensor) has none, and the call's record stays complete."""
    try:
        return read_window(*args)
    except Exception:  # noqa: BLE001
        return default


def patch_attention_interface(wrap: Callable[[str, Callable], Callable]) -> Callable[[], None] | None:
    """Routes every lookup of transformers' attention interface through ``wrap(implementation,
    fn)`` (implementation "eager" when the model names none). Returns the undo, or None when
    transformers is absent or has no AttentionInterface. Nested patches must be undone in
    reverse order."""
    try:
        from transformers.modeling_utils import AttentionInterface
    except Exception:  # noqa: BLE001
        return None
    original_get = AttentionInterface.get_interface

    def get_interface(interface_self, attn_implementation, default):
        return wrap(attn_implementation or "eager", original_get(interface_self, attn_implementation, default))

    AttentionInterface.get_interface = get_interface
    return lambda: setattr(AttentionInterface, "get_interface", original_get)


class _MaskFacts:
    """Facts read from mask values, once per distinct mask (transformers hands every layer the
    same mask tensor; reading values of a GPU mask synchronises, so it happens once)."""

    def __init__(self) -> None:
        self._cache: dict[tuple, dict] = {}

    def describe(self, mask: Any, sq: int, skv: int) -> dict:
        if mask is None:
            return {"kind": "none"}
        if isinstance(mask, torch.Tensor):
            kind = "bool" if mask.dtype == torch.bool else ("float" if mask.is_floating_point() else "unknown")
            out = {"kind": kind, "shape": list(mask.shape), "dtype": _dtype_name(mask.dtype)}
            key = ("tensor", id(mask), mask.data_ptr(), mask._version, sq, skv)
            if kind != "unknown":
                out.update(self._cached(key, lambda: {"window": _best_effort(tensor_mask_window, mask, sq, skv),
                                                      "pattern": _best_effort(tensor_mask_pattern, mask, sq, skv,
                                                                              default="")}))
            return out
        if type(mask).__name__ == "BlockMask":
            out = {"kind": "block_mask", "shape": list(getattr(mask, "shape", ()))}
            out.update(self._cached(("block", id(mask), sq, skv), lambda: {
                "block_size": [int(b) for b in mask.BLOCK_SIZE],
                "block_sparsity": float(mask.sparsity()) / 100.0,
                "window": _best_effort(block_mask_window, mask)}))
            return out
        return {"kind": "unknown"}

    def _cached(self, key: tuple, compute: Callable[[], dict]) -> dict:
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) > 64:  # masks of earlier forward passes are dead: ids get reused
                self._cache.clear()
            found = self._cache[key] = compute()
        return found


def _lengths(query: Any, key: Any) -> tuple[int, int]:
    """(Sq, Skv) of [.., S, D] query and key tensors; (0, 0) when they are not tensors."""
    if not isinstance(query, torch.Tensor) or not isinstance(key, torch.Tensor) or query.dim() < 2 or key.dim() < 2:
        return 0, 0
    return int(query.shape[-2]), int(key.shape[-2])


def _sdpa_arguments(args: tuple, kwargs: dict) -> dict:
    """The SDPA call's arguments by name, defaults filled in (torch's own defaults)."""
    bound = {"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None, "enable_gqa": False}
    bound.update(zip(_SDPA_ARG_NAMES, args))
    bound.update(kwargs)
    return bound


def _tensor_key(t: Any) -> tuple:
    if not isinstance(t, torch.Tensor):
        return (type(t).__name__,)
    return (tuple(t.shape), t.stride(), t.dtype, t.device, t.requires_grad)


class _ChoiceCache:
    """torch._fused_sdp_choice, computed once per distinct call signature (it is a C++ call
    that runs the eligibility checks; the answer depends only on what is in the key)."""

    def __init__(self) -> None:
        self._cache: dict[tuple, str] = {}

    def choice(self, a: dict) -> str:
        key = (_tensor_key(a["query"]), _tensor_key(a["key"]), _tensor_key(a["value"]),
               _tensor_key(a["attn_mask"]), float(a["dropout_p"]), bool(a["is_causal"]),
               a["scale"] is None, bool(a["enable_gqa"]), torch.is_grad_enabled(),
               torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.mem_efficient_sdp_enabled(),
               torch.backends.cuda.math_sdp_enabled(), torch.backends.cuda.cudnn_sdp_enabled())
        found = self._cache.get(key)
        if found is None:
            code = torch._fused_sdp_choice(a["query"], a["key"], a["value"], a["attn_mask"],
                                           a["dropout_p"], a["is_causal"], scale=a["scale"],
                                           enable_gqa=a["enable_gqa"])
            found = self._cache[key] = _SDP_BACKEND_NAMES.get(int(code), "ERROR")
        return found


class _SdpaMode(TorchFunctionMode):
    """Sees every torch function; acts only on scaled_dot_product_attention."""

    def __init__(self, capture: "AttentionCapture") -> None:
        super().__init__()
        self._capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not _SDPA:
            return func(*args, **kwargs)
        return self._capture.sdpa_call(func, args, kwargs)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.modules: list[torch.nn.Module] = []   # forward-call stack
        self.ranges: list[Any] = []                # open module record_function handles (or None)
        self.interface_record: dict | None = None  # record of the transformers call in flight
        self.generate_depth = 0


class AttentionCapture:
    """Installs the hooks on enter, removes them on exit; collects one record per call."""

    def __init__(self, step_of: Callable[[], int] = lambda: 0) -> None:
        self.records: list[dict] = []
        self.warnings: list[str] = []
        self._step_of = step_of
        self._choices = _ChoiceCache()
        self._masks = _MaskFacts()
        self._local = _ThreadState()
        self._root_names: dict[int, dict[int, str]] = {}
        self._paths: dict[int, str] = {}
        self._range_names: dict[int, str | None] = {}
        self._interface_wrappers: dict[tuple, Callable] = {}
        self._mode: _SdpaMode | None = None
        self._undo: list[Callable[[], None]] = []

    # ---- install / remove ---------------------------------------------------------------

    def __enter__(self) -> "AttentionCapture":
        try:
            hooks = torch.nn.modules.module
            self._undo.append(hooks.register_module_forward_pre_hook(self._pre_forward).remove)
            self._undo.append(hooks.register_module_forward_hook(self._post_forward, always_call=True).remove)
            self._patch_transformers()
            self._mode = _SdpaMode(self)
            self._mode.__enter__()
        except Exception as e:  # noqa: BLE001 - no capture this time, but the user's run goes on
            self._hook_failed("installing the hooks", e)
            self.__exit__(None, None, None)  # what was installed comes off again
        return self

    def __exit__(self, *exc) -> None:
        # Every hook comes off even when one removal fails: a hook left behind would run after
        # the profile, in the user's code.
        if self._mode is not None:
            mode, self._mode = self._mode, None
            try:
                mode.__exit__(*exc)
            except Exception as e:  # noqa: BLE001
                self._hook_failed("removing the SDPA interception", e)
        while self._undo:
            try:
                self._undo.pop()()
            except Exception as e:  # noqa: BLE001
                self._hook_failed("removing a hook", e)

    def _patch_transformers(self) -> None:
        undo = patch_attention_interface(self.wrap_interface)
        if undo is None:  # transformers absent or incompatible: plain SDPA capture only
            return
        self._undo.append(undo)
        try:
            from transformers.generation.utils import GenerationMixin
        except Exception:  # noqa: BLE001 - no generate(): every call's phase stays ""
            return
        capture = self
        original_generate = GenerationMixin.generate

        def generate(model_self, *args, **kwargs):
            capture._local.generate_depth += 1
            try:
                return original_generate(model_self, *args, **kwargs)
            finally:
                capture._local.generate_depth -= 1

        generate.__wrapped__ = original_generate
        GenerationMixin.generate = generate
        self._undo.append(lambda: setattr(GenerationMixin, "generate", original_generate))

    # ---- failure policy -------------------------------------------------------------------

    def _hook_failed(self, where: str, error: BaseException) -> None:
        text = f"{where}: {type(error).__name__}: {error}"
        if not self.warnings:
            warnings.warn(f"attnprof: capture failed ({text}); the run continues, the attention "
                          f"report may miss some calls", HookError, stacklevel=3)
        if len(self.warnings) < 20:
            self.warnings.append(text)

    # ---- module paths -----------------------------------------------------------------------

    def _path_of(self, module: torch.nn.Module) -> str:
        path = self._paths.get(id(module))
        if path is None:
            stack = self._local.modules
            root = stack[0] if stack else module
            names = self._root_names.get(id(root))
            if names is None:
                names = self._root_names[id(root)] = {id(m): n for n, m in root.named_modules()}
            path = names.get(id(module)) or type(module).__name__
            self._paths[id(module)] = path
        return path

    def _range_name(self, module: torch.nn.Module) -> str | None:
        """Modules defined outside torch get a trace range (torch's own layers cannot hold an
        attention computation that attnprof does not already see as an op)."""
        key = id(module)
        if key not in self._range_names:
            own = not type(module).__module__.startswith("torch.")
            self._range_names[key] = MODULE_PREFIX + self._path_of(module) if own else None
        return self._range_names[key]

    def _pre_forward(self, module, args) -> None:
        local = self._local
        local.modules.append(module)
        handle = None
        try:
            if torch.autograd._profiler_enabled():
                name = self._range_name(module)
                if name is not None:
                    handle = torch.ops.profiler._record_function_enter_new(name, None)
        except Exception as e:  # noqa: BLE001 - never let bookkeeping reach the user
            self._hook_failed("module pre-hook", e)
        local.ranges.append(handle)

    def _post_forward(self, module, args, output) -> None:
        local = self._local
        try:
            if local.modules and local.modules[-1] is module:
                local.modules.pop()
                handle = local.ranges.pop()
                if handle is not None:
                    torch.ops.profiler._record_function_exit._RecordFunction(handle)
        except Exception as e:  # noqa: BLE001
            self._hook_failed("module post-hook", e)

    # ---- records --------------------------------------------------------------------------

    def _new_record(self, interface: str, module: torch.nn.Module | None) -> dict:
        if module is None and self._local.modules:
            module = self._local.modules[-1]
        record = {"id": next(_call_ids), "interface": interface, "step": int(self._step_of()),
                  "module": self._path_of(module) if module is not None else "",
                  "module_class": type(module).__name__ if module is not None else ""}
        self.records.append(record)
        return record

    def _fill_arguments(self, record: dict, a: dict) -> None:
        q = a["query"]
        record.update(
            device=q.device.type if isinstance(q, torch.Tensor) else "",
            query=_describe_tensor(q), key=_describe_tensor(a["key"]), value=_describe_tensor(a["value"]),
            mask=self._masks.describe(a["attn_mask"], *_lengths(q, a["key"])), is_causal=bool(a["is_causal"]),
            dropout_p=float(a["dropout_p"]), scale=None if a["scale"] is None else float(a["scale"]),
            enable_gqa=bool(a["enable_gqa"]), grad_enabled=torch.is_grad_enabled(),
            phase=self._phase(q))

    def _phase(self, query: Any) -> str:
        if self._local.generate_depth == 0 or not isinstance(query, torch.Tensor) or query.dim() < 2:
            return ""
        return "decode" if query.shape[-2] == 1 else "prefill"

    def sdpa_call(self, func, args: tuple, kwargs: dict):
        """One scaled_dot_product_attention call: record, then run it exactly as called."""
        handle = None
        try:
            if torch.autograd._profiler_enabled():
                a = _sdpa_arguments(args, kwargs)
                record = self._local.interface_record
                if record is not None and record.pop("_pending", False):
                    self._local.interface_record = None  # one SDPA call per interface call
                else:
                    record = self._new_record("F.scaled_dot_product_attention", None)
                    handle = torch.ops.profiler._record_function_enter_new(
                        f"{CALL_PREFIX}{record['id']} {record['module']}", None)
                self._fill_arguments(record, a)
                record["pytorch_choice"] = self._choices.choice(a)
        except Exception as e:  # noqa: BLE001
            self._hook_failed("scaled_dot_product_attention", e)
        try:
            return func(*args, **kwargs)
        finally:
            if handle is not None:
                torch.ops.profiler._record_function_exit._RecordFunction(handle)

    def wrap_interface(self, implementation: str, fn: Callable) -> Callable:
        key = (implementation, fn)
        wrapper = self._interface_wrappers.get(key)
        if wrapper is None:
            wrapper = self._interface_wrappers[key] = self._make_interface_wrapper(implementation, fn)
        return wrapper

    def _make_interface_wrapper(self, implementation: str, fn: Callable) -> Callable:
        capture = self
        interface = "transformers." + implementation

        def attention_interface(module, query, key, value, attention_mask, *args, **kwargs):
            handle, record, local = None, None, capture._local
            outer = local.interface_record
            try:
                if torch.autograd._profiler_enabled():
                    record = capture._new_record(interface, module)
                    capture._fill_arguments(record, {
                        "query": query, "key": key, "value": value, "attn_mask": attention_mask,
                        "dropout_p": kwargs.get("dropout", 0.0) or 0.0, "is_causal": False,
                        "scale": kwargs.get("scaling"), "enable_gqa": False})
                    record["pytorch_choice"] = ""
                    record["_pending"] = True  # the inner SDPA call (if any) fills exact arguments
                    local.interface_record = record
                    handle = torch.ops.profiler._record_function_enter_new(
                        f"{CALL_PREFIX}{record['id']} {record['module']}", None)
            except Exception as e:  # noqa: BLE001
                capture._hook_failed("attention interface", e)
            try:
                return fn(module, query, key, value, attention_mask, *args, **kwargs)
            finally:
                local.interface_record = outer
                if record is not None:
                    record.pop("_pending", None)
                if handle is not None:
                    torch.ops.profiler._record_function_exit._RecordFunction(handle)

        attention_interface.__wrapped__ = fn
        return attention_interface

    # ---- sidecar ----------------------------------------------------------------------------

    def sidecar(self, records: list[dict] | None = None) -> dict:
        try:
            import transformers
            transformers_version = transformers.__version__
        except Exception:  # noqa: BLE001
            transformers_version = ""
        return {"format": SIDECAR_FORMAT, "format_version": _core.SIDECAR_FORMAT_VERSION,
                "torch_version": torch.__version__, "transformers_version": transformers_version,
                "warnings": list(self.warnings),
                "calls": self.records if records is None else records}


def write_sidecar(path: str, document: dict) -> None:
    _core.write_file_atomic(path, json.dumps(document, separators=(",", ":")))
