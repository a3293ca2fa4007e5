"""Live capture of attention calls inside the user's process: the one capture mode.

``CaptureMode`` installs everything that sees an attention call while the model runs, and
removes it again:
- ``F.scaled_dot_product_attention``, replaced by a wrapper for the capture (in
  ``torch.nn.functional`` and in every loaded module that imported it under its own name), so
  no TorchFunctionMode sits in front of every other torch function;
- the transformers attention interface (``eager``, ``sdpa``, ``flex_attention``, ...), through
  ``AttentionInterface.get_interface``, and ``GenerationMixin.generate`` (prefill / decode);
- ``nn.Module._call_impl``, replaced by one that keeps the nn.Module stack and the module
  ranges (global forward hooks would send every module call, torch's own layers included, down
  the hook path of ``_call_impl``).

Its subclasses say what to do with a call: ``AttentionCapture`` (here) writes one record per
call for the sidecar, with ``torch._fused_sdp_choice``, and the record_function ranges
(``attnprof.call#N`` per call, ``attnprof.module <path>`` per non-torch module that can hold an
attention call: not NO_ATTENTION_CLASSES) by which the C++ core matches records to trace
events (cpp/include/attnprof/capture.h, docs/capture-sidecar.md);
``attnprof.heads.HeadCapture`` copies Q/K/V. Both read masks with the one mask reader below.

Profiling never changes or breaks the run: the intercepted function is always called with the
caller's own arguments, and an error inside attnprof's bookkeeping is caught, reported once as
a warning, and the run continues.
"""
from __future__ import annotations

import fnmatch
import functools
import inspect
import itertools
import json
import sys
import threading
import warnings
from typing import Any, Callable

import torch

from . import _core

SIDECAR_FORMAT = "attnprof-capture"
CALL_PREFIX: str = _core.CALL_ANNOTATION_PREFIX
MODULE_PREFIX: str = _core.MODULE_ANNOTATION_PREFIX
# The words of the records, read from the core (vocabulary.h) rather than spelled here.
MASK = _core.mask_kind
PATTERN = _core.mask_pattern
PHASE = _core.phase

_SDPA_NAME = "scaled_dot_product_attention"
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


# ---- trace ranges -------------------------------------------------------------------------------
# record_function's own path costs about 20 us a range: the op packet resolves its overload in
# Python, the ops check their handle for __torch_function__ overrides and go through the
# dispatcher, and the handle is a TorchScript object. The profiler's own C++ entry points
# (torch.profiler records the process-group configuration through them) leave the same
# user_annotation slice for two thirds of what even the ops' bare callables cost (4.9 against
# 7.3 us, docs/performance.md), with a plain tensor as the handle and no allocation event.
_open_range: Callable[[str], Any] = torch._C._autograd._record_function_with_args_enter
_close_range: Callable[[Any], None] = torch._C._autograd._record_function_with_args_exit


# ---- modules whose own code starts no attention call ----------------------------------------------
# A module range names the attention calls no interception sees (a hand-written matmul/softmax,
# a library's own kernel): the innermost range around a call's first op. A range costs ~0.1 ms
# when it opens or closes next to a big matmul (whatever runs then starts with cold caches; 5 us
# warm), so a module gets none when no such call can start where its range would be the
# innermost one: in its own code, or in a torch leaf it holds (no torch.nn layer without
# submodules computes attention; a submodule outside torch has its own range or is one of these).
# The classes below start none in their own code: they compute one projection, activation,
# normalisation or position embedding, or chain their submodules (a feed-forward block: its
# projections, activation, norm and dropout; a decoder / encoder layer or block: its attention
# and feed-forward submodules, with norms and residual adds). Checked on transformers 5.24: no
# method of its 227 *RotaryEmbedding, 197 *RMSNorm, 61 *LayerNorm, 354 *MLP, 70 *Intermediate,
# *Output, 232 *DecoderLayer, 135 *EncoderLayer and 217 *Block classes calls softmax, an
# attention function or interface, or a matmul other than the hyper-connection mixing of two
# decoder layers (docs/performance.md). A class named for attention ("Attn", "Attention": the
# VQ-VAE *AttnBlock classes attend in their own forward) is never taken from a pattern.
# (module of the class, class name) as fnmatch patterns, matched on the exact class whose
# forward is the class's own: a subclass defined elsewhere, a forward replaced on the instance
# (accelerate's hooks, a user's patch) and a module with a torch layer that has submodules
# anywhere below it (nn.MultiheadAttention, an nn.Sequential) keep their range. GPT-2-small: 98 module calls outside
# torch a pass, 84 of these classes.
NO_ATTENTION_CLASSES: tuple[tuple[str, str], ...] = (
    ("transformers.pytorch_utils", "Conv1D"),      # GPT-2 family projections: x @ W + b
    ("transformers.activations", "*"),             # ACT2FN: elementwise activations
    ("transformers.models.*", "*RMSNorm"),
    ("transformers.models.*", "*LayerNorm"),
    ("transformers.models.*", "*RotaryEmbedding"),
    ("transformers.models.*", "*MLP"),             # GPT2MLP, LlamaMLP: projections around an activation
    ("transformers.models.*", "*Intermediate"),    # BERT / ViT family: projection + activation
    ("transformers.models.*", "*Output"),          # BERT / ViT family: projection, dropout, norm
    ("transformers.models.*", "*DecoderLayer"),    # LlamaDecoderLayer: norms, self_attn, mlp
    ("transformers.models.*", "*EncoderLayer"),
    ("transformers.models.*", "*Block"),           # GPT2Block: norms, attn, mlp
)
_NAMED_FOR_ATTENTION = ("Attn", "Attention")

_class_starts_no_attention: dict[type, bool] = {}  # per class, once per process


def _in_no_attention_table(cls: type) -> bool:
    found = _class_starts_no_attention.get(cls)
    if found is None:
        name = cls.__qualname__
        found = _class_starts_no_attention[cls] = not any(word in name for word in _NAMED_FOR_ATTENTION) and any(
            fnmatch.fnmatchcase(cls.__module__, module) and fnmatch.fnmatchcase(name, pattern)
            for module, pattern in NO_ATTENTION_CLASSES)
    return found


def _is_torch_composite(module: torch.nn.Module) -> bool:
    return bool(module._modules) and type(module).__module__.startswith("torch.")


def _holds_torch_composite(module: torch.nn.Module) -> bool:
    """Whether ``module`` or a module below it is a torch layer with submodules: a walk over the
    ``_modules`` dicts that stops at the first, as ``module.modules()`` (a generator building
    every path name) would cost every layer of the model on each capture."""
    return _is_torch_composite(module) or any(
        child is not None and _holds_torch_composite(child) for child in module._modules.values())


_wrapped_by_class: dict[type, Any] = {}  # per class, once per process


def _wrapped_function(cls: type) -> Any:
    """The one plain function a function module's class forward closes over, else None.

    Function modules turn a function into an nn.Module so a hub can swap it (the ``kernels``
    package's ``use_kernelized_func`` makes one ``Func`` class per function, whose forward calls
    the function it closes over: kernels/_internals/layer/layer.py, ``_create_func_module``).
    They are not layers of the model: what they can start is what the function they wrap can."""
    if cls in _wrapped_by_class:
        return _wrapped_by_class[cls]
    forward = cls.__dict__.get("forward")
    functions = []
    for cell in getattr(forward, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if inspect.isfunction(value) or inspect.isbuiltin(value):
            functions.append(value)
    found = _wrapped_by_class[cls] = functions[0] if len(functions) == 1 else None
    return found


def _is_function_module(module: torch.nn.Module) -> bool:
    """A module that holds nothing of a layer (no parameters, buffers or submodules) and whose
    class forward wraps one function."""
    return (not module._parameters and not module._buffers and not module._modules
            and _wrapped_function(type(module)) is not None)


def _function_starts_no_attention(function: Any) -> bool:
    """Judged by the wrapped function's own name, with the core's attention vocabulary:
    ``apply_rotary_pos_emb`` starts none, ``flash_attention_forward`` may."""
    name = f"{getattr(function, '__module__', '') or ''}.{getattr(function, '__name__', '')}"
    return not _core.has_attention_vocabulary(name)


def starts_no_attention(module: torch.nn.Module) -> bool:
    """True for a module of NO_ATTENTION_CLASSES that runs its class's own forward and holds no
    torch layer with submodules, and for a function module (a hub's wrapper around a plain
    function) whose function has no attention in its name: no attention call can start inside
    it outside the ranges of its submodules, so it needs no range of its own."""
    if "forward" in module.__dict__:
        return False
    if _is_function_module(module):
        return _function_starts_no_attention(_wrapped_function(type(module)))
    return _in_no_attention_table(type(module)) and not _holds_torch_composite(module)


# ---- mask reading (the sidecar's mask facts and the heads capture's mask structure) --------------

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
    """'Key visible' [batch, Sq, Skv] of head 0 of a materialised mask, broadcast as SDPA
    broadcasts it (trailing dims [.., heads, Sq, Skv]; [B, 1, 1, Skv] padding masks expand)."""
    visible = visible_keys(mask.detach())
    while visible.dim() < 4:
        visible = visible.unsqueeze(0)
    visible = visible.reshape(-1, *visible.shape[-3:])[:, 0]
    return visible.expand(visible.shape[0], sq, skv)


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
            return PATTERN.BIAS
    visible = _visible_planes(mask, sq, skv)
    key = torch.arange(skv, device=visible.device)[None, :]
    causal = key <= torch.arange(sq, device=visible.device)[:, None] + (skv - sq)
    sees = visible.any(dim=-1, keepdim=True)  # fully masked (padded) query rows carry no evidence
    valid_keys = visible.any(dim=-2, keepdim=True)
    for base, name in ((causal, PATTERN.CAUSAL), (torch.ones_like(causal), PATTERN.FULL)):
        if torch.equal(visible & sees, base & valid_keys & sees):
            return name if bool(valid_keys.all()) else PATTERN.PADDING
    window = tensor_mask_window(mask, sq, skv)
    if window and torch.equal(visible, (causal & (key > torch.arange(sq, device=visible.device)[:, None]
                                                   + (skv - sq) - window)).expand_as(visible)):
        return PATTERN.SLIDING_WINDOW
    if sq == skv and (torch.equal(visible, _same_segment(visible) & causal)
                      or torch.equal(visible, _same_segment(visible))):
        return PATTERN.BLOCK
    return PATTERN.ARBITRARY


def block_mask_causal_window(mask: Any) -> tuple[bool, int]:
    """causal_window() of a FlexAttention BlockMask, from its mask_mod (batch 0, head 0)."""
    sq, skv = mask.seq_lengths
    device = mask.kv_num_blocks.device
    zero = torch.zeros((), dtype=torch.int64, device=device)
    keys = torch.arange(skv, device=device)
    return causal_window(lambda i: mask.mask_mod(zero, zero, torch.tensor(i, device=device), keys), sq, skv)


def block_mask_window_and_pattern(mask: Any) -> dict:
    """The window of a BlockMask's mask_mod and its pattern: "sliding_window" or "causal" when
    it is one of them (the call's useful pairs follow), "" for any other mask_mod; read once."""
    causal, window = _best_effort(block_mask_causal_window, mask, default=(False, 0))
    return {"window": window, "pattern": (PATTERN.SLIDING_WINDOW if window else PATTERN.CAUSAL) if causal else ""}


def _best_effort(read_window: Callable[..., Any], *args: Any, default: Any = 0) -> Any:
    """A window is a hint: a mask whose values cannot be read (a mask_mod that needs more than
    index tensors, a meta tensor) has none, and the call's record stays complete."""
    try:
        return read_window(*args)
    except Exception:  # noqa: BLE001
        return default


def mask_structure(mask: Any, sq: int, skv: int, is_causal: bool) -> tuple[bool, list[int], int]:
    """(causal, key_lengths, window) that reproduce a mask when it is causal, padding (keys
    past each batch element's length masked) or a causal sliding window, for the heads
    statistics; any other mask reads as full attention. A BlockMask is read from its mask_mod."""
    if mask is None:
        return is_causal, [], 0
    if type(mask).__name__ == "BlockMask":
        causal, window = _best_effort(block_mask_causal_window, mask, default=(False, 0))
        return causal, [], window
    visible = _visible_planes(mask, sq, skv).to("cpu")
    future = torch.arange(skv)[None, :] > torch.arange(sq)[:, None] + (skv - sq)
    causal = is_causal or (sq > 1 and not bool(visible[:, future].any()))
    window = tensor_mask_window(mask, sq, skv) if causal else 0
    if window:
        return True, [], window
    last = visible[:, -1, :]  # the last query row sees the most keys
    lengths = last.sum(dim=-1).tolist()
    prefix = all(bool(last[b, :int(n)].all()) for b, n in enumerate(lengths))
    key_lengths = [int(n) for n in lengths] if prefix and any(int(n) < skv for n in lengths) else []
    return causal, key_lengths, window


class _MaskFacts:
    """Facts read from mask values, once per distinct mask (transformers hands every layer the
    same mask tensor; reading values of a GPU mask synchronises, so it happens once)."""

    def __init__(self) -> None:
        self._cache: dict[tuple, dict] = {}

    def describe(self, mask: Any, sq: int, skv: int) -> dict:
        if mask is None:
            return {"kind": MASK.NONE}
        if isinstance(mask, torch.Tensor):
            kind = MASK.BOOL if mask.dtype == torch.bool else (MASK.FLOAT if mask.is_floating_point() else MASK.UNKNOWN)
            out = {"kind": kind, "shape": list(mask.shape), "dtype": _dtype_name(mask.dtype)}
            key = ("tensor", id(mask), mask.data_ptr(), mask._version, sq, skv)
            if kind != MASK.UNKNOWN:
                out.update(self._cached(key, lambda: {"window": _best_effort(tensor_mask_window, mask, sq, skv),
                                                      "pattern": _best_effort(tensor_mask_pattern, mask, sq, skv,
                                                                              default="")}))
            return out
        if type(mask).__name__ == "BlockMask":
            out = {"kind": MASK.BLOCK_MASK, "shape": list(getattr(mask, "shape", ()))}
            out.update(self._cached(("BlockMask", id(mask), sq, skv), lambda: {
                "block_size": [int(b) for b in mask.BLOCK_SIZE],
                "block_sparsity": float(mask.sparsity()) / 100.0,
                **block_mask_window_and_pattern(mask)}))
            return out
        return {"kind": MASK.UNKNOWN}

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


# ---- the capture mode ---------------------------------------------------------------------------

class _SdpaHolders:
    """Loaded modules that hold a function as their attribute ``scaled_dot_product_attention``:
    torch.nn.functional and torch._C._nn, and every module that imported it under that name
    (``from torch.nn.functional import scaled_dot_product_attention``), whose calls would
    otherwise bypass a patch of torch.nn.functional alone. Each module is looked at once per
    process (a look-up in each of a few thousand module dicts costs milliseconds, more than a
    profiled pass may): later patches look only at modules imported since."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._holders: list[Any] = []

    def of(self, function: Callable) -> list[Any]:
        if len(sys.modules) != len(self._seen):  # else no module was imported since the last look
            self._look_at_new_modules()
        return [m for m in self._holders if getattr(m, _SDPA_NAME, None) is function]

    def _look_at_new_modules(self) -> None:
        for name, module in list(sys.modules.items()):
            if name in self._seen:
                continue
            self._seen.add(name)
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict) and _SDPA_NAME in namespace:
                self._holders.append(module)


_sdpa_holders = _SdpaHolders()


def patch_sdpa(on_call: Callable[[Callable, tuple, dict], Any]) -> Callable[[], None]:
    """Routes every call of F.scaled_dot_product_attention through ``on_call(original, args,
    kwargs)``, which must call ``original(*args, **kwargs)`` and return its result. A function
    replaced where callers look it up costs nothing for the other torch functions, where a
    TorchFunctionMode costs every one of them a Python call (bench/capture_overhead.py,
    docs/performance.md). A graph that torch.compile traces keeps torch's own function. Returns
    the undo; nested patches must be undone in reverse order."""
    original = torch.nn.functional.scaled_dot_product_attention
    holders = _sdpa_holders.of(original)

    @functools.wraps(original)
    def scaled_dot_product_attention(*args, **kwargs):
        if torch.compiler.is_compiling():
            return original(*args, **kwargs)
        return on_call(original, args, kwargs)

    for module in holders:
        setattr(module, _SDPA_NAME, scaled_dot_product_attention)

    def undo() -> None:
        for module in holders:
            if getattr(module, _SDPA_NAME, None) is scaled_dot_product_attention:
                setattr(module, _SDPA_NAME, original)

    return undo


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


def patch_module_call(wrap: Callable[[Callable], Callable]) -> Callable[[], None]:
    """Replaces ``nn.Module._call_impl`` (what ``Module.__call__`` runs) by ``wrap(original)``
    for every module: one Python call more per module call, where a global forward hook makes
    every module call take the hook path of ``_call_impl`` (several times that). ``_call_impl``
    is a plain method, so the swap is a dict store; ``__call__`` is a type slot, and replacing it
    updates every loaded nn.Module subclass (about 0.2 ms with GPT-2 and LLaMA loaded). A module
    run through ``Module.compile()`` calls its compiled copy instead. Returns the undo; nested
    patches must be undone in reverse order."""
    original = torch.nn.Module._call_impl
    replacement = wrap(original)
    torch.nn.Module._call_impl = replacement

    def undo() -> None:
        if torch.nn.Module._call_impl is replacement:
            torch.nn.Module._call_impl = original

    return undo


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.modules: list[torch.nn.Module] = []   # forward-call stack
        self.interface_record: dict | None = None  # record of the transformers call in flight
        self.generate_depth = 0


class CaptureMode:
    """Installs the interception on enter and removes it on exit; hands each attention call to
    ``sdpa_call`` / ``interface_call``, which a subclass extends (doing its part, then
    ``super()``) and which end by running the call exactly as the caller made it."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self._local = _ThreadState()
        self._root_names: dict[int, dict[int, str]] = {}
        self._paths: dict[int, str] = {}
        self._range_names: dict[int, str | None] = {}  # filled by _range_name
        self._interface_wrappers: dict[tuple, Callable] = {}
        self._undo: list[Callable[[], None]] = []

    # ---- install / remove ---------------------------------------------------------------

    def __enter__(self) -> "CaptureMode":
        try:
            self._undo.append(patch_module_call(self._module_call))
            self._patch_transformers()
            self._undo.append(patch_sdpa(self.sdpa_call))
        except Exception as e:  # noqa: BLE001 - no capture this time, but the user's run goes on
            self._hook_failed("installing the hooks", e)
            self.__exit__(None, None, None)  # what was installed comes off again
        return self

    def __exit__(self, *exc) -> None:
        # Every hook comes off even when one removal fails: a hook left behind would run after
        # the capture, in the user's code.
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
        local = self._local
        original_generate = GenerationMixin.generate

        def generate(model_self, *args, **kwargs):
            local.generate_depth += 1
            try:
                return original_generate(model_self, *args, **kwargs)
            finally:
                local.generate_depth -= 1

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

    # ---- the calls (extended by subclasses) -------------------------------------------------

    def sdpa_call(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """One scaled_dot_product_attention call."""
        return func(*args, **kwargs)

    def interface_call(self, implementation: str, fn: Callable, module: Any, query: Any, key: Any, value: Any,
                       attention_mask: Any, args: tuple, kwargs: dict) -> Any:
        """One call of the transformers attention interface (``implementation``: "sdpa",
        "eager", "flex_attention", ...)."""
        return fn(module, query, key, value, attention_mask, *args, **kwargs)

    def wrap_interface(self, implementation: str, fn: Callable) -> Callable:
        key = (implementation, fn)
        wrapper = self._interface_wrappers.get(key)
        if wrapper is None:
            wrapper = self._interface_wrappers[key] = self._make_interface_wrapper(implementation, fn)
        return wrapper

    def _make_interface_wrapper(self, implementation: str, fn: Callable) -> Callable:
        call = self.interface_call

        def attention_interface(module, query, key, value, attention_mask, *args, **kwargs):
            return call(implementation, fn, module, query, key, value, attention_mask, args, kwargs)

        attention_interface.__wrapped__ = fn
        return attention_interface

    # ---- module stack -----------------------------------------------------------------------

    @property
    def modules(self) -> list[torch.nn.Module]:
        """This thread's nn.Module forward-call stack, outermost first."""
        return self._local.modules

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
        """The trace range a module's forward runs in (None: none), kept in self._range_names,
        which the module call reads first (it runs for every module)."""
        self._range_names[id(module)] = None
        return None

    def _module_call(self, call: Callable) -> Callable:
        """``nn.Module._call_impl`` that keeps this thread's module stack and runs the module
        inside its trace range (``call``: the one it replaces)."""
        local, range_names, range_name = self._local, self._range_names, self._range_name
        profiling, compiling = torch.autograd._profiler_enabled, torch.compiler.is_compiling

        def _call_impl(module, *args, **kwargs):  # the name torch._dynamo knows a module call frame by
            if compiling():  # a graph being traced keeps torch's own call
                return call(module, *args, **kwargs)
            stack = local.modules
            stack.append(module)
            handle = None
            try:
                if profiling():
                    name = range_names.get(id(module), False)
                    if name is False:
                        name = range_name(module)
                    if name is not None:
                        handle = _open_range(name)
            except Exception as e:  # noqa: BLE001 - never let bookkeeping reach the user
                self._hook_failed("module call", e)
            try:
                return call(module, *args, **kwargs)
            finally:
                stack.pop()
                if handle is not None:
                    self._close_range(handle, "module call end")

        return _call_impl

    def _close_range(self, handle: Any, where: str) -> None:
        """Closes a trace range after the user's call returned (or raised): a failure here is
        attnprof's, and must not replace the call's result or exception."""
        try:
            _close_range(handle)
        except Exception as e:  # noqa: BLE001
            self._hook_failed(where, e)

    def _phase(self, query: Any) -> str:
        if self._local.generate_depth == 0 or not isinstance(query, torch.Tensor) or query.dim() < 2:
            return ""
        return PHASE.DECODE if query.shape[-2] == 1 else PHASE.PREFILL


class AttentionCapture(CaptureMode):
    """One record per attention call (the sidecar), each call and each non-torch module's
    forward inside its trace range; only while the profiler records."""

    def __init__(self, step_of: Callable[[], int] = lambda: 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.records: list[dict] = []
        self._step_of = step_of
        self._choices = _ChoiceCache()
        self._masks = _MaskFacts()

    def _range_name(self, module: torch.nn.Module) -> str | None:
        """Modules defined outside torch get a trace range, which names the attention calls
        that no interception sees (a hand-written matmul/softmax, a library's own kernel):
        torch's own layers cannot hold an attention computation that attnprof does not already
        see as an op, and the classes of NO_ATTENTION_CLASSES start none in their own code."""
        key = id(module)
        if key not in self._range_names:
            named = not type(module).__module__.startswith("torch.") and not starts_no_attention(module)
            self._range_names[key] = MODULE_PREFIX + self._path_of(module) if named else None
        return self._range_names[key]

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

    def sdpa_call(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        """Records the call (or completes the transformers record it runs in), then runs it
        exactly as called, inside its range."""
        handle = None
        try:
            if torch.autograd._profiler_enabled():
                a = _sdpa_arguments(args, kwargs)
                record = self._local.interface_record
                if record is not None and record.pop("_pending", False):
                    self._local.interface_record = None  # one SDPA call per interface call
                else:
                    record = self._new_record("F.scaled_dot_product_attention", None)
                    handle = _open_range(f"{CALL_PREFIX}{record['id']} {record['module']}")
                self._fill_arguments(record, a)
                record["pytorch_choice"] = self._choices.choice(a)
        except Exception as e:  # noqa: BLE001
            self._hook_failed("scaled_dot_product_attention", e)
        try:
            return super().sdpa_call(func, args, kwargs)
        finally:
            if handle is not None:
                self._close_range(handle, "scaled_dot_product_attention end")

    def interface_call(self, implementation: str, fn: Callable, module: Any, query: Any, key: Any, value: Any,
                       attention_mask: Any, args: tuple, kwargs: dict) -> Any:
        """Records the call inside its range. An SDPA call made inside completes the record
        with its exact arguments; the record is first filled from the interface's own
        arguments, except for the "sdpa" implementation, which always makes that call (filled
        afterwards only when it did not: filling twice cost every layer a second mask look)."""
        handle, record, local = None, None, self._local
        outer = local.interface_record
        interface_arguments = {
            "query": query, "key": key, "value": value, "attn_mask": attention_mask,
            "dropout_p": kwargs.get("dropout", 0.0) or 0.0, "is_causal": False,
            "scale": kwargs.get("scaling"), "enable_gqa": False}
        try:
            if torch.autograd._profiler_enabled():
                record = self._new_record("transformers." + implementation, module)
                if implementation != "sdpa":
                    self._complete_from_interface(record, interface_arguments)
                record["_pending"] = True  # an inner SDPA call (if any) fills exact arguments
                local.interface_record = record
                handle = _open_range(f"{CALL_PREFIX}{record['id']} {record['module']}")
        except Exception as e:  # noqa: BLE001
            self._hook_failed("attention interface", e)
        try:
            return super().interface_call(implementation, fn, module, query, key, value, attention_mask, args, kwargs)
        finally:
            local.interface_record = outer
            try:
                if record is not None and record.pop("_pending", False) and implementation == "sdpa":
                    self._complete_from_interface(record, interface_arguments)
            except Exception as e:  # noqa: BLE001
                self._hook_failed("attention interface", e)
            if handle is not None:
                self._close_range(handle, "attention interface end")

    def _complete_from_interface(self, record: dict, a: dict) -> None:
        self._fill_arguments(record, a)
        record["pytorch_choice"] = ""

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
