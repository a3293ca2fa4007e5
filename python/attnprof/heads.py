"""attnprof.heads: capture Q/K/V per attention call and hand them to the C++ head statistics.

    with attnprof.profile(attention_profile=True, heads=True) as prof:
        model(**inputs)
    prof.attention_report().data["heads"]          # per-head statistics, kinds, candidates

or, without the profiler::

    with attnprof.heads.HeadCapture() as cap:
        model(**inputs)
    section = attnprof.heads.analyze(cap)          # the Report's heads section (dict)
    attnprof.heads.save_safetensors(cap, "qk.safetensors")   # for `attnprof heads FILE`

Capture: every ``torch.nn.functional.scaled_dot_product_attention`` call (transformers'
"sdpa" implementation, hand-written models) through a TorchFunctionMode, and every call of
the other transformers attention implementations ("eager", "flex_attention", ...) through
``AttentionInterface.get_interface``; the output projection is found on the calling attention
module or its parents (o_proj / out_proj / output.dense). Hand-written eager attention
(matmul + softmax outside transformers) and direct flex_attention calls are not captured. Only conversion happens here: statistics,
classification and verdicts are computed in C++ (docs/heads.md).
"""
from __future__ import annotations

import json
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from . import _core
from ._capture import (HookError, block_mask_causal_window, patch_attention_interface, tensor_mask_window,
                       visible_keys)

_OUTPUT_PROJECTIONS = ("o_proj", "out_proj", "output.dense", "attention.output.dense", "c_proj", "wo", "dense")


@dataclass
class CapturedCall:
    """One attention call: float32 CPU copies, [B, H, S, D]."""
    layer: int
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor | None
    w_o: torch.Tensor | None
    causal: bool
    scale: float
    key_lengths: list[int] = field(default_factory=list)
    window: int = 0            # sliding window read from the mask (0 = none)
    module: str = ""


def _as_f32(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(device="cpu", dtype=torch.float32).contiguous()


def _describe_mask(mask: torch.Tensor | None, sq: int, skv: int, is_causal: bool) -> tuple[bool, list[int], int]:
    """(causal, key_lengths, window) that reproduce a [B|1, 1|H, Sq, Skv] mask when it is a
    causal, padding or causal sliding-window mask; other masks fall back to full attention."""
    if mask is None:
        return is_causal, [], 0
    vis = visible_keys(mask.detach())
    while vis.dim() < 4:
        vis = vis.unsqueeze(0)
    vis = vis[:, 0].to("cpu")                   # [B, Sq, Skv]
    if vis.shape[-2] != sq or vis.shape[-1] != skv:
        vis = vis.expand(vis.shape[0], sq, skv)
    off = skv - sq
    idx_q = torch.arange(sq).unsqueeze(1) + off
    idx_k = torch.arange(skv).unsqueeze(0)
    future = idx_k > idx_q
    causal = is_causal or (sq > 1 and not bool(vis[:, future].any()))
    window = tensor_mask_window(mask, sq, skv) if causal else 0
    if window:
        return True, [], window
    last = vis[:, -1, :]                        # the last query row sees the most keys
    lengths = last.sum(dim=-1).tolist()
    prefix = all(bool(last[b, :int(n)].all()) for b, n in enumerate(lengths))
    key_lengths = [int(n) for n in lengths] if prefix and any(int(n) < skv for n in lengths) else []
    return causal, key_lengths, window


def _describe_block_mask(mask: Any) -> tuple[bool, list[int], int]:
    """(causal, key_lengths, window) of a FlexAttention BlockMask: a causal sliding window,
    plain causal, or (any other mask_mod) full attention."""
    try:
        causal, window = block_mask_causal_window(mask)
    except Exception:  # noqa: BLE001 - a mask_mod that needs more than index tensors
        causal, window = False, 0
    return causal, [], window


def _output_projection(modules: list[torch.nn.Module], width: int) -> torch.Tensor | None:
    """W_O of the innermost active attention module (or its parent), [hidden, Hq * Dv]."""
    for module in reversed(modules):
        for name in _OUTPUT_PROJECTIONS:
            try:
                sub = module.get_submodule(name)
            except AttributeError:
                continue
            if isinstance(sub, torch.nn.Linear) and sub.in_features == width:
                return sub.weight
    return None


class _SdpaHeadsMode(TorchFunctionMode):
    def __init__(self, capture: "HeadCapture") -> None:
        super().__init__()
        self.capture = capture

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.nn.functional.scaled_dot_product_attention:
            self.capture._safely(self.capture._record_sdpa, args, kwargs)
        return func(*args, **kwargs)


class HeadCapture:
    """Context manager that records Q/K/V (and W_O) of attention calls, up to ``max_calls``."""

    def __init__(self, max_calls: int = 256, with_values: bool = True) -> None:
        self.calls: list[CapturedCall] = []
        self.max_calls = max_calls
        self.with_values = with_values
        self._stack = threading.local()
        self._mode = _SdpaHeadsMode(self)
        self._undo: list[Any] = []  # callables that remove what __enter__ installed
        self.failed = False         # a call could not be recorded (warned once)

    def __enter__(self) -> "HeadCapture":
        self._undo.append(torch.nn.modules.module.register_module_forward_pre_hook(self._push).remove)
        self._undo.append(torch.nn.modules.module.register_module_forward_hook(self._pop).remove)
        self._patch_transformers()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._mode.__exit__(*exc)
        while self._undo:
            self._undo.pop()()

    def _patch_transformers(self) -> None:
        """Wraps the transformers attention implementations that do not call SDPA (the SDPA
        one is seen by the TorchFunctionMode)."""
        capture = self

        def wrap(implementation: str, fn: Any) -> Any:
            if implementation == "sdpa":
                return fn

            def attention_interface(module, query, key, value, attention_mask, *args, **kwargs):
                capture._safely(capture._record_interface, query, key, value, attention_mask, kwargs.get("scaling"))
                return fn(module, query, key, value, attention_mask, *args, **kwargs)

            attention_interface.__wrapped__ = fn
            return attention_interface

        undo = patch_attention_interface(wrap)
        if undo is not None:
            self._undo.append(undo)

    def _safely(self, record: Any, *args: Any) -> None:
        """Recording never breaks the run: a failure is warned about once and the call skipped."""
        try:
            record(*args)
        except Exception as e:  # noqa: BLE001
            if not self.failed:
                warnings.warn(f"attnprof.heads: capture failed ({type(e).__name__}: {e}); the run continues, "
                              f"the heads report may miss some calls", HookError, stacklevel=3)
            self.failed = True

    def _modules(self) -> list[torch.nn.Module]:
        if not hasattr(self._stack, "modules"):
            self._stack.modules = []
        return self._stack.modules

    def _push(self, module, args) -> None:
        self._modules().append(module)

    def _pop(self, module, args, output) -> None:
        stack = self._modules()
        if stack and stack[-1] is module:
            stack.pop()

    def _record_sdpa(self, args: tuple, kwargs: dict) -> None:
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        a = dict(zip(names, args))
        a.update(kwargs)
        q, k = a["query"], a["key"]
        if len(self.calls) >= self.max_calls or q.dim() != 4 or k.dim() != 4:
            return
        mask = _describe_mask(a.get("attn_mask"), q.shape[-2], k.shape[-2], bool(a.get("is_causal", False)))
        self._record(q, k, a["value"], mask, a.get("scale"))

    def _record_interface(self, q: Any, k: Any, v: Any, mask: Any, scale: Any) -> None:
        """A transformers attention implementation's call ([B, H, S, D] tensors; the mask is
        a tensor (eager) or a BlockMask (flex_attention))."""
        if len(self.calls) >= self.max_calls or q.dim() != 4 or k.dim() != 4:
            return
        sq, skv = q.shape[-2], k.shape[-2]
        if type(mask).__name__ == "BlockMask":
            described = _describe_block_mask(mask)
        else:
            described = _describe_mask(mask, sq, skv, False)
        self._record(q, k, v, described, scale)

    def _record(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: tuple[bool, list[int], int], scale: Any) -> None:
        causal, key_lengths, window = mask
        scale = scale or 0.0
        w_o = _output_projection(self._modules(), q.shape[1] * v.shape[-1]) if self.with_values else None
        self.calls.append(CapturedCall(
            layer=len(self.calls), q=_as_f32(q), k=_as_f32(k),
            v=_as_f32(v) if self.with_values else None,
            w_o=_as_f32(w_o) if w_o is not None else None,
            causal=causal, scale=float(scale), key_lengths=key_lengths, window=window,
            module=type(self._modules()[-1]).__name__ if self._modules() else ""))


def _options(block_size: int = 64, sink_tokens: int = 4, special_tail: int = 0, windows: list[int] | None = None,
             recall_window: int = 256, model_window: int = 0, max_query_blocks: int = 0,
             threads: int = 0) -> Any:
    o = _core.HeadOptions()
    o.block_size, o.sink_tokens, o.trailing_special_tokens = block_size, sink_tokens, special_tail
    if windows is not None:
        o.windows = list(windows)
    o.recall_window, o.model_window, o.max_query_blocks, o.threads = recall_window, model_window, max_query_blocks, threads
    return o


def _core_layers(capture: HeadCapture) -> list[Any]:
    layers = []
    for c in capture.calls:
        layer = _core.CapturedLayer()
        layer.layer, layer.causal, layer.scale, layer.key_lengths = c.layer, c.causal, c.scale, c.key_lengths
        layer.q, layer.k = c.q.numpy(), c.k.numpy()
        if c.v is not None:
            layer.v = c.v.numpy()
            if c.w_o is not None:
                layer.w_o = c.w_o.numpy()
        layers.append(layer)
    return layers


def attach(report_json: str, capture: HeadCapture, **options: Any) -> str:
    """Report JSON ('' for none) + captured calls -> Report JSON with the heads section."""
    if "model_window" not in options:
        options["model_window"] = max((c.window for c in capture.calls), default=0)
    return _core.attach_heads(report_json, _core_layers(capture), _options(**options))


def analyze(capture: HeadCapture, **options: Any) -> dict:
    """The heads section (dict, as in the Report JSON) of the captured calls."""
    return json.loads(attach("", capture, **options))["heads"]


def analyze_file(path: str, **options: Any) -> dict:
    """The heads section of Q/K tensors saved by save_safetensors (or by hand, docs/heads.md)."""
    return json.loads(_core.analyze_heads_file(str(path), _options(**options)))["heads"]


def save_safetensors(capture: HeadCapture, path: str) -> None:
    """Writes the captured calls as layers.<L>.{q,k,v,o_proj,key_lengths} (docs/heads.md)."""
    from safetensors.torch import save_file
    tensors: dict[str, torch.Tensor] = {}
    metadata = {"causal": "false"}
    window = 0
    for c in capture.calls:
        p = f"layers.{c.layer}."
        tensors[p + "q"], tensors[p + "k"] = c.q, c.k
        if c.v is not None:
            tensors[p + "v"] = c.v
            if c.w_o is not None:
                tensors[p + "o_proj"] = c.w_o
        if c.key_lengths:
            tensors[p + "key_lengths"] = torch.tensor(c.key_lengths, dtype=torch.int64)
        metadata[p + "causal"] = "true" if c.causal else "false"
        if c.scale:
            metadata[p + "scale"] = repr(c.scale)
        window = max(window, c.window)
    if window:
        metadata["sliding_window"] = str(window)
    save_file(tensors, str(path), metadata=metadata)
