"""Makes the old-schema test traces of cpp/tests/data from REAL CPU captures.

Run:  /work/main/.venv/bin/python cpp/tests/data/make_legacy_traces.py   (torch 2.13 CPU)

1. An encoder-decoder Transformer with hand-written attention (OpenNMT-style: q / sqrt(d),
   matmul with k^T, masked_fill, softmax, dropout, matmul with v; 3 encoder layers of
   self-attention, 3 decoder layers of self- and cross-attention, one single-head copy
   attention over the source: 10 attention calls), plus a tied-embedding generator (matmul
   with the vocabulary embedding, softmax over the vocabulary, matmul of those probabilities
   with the embedding: a vocabulary projection, not attention), run once in train mode under
   torch.profiler(record_shapes=True) on CPU. Written three ways:
     encdec_current.json.gz          as torch 2.13 wrote it
     encdec_legacy.json.gz           rewritten into the torch 1.8-1.9 Kineto schema
     encdec_legacy_noshapes.json.gz  the same without Input Dims / Input type
   The legacy schema (pytorch/kineto libkineto/src/output_json.cpp of 2021): cat "Operator"
   for CPU ops with args Device / External id / Trace name / Trace iteration, "Trace" span on
   pid "Traces", string tids, integer microseconds since the epoch, no Concrete Inputs.
2. nn.TransformerEncoderLayer in eval mode under no_grad (the native fast path,
   aten::_transformer_encoder_layer_fwd): encoder_fastpath_current.json.gz.
"""
from __future__ import annotations

import gzip
import json
import math
import os
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
B, S, T, E, HEADS, VOCAB, LAYERS = 2, 12, 9, 32, 4, 40, 3


class MultiHeaded(torch.nn.Module):
    def __init__(self, heads=HEADS):
        super().__init__()
        self.heads, self.d = heads, E // heads
        self.q, self.k, self.v, self.o = (torch.nn.Linear(E, E) for _ in range(4))
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, query, memory, mask):
        b = query.size(0)
        split = lambda x: x.view(b, -1, self.heads, self.d).transpose(1, 2)
        q, k, v = split(self.q(query)), split(self.k(memory)), split(self.v(memory))
        q = q / math.sqrt(self.d)  # scale before the product
        scores = torch.matmul(q, k.transpose(2, 3)).masked_fill(mask, -1e18)
        attn = self.drop(torch.softmax(scores, dim=-1))
        return self.o(torch.matmul(attn, v).transpose(1, 2).contiguous().view(b, -1, E))


class CopyAttention(torch.nn.Module):
    """Single-head "general" global attention over the source (OpenNMT GlobalAttention)."""

    def __init__(self):
        super().__init__()
        self.linear_in = torch.nn.Linear(E, E, bias=False)

    def forward(self, h_t, h_s, src_pad):
        align = torch.bmm(self.linear_in(h_t), h_s.transpose(1, 2))  # [B, T, S]
        align = align.masked_fill(src_pad, -float("inf"))
        probs = torch.softmax(align, dim=-1)
        return torch.bmm(probs, h_s), probs


class EncDec(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, E)
        self.enc = torch.nn.ModuleList(MultiHeaded() for _ in range(LAYERS))
        self.dec_self = torch.nn.ModuleList(MultiHeaded() for _ in range(LAYERS))
        self.dec_cross = torch.nn.ModuleList(MultiHeaded() for _ in range(LAYERS))
        self.copy = CopyAttention()
        self.gate = torch.nn.Linear(E, 1)

    def forward(self, src, tgt):
        src_pad = (src == 0).unsqueeze(1)  # [B, 1, S]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        x = self.embed(src)
        for layer in self.enc:
            x = x + layer(x, x, src_pad.unsqueeze(1))
        y = self.embed(tgt)
        for self_attn, cross in zip(self.dec_self, self.dec_cross):
            y = y + self_attn(y, y, causal)
            y = y + cross(y, x, src_pad.unsqueeze(1))
        context, copy_probs = self.copy(y, x, src_pad)
        # Tied generator: a vocabulary projection, its softmax over the vocabulary, and the
        # expected embedding of those probabilities (softmax @ embedding): not attention.
        logits = torch.matmul(y + context, self.embed.weight.t())
        p_vocab = torch.softmax(logits, dim=-1)
        soft_embedding = torch.matmul(p_vocab, self.embed.weight)
        p_copy = torch.sigmoid(self.gate(y))
        return soft_embedding.sum() + (copy_probs * p_copy).sum()


class FastPath(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(E, HEADS, 64, batch_first=True) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def capture(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        fn()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            return json.load(f)


LEGACY_CAT = {"cpu_op": "Operator", "user_annotation": "Operator", "kernel": "Kernel",
              "cuda_runtime": "Runtime", "gpu_memcpy": "Memcpy", "gpu_memset": "Memset",
              "python_function": "Python", "ac2g": "async"}


def legacy(trace, shapes=True):
    """The torch 1.8-1.9 Kineto schema of the same events."""
    base_us = trace.get("baseTimeNanoseconds", 0) // 1000
    events = []
    for ev in trace["traceEvents"]:
        ev = dict(ev)
        if ev.get("ph") == "M" or ev.get("name") == "[memory]":
            continue
        ev["cat"] = LEGACY_CAT.get(ev.get("cat"), ev.get("cat"))
        if "ts" in ev:
            ev["ts"] = base_us + int(round(float(ev["ts"])))
        if "dur" in ev:
            ev["dur"] = int(round(float(ev["dur"])))
        if isinstance(ev.get("tid"), int):
            ev["tid"] = str(ev["tid"])
        args = ev.get("args", {})
        if ev["cat"] == "Operator":
            kept = {"Device": ev.get("pid"), "External id": args.get("External id", 0),
                    "Trace name": "PyTorch Profiler", "Trace iteration": 0}
            if shapes:
                for key in ("Input Dims", "Input type"):
                    if key in args:
                        kept[key] = args[key]
            for key in ("Fwd thread id", "Sequence number"):
                if key in args:
                    kept[key] = args[key]
            ev["args"] = kept
        elif ev["cat"] in ("Kernel", "Runtime", "Memcpy", "Memset") and "External id" in args:
            args = dict(args)
            args["external id"] = args.pop("External id")  # lowercase in the old GPU/runtime args
            ev["args"] = args
        events.append(ev)
    return {"schemaVersion": 1, "traceEvents": events}


def write(name, trace):
    path = os.path.join(HERE, name)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(json.dumps(trace, separators=(",", ":")).encode())
    print(path, os.path.getsize(path))


def main():
    torch.manual_seed(0)
    model = EncDec().train()
    src = torch.randint(1, VOCAB, (B, S))
    src[1, -3:] = 0  # padding in the second source
    tgt = torch.randint(1, VOCAB, (B, T))
    trace = capture(lambda: model(src, tgt))  # forward in train mode: dropout runs
    write("encdec_current.json.gz", trace)
    write("encdec_legacy.json.gz", legacy(trace))
    write("encdec_legacy_noshapes.json.gz", legacy(trace, shapes=False))

    fast = FastPath().eval()
    x = torch.randn(B, S, E)
    with torch.no_grad():
        fast(x)  # warm-up
        write("encoder_fastpath_current.json.gz", capture(lambda: fast(x)))


if __name__ == "__main__":
    main()
