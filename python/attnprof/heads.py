"""attnprof.heads: capture Q/K/V per attention call and hand them to the C++ head statistics.

    with attnprof.profile(attention_profile=True, heads=True) as prof:
        model(**inputs)
    prof.attention_report().data["heads"]          # per-head statistics, kinds, candidates

or, without the profiler::

    with attnprof.heads.HeadCapture() as cap:
        model(**inputs)
    section = attnprof.heads.analyze(cap)          # the Report's heads section (dict)
    attnprof.heads.save_safetensors(cap, "qk.safetensors")   # for `attnprof heads FILE`

Capture: ``HeadCapture`` extends attnprof's one capture mode (attnprof._capture.CaptureMode:
the SDPA wrapper, the transformers attention interface, the module stack, the mask reader), so
it sees every ``F.scaled_dot_product_attention`` call (transformers' "sdpa" implementation,
hand-written models) and every call of the other transformers attention implementations
("eager", "flex_attention", ...); the output projection is found on the calling attention
module or its parents (o_proj / out_proj / output.dense). Hand-written eager attention
(matmul + softmax outside transformers) and direct flex_attention calls are not captured. Only
conversion happens here: statistics, classification and verdicts are computed in C++
(docs/heads.md).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import _core
from ._capture import AttentionCapture, CaptureMode, _sdpa_arguments, mask_structure

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


class HeadCapture(CaptureMode):
    """Context manager that records Q/K/V (and W_O) of attention calls, up to ``max_calls``."""

    def __init__(self, max_calls: int = 256, with_values: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: list[CapturedCall] = []
        self.max_calls = max_calls
        self.with_values = with_values

    @property
    def failed(self) -> bool:
        """A call could not be recorded (warned once)."""
        return bool(self.warnings)

    def sdpa_call(self, func: Callable, args: tuple, kwargs: dict) -> Any:
        self._safely("heads: scaled_dot_product_attention", self._record_sdpa, args, kwargs)
        return super().sdpa_call(func, args, kwargs)

    def interface_call(self, implementation: str, fn: Callable, module: Any, query: Any, key: Any, value: Any,
                       attention_mask: Any, args: tuple, kwargs: dict) -> Any:
        if implementation != "sdpa":  # the SDPA call inside the "sdpa" one is seen by sdpa_call
            self._safely("heads: attention interface", self._record_interface, query, key, value, attention_mask,
                         kwargs.get("scaling"))
        return super().interface_call(implementation, fn, module, query, key, value, attention_mask, args, kwargs)

    def _safely(self, where: str, record: Any, *args: Any) -> None:
        """Recording never breaks the run: a failure is warned about once and the call skipped."""
        try:
            record(*args)
        except Exception as e:  # noqa: BLE001
            self._hook_failed(where, e)

    def _record_sdpa(self, args: tuple, kwargs: dict) -> None:
        a = _sdpa_arguments(args, kwargs)
        q, k = a["query"], a["key"]
        if len(self.calls) >= self.max_calls or q.dim() != 4 or k.dim() != 4:
            return
        mask = mask_structure(a["attn_mask"], q.shape[-2], k.shape[-2], bool(a["is_causal"]))
        self._record(q, k, a["value"], mask, a["scale"])

    def _record_interface(self, q: Any, k: Any, v: Any, mask: Any, scale: Any) -> None:
        """A transformers attention implementation's call ([B, H, S, D] tensors; the mask is
        a tensor (eager) or a BlockMask (flex_attention))."""
        if len(self.calls) >= self.max_calls or q.dim() != 4 or k.dim() != 4:
            return
        self._record(q, k, v, mask_structure(mask, q.shape[-2], k.shape[-2], False), scale)

    def _record(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: tuple[bool, list[int], int], scale: Any) -> None:
        causal, key_lengths, window = mask
        scale = scale or 0.0
        modules = self.modules
        w_o = _output_projection(modules, q.shape[1] * v.shape[-1]) if self.with_values else None
        self.calls.append(CapturedCall(
            layer=len(self.calls), q=_as_f32(q), k=_as_f32(k),
            v=_as_f32(v) if self.with_values else None,
            w_o=_as_f32(w_o) if w_o is not None else None,
            causal=causal, scale=float(scale), key_lengths=key_lengths, window=window,
            module=type(modules[-1]).__name__ if modules else ""))


class CallsAndHeads(HeadCapture, AttentionCapture):
    """``attnprof.profile(heads=True)``: the sidecar records and the Q/K/V copies from one
    installation of the capture mode (one SDPA wrapper, one module stack)."""


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
