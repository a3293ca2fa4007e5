"""Head statistics throughput (docs/heads.md section 6).

Compares, in one run on one core each, for S = 4096, D = 128:
  * attnprof's streaming statistics pass (C++, attnprof._core.attach_heads),
  * OpenBLAS SGEMM (cblas_sgemm from Debian's libopenblas) on the same Q K^T arithmetic,
  * a PyTorch CPU implementation of the same statistics (dense softmax per head).
GFLOP/s count the Q K^T products only (2 S^2 D per head), the same arithmetic in all three.
Also prints the peak-RSS growth of the attnprof pass at S = 2048 and 4096 (a dense S x S
float32 score matrix would grow 4x; the streaming pass does not).

Run: .venv/bin/python bench/heads_bench.py [--seq 4096] [--heads 2]
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import resource
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core for every contender

import numpy as np  # noqa: E402
import torch  # noqa: E402

from attnprof import _core, heads  # noqa: E402


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def attnprof_pass(q: np.ndarray, k: np.ndarray) -> str:
    layer = _core.CapturedLayer()
    layer.layer, layer.q, layer.k = 0, q, k
    opt = heads._options(threads=1)
    return _core.attach_heads("", [layer], opt)


def openblas_sgemm():
    name = ctypes.util.find_library("openblas") or "libopenblas.so.0"
    lib = ctypes.CDLL(name)
    f = lib.cblas_sgemm
    f.restype = None
    f.argtypes = [ctypes.c_int] * 6 + [ctypes.c_float, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                       ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_int]

    def qkt(q: np.ndarray, k: np.ndarray, out: np.ndarray) -> None:  # out = q @ k^T, row-major
        s, d = q.shape
        f(101, 111, 112, s, k.shape[0], d, 1.0, q.ctypes.data, d, k.ctypes.data, d, 0.0, out.ctypes.data,
          k.shape[0])
    return qkt


def torch_stats(q: torch.Tensor, k: torch.Tensor, block: int = 64, sink: int = 4,
                windows=(16, 32, 64, 128, 256, 512, 1024)) -> dict:
    """The same statistics, dense per head (reference implementation for the timing)."""
    out = []
    S, D = q.shape[-2], q.shape[-1]
    pos = torch.arange(S)
    dist = (pos[:, None] - pos[None, :]).abs()
    for h in range(q.shape[1]):
        a = torch.softmax(q[0, h] @ k[0, h].T / D ** 0.5, dim=-1)
        ent = -(a * torch.log(a.clamp_min(1e-30))).sum(-1) / torch.log(torch.tensor(float(S)))
        stats = {"entropy": ent.mean().item(), "max": a.max(-1).values.mean().item(),
                 "sink": a[:, :sink].sum(-1).mean().item()}
        for w in windows:
            stats[f"w{w}"] = (a * (dist < w)).sum(-1).mean().item()
        m = a.reshape(S // block, block, S // block, block).sum((1, 3)) / block
        srt = m.sort(-1, descending=True).values.cumsum(-1)
        stats["cov95"] = ((srt < 0.95).sum(-1) + 1).float().mean().item() / (S // block)
        out.append(stats)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--heads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    S, D, H = args.seq, args.dim, args.heads
    flops = 2.0 * S * S * D * H
    rng = np.random.default_rng(0)

    # Memory first, while nothing else has touched S x S buffers.
    growth = {}
    for s in (S // 2, S):
        q = rng.standard_normal((1, H, s, D), dtype=np.float32)
        k = rng.standard_normal((1, H, s, D), dtype=np.float32)
        before = rss_mib()
        attnprof_pass(q, k)
        growth[s] = rss_mib() - before
    q = rng.standard_normal((1, H, S, D), dtype=np.float32)
    k = rng.standard_normal((1, H, S, D), dtype=np.float32)

    t_ours = best_of(lambda: attnprof_pass(q, k))
    qkt = openblas_sgemm()
    scores = np.empty((S, S), dtype=np.float32)
    check = np.empty((S, S), dtype=np.float32)
    qkt(q[0, 0], k[0, 0], check)
    assert np.allclose(check[:4, :4], q[0, 0, :4] @ k[0, 0, :4].T, rtol=1e-4, atol=1e-3), "sgemm wrong"
    t_blas = best_of(lambda: [qkt(q[0, h], k[0, h], scores) for h in range(H)])
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    ref = torch_stats(tq, tk)
    ours = [h for h in __import__("json").loads(attnprof_pass(q, k))["heads"]["heads"]]
    for r, o in zip(ref, ours):  # answers agree before anything is timed
        assert abs(r["entropy"] - o["entropy"]) < 1e-3 and abs(r["sink"] - o["sink_mass"]) < 1e-4
    t_torch = best_of(lambda: torch_stats(tq, tk), repeat=2)

    g = lambda t: flops / t / 1e9  # noqa: E731
    print(f"head statistics, S={S} D={D} heads={H}, one core each (QK^T FLOPs: {flops / 1e9:.1f} GFLOP)")
    print(f"  attnprof streaming stats : {t_ours * 1e3:8.1f} ms  {g(t_ours):7.1f} GFLOP/s")
    print(f"  OpenBLAS sgemm (QK^T only): {t_blas * 1e3:8.1f} ms  {g(t_blas):7.1f} GFLOP/s")
    print(f"  PyTorch dense stats      : {t_torch * 1e3:8.1f} ms  {g(t_torch):7.1f} GFLOP/s")
    print(f"  ratio attnprof / sgemm   : {t_blas / t_ours:6.2f}  (target >= 0.50)")
    print(f"  speed-up vs PyTorch      : {t_torch / t_ours:6.2f}x (target > 1)")
    print(f"  peak RSS growth of the attnprof pass: S={S // 2}: {growth[S // 2]:.1f} MiB, "
          f"S={S}: {growth[S]:.1f} MiB (one dense S x S float32 matrix at S={S}: {S * S * 4 / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
