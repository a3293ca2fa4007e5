// Per-head attention statistics without materialising Sq x Skv (docs/heads.md section 2).
//
// Work unit = (batch, query head, query block of block_size rows). For a unit:
//   sweep 1: logits of the block against the visible key tiles (4x16 micro-kernel over
//            K packed in 64-key tiles), written to a block_size x Skv scratch row-block;
//   sweep 2: per row, m = max, e = exp(z - m), l = sum e: every statistic is a sum of e
//            over a key range divided by l, so the normalised weights are exact (no online
//            rescaling error) and each logit is computed once and exponentiated once.
// Memory per thread: the row-block (block_size x Skv floats) plus one output row-block.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numeric>
#include <thread>
#include <vector>

#include "attnprof/heads.h"
#include "heads/simd_kernels.h"

namespace attnprof {
namespace {

using heads_simd::exp8;
using heads_simd::gemm_4x16;
using heads_simd::load8;
using heads_simd::splat;
using heads_simd::store8;
using heads_simd::v8sf;

constexpr int64_t kTile = 64;  // key tile width of packed K

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Everything the units share, prepared once.
struct Context {
  const HeadInputs* in = nullptr;
  const HeadOptions* opt = nullptr;
  int64_t group = 1;          // Hq / Hkv
  int64_t ntiles = 0;         // key tiles of kTile
  int64_t skv_pad = 0;        // ntiles * kTile
  int64_t dv_pad = 0;         // Dv rounded to 16
  int64_t hidden_pad = 0;     // hidden rounded to 16
  float scale = 1;
  std::vector<float> k_packed;  // [B][Hkv][tile][D][kTile], zero padded
  std::vector<float> v_packed;  // [B][Hkv][skv_pad][dv_pad], zero padded
  std::vector<float> wo_t;      // [Hq][dv_pad][hidden_pad]: W_O^h transposed
  std::vector<int64_t> windows; // sorted, distinct, positive
};

struct Unit {
  int64_t b = 0, h = 0, qb = 0;
};

// Sums of one unit; divided by the row counts when a head is reduced.
struct UnitSums {
  int64_t rows = 0;
  int64_t entropy_rows = 0;
  double keys = 0, entropy = 0, max_weight = 0, sink = 0, special = 0, recall = 0;
  double model_window = 0, out_norm = 0;
  std::vector<double> window;
  int64_t needed90 = 0, needed95 = 0, visible_blocks = 0;
};

struct Scratch {
  std::vector<float> q, z, o, f;
  std::vector<double> block_mass;
  std::vector<int64_t> hi;
};

void pack_inputs(Context& c) {
  const HeadInputs& in = *c.in;
  const int64_t D = in.D;
  c.k_packed.assign(static_cast<size_t>(in.B * in.Hkv * c.ntiles * D * kTile), 0.0f);
  for (int64_t bh = 0; bh < in.B * in.Hkv; ++bh) {
    const float* src = in.k + bh * in.Skv * D;
    float* dst = c.k_packed.data() + bh * c.ntiles * D * kTile;
    for (int64_t j = 0; j < in.Skv; ++j) {
      float* tile = dst + (j / kTile) * D * kTile + (j % kTile);
      for (int64_t d = 0; d < D; ++d) tile[d * kTile] = src[j * D + d];
    }
  }
  if (in.v != nullptr) {
    c.v_packed.assign(static_cast<size_t>(in.B * in.Hkv * c.skv_pad * c.dv_pad), 0.0f);
    for (int64_t bh = 0; bh < in.B * in.Hkv; ++bh)
      for (int64_t j = 0; j < in.Skv; ++j)
        std::copy_n(in.v + (bh * in.Skv + j) * in.Dv, in.Dv,
                    c.v_packed.data() + (bh * c.skv_pad + j) * c.dv_pad);
  }
  if (in.v != nullptr && in.w_o != nullptr) {
    c.wo_t.assign(static_cast<size_t>(in.Hq * c.dv_pad * c.hidden_pad), 0.0f);
    const int64_t ld = in.Hq * in.Dv;
    for (int64_t h = 0; h < in.Hq; ++h)
      for (int64_t cc = 0; cc < in.Dv; ++cc)
        for (int64_t o = 0; o < in.hidden; ++o)
          c.wo_t[static_cast<size_t>((h * c.dv_pad + cc) * c.hidden_pad + o)] =
              in.w_o[o * ld + h * in.Dv + cc];
  }
}

ATTNPROF_INLINE float hmax(v8sf v) {
  float m = v[0];
  for (int i = 1; i < 8; ++i) m = std::max(m, v[i]);
  return m;
}
ATTNPROF_INLINE double hsum(v8sf v) {
  double s = 0;
  for (int i = 0; i < 8; ++i) s += static_cast<double>(v[i]);
  return s;
}

// Sum of e[lo, hi) (e is zero past the row's visible keys): 8 float lanes per chunk of at
// most 64 keys, chunks added in double (fast, and as exact as the float64 reference needs).
ATTNPROF_INLINE double range_sum(const float* e, int64_t lo, int64_t hi) {
  double s = 0;
  int64_t j = lo;
  while (hi - j >= 8) {
    const int64_t end = j + std::min<int64_t>((hi - j) / 8 * 8, kTile);
    v8sf acc = splat(0);
    for (; j < end; j += 8) acc += load8(e + j);
    s += hsum(acc);
  }
  for (; j < hi; ++j) s += e[j];
  return s;
}

// Number of largest blocks whose mass reaches tau of the total.
int64_t blocks_to_cover(std::vector<double> mass, double tau) {
  std::sort(mass.begin(), mass.end(), std::greater<>());
  const double total = std::accumulate(mass.begin(), mass.end(), 0.0);
  double acc = 0;
  for (size_t k = 0; k < mass.size(); ++k) {
    acc += mass[k];
    if (acc >= tau * total - 1e-12) return static_cast<int64_t>(k + 1);
  }
  return static_cast<int64_t>(mass.size());
}

// Softmax sweep of one row held in z[0, ld): writes e = exp(z - max) over [0, hi) and 0
// beyond. Returns l = sum e; `neg_ez` gets sum e * (z - max) (<= 0, for the entropy).
ATTNPROF_INLINE double softmax_row(float* z, int64_t hi, int64_t ld, double& neg_ez) {
  const int64_t full = hi / 8 * 8;
  v8sf vm = splat(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < full; j += 8) {
    const v8sf x = load8(z + j);
    vm = x > vm ? x : vm;
  }
  float m = hmax(vm);
  for (int64_t j = full; j < hi; ++j) m = std::max(m, z[j]);
  const v8sf vmax = splat(m);
  double l = 0, ez = 0;
  for (int64_t t0 = 0; t0 < full; t0 += kTile) {
    v8sf sl = splat(0), sez = splat(0);
    const int64_t t1 = std::min(full, t0 + kTile);
    for (int64_t j = t0; j < t1; j += 8) {
      const v8sf x = load8(z + j) - vmax;
      const v8sf e = exp8(x);
      store8(z + j, e);
      sl += e;
      sez += e * x;
    }
    l += hsum(sl);
    ez += hsum(sez);
  }
  for (int64_t j = full; j < hi; ++j) {
    const float x = z[j] - m;
    const float e = std::exp(x);
    z[j] = e;
    l += e;
    ez += static_cast<double>(e) * x;
  }
  std::fill(z + hi, z + ld, 0.0f);
  neg_ez = ez;
  return l;
}

// The rows of one unit's query block and the keys they see.
struct UnitRows {
  int64_t q0 = 0, nrows = 0, nrows_pad = 0;  // first query, rows, rows rounded up to 4
  int64_t off = 0;      // Skv - Sq: query i sits at key i + off
  int64_t klen = 0;     // the batch row's keys (key_lengths)
  int64_t kvh = 0;      // the K/V head of the query head
  int64_t hi_max = 0;   // the most keys a row sees
  int64_t ld = 0;       // scratch row stride: hi_max rounded to kTile
  int64_t nblocks = 0;  // key blocks of block_size up to hi_max
};

// Visible keys per row, [0, hi), into s.hi; returns their maximum.
ATTNPROF_INLINE int64_t visible_keys(const Context& c, const UnitRows& g, Scratch& s) {
  const HeadInputs& in = *c.in;
  const bool pad_queries = !in.key_lengths.empty() && in.Sq == in.Skv;
  s.hi.assign(static_cast<size_t>(g.nrows_pad), 0);
  int64_t hi_max = 0;
  for (int64_t r = 0; r < g.nrows; ++r) {
    const int64_t i = g.q0 + r;
    int64_t hi = in.causal ? std::min(g.klen, i + g.off + 1) : g.klen;
    if (pad_queries && i >= g.klen) hi = 0;
    s.hi[static_cast<size_t>(r)] = std::max<int64_t>(hi, 0);
    hi_max = std::max(hi_max, s.hi[static_cast<size_t>(r)]);
  }
  return hi_max;
}

// Sweep 1: scaled query block, logits for the visible tiles of each 4-row group, into s.z.
ATTNPROF_INLINE void compute_logits(const Context& c, const Unit& u, const UnitRows& g, Scratch& s) {
  const HeadInputs& in = *c.in;
  const int64_t D = in.D, ld = g.ld;
  s.q.assign(static_cast<size_t>(g.nrows_pad * D), 0.0f);
  const float* qsrc = in.q + ((u.b * in.Hq + u.h) * in.Sq + g.q0) * D;
  for (int64_t r = 0; r < g.nrows * D; ++r) s.q[static_cast<size_t>(r)] = qsrc[r] * c.scale;
  s.z.resize(static_cast<size_t>(g.nrows_pad * ld));
  const float* kp = c.k_packed.data() + (u.b * in.Hkv + g.kvh) * c.ntiles * D * kTile;
  // Tile-outer order: one packed K tile (D x 64) stays in L1/L2 while every 4-row group of
  // the query block uses it; row groups stop at their last visible tile (causal).
  std::vector<int64_t> group_hi(static_cast<size_t>(g.nrows_pad / 4), 0);
  for (int64_t r = 0; r < g.nrows_pad; ++r)
    group_hi[static_cast<size_t>(r / 4)] = std::max(group_hi[static_cast<size_t>(r / 4)], s.hi[static_cast<size_t>(r)]);
  for (int64_t t = 0; t * kTile < g.hi_max; ++t)
    for (int64_t r0 = 0; r0 < g.nrows_pad; r0 += 4) {
      if (group_hi[static_cast<size_t>(r0 / 4)] <= t * kTile) continue;
      for (int64_t c0 = 0; c0 < kTile; c0 += 16)
        gemm_4x16(s.q.data() + r0 * D, D, kp + t * D * kTile + c0, kTile, D,
                  s.z.data() + r0 * ld + t * kTile + c0, ld, false);
    }
}

// The window masses of one row: windows |ip - j| < w, grown one after another so each key is
// summed once; then the recall window (with the sinks) and the model window on their own
// (they need not be in the set).
ATTNPROF_INLINE void add_window_masses(const Context& c, const float* e, int64_t hi, int64_t ip, double il,
                                       int64_t sink_hi, UnitSums& out) {
  const HeadOptions& opt = *c.opt;
  int64_t lo = std::clamp<int64_t>(ip, 0, hi), up = lo;
  double acc = 0;
  auto grow = [&](int64_t w) {
    const int64_t nlo = std::clamp<int64_t>(ip - w + 1, 0, hi);
    const int64_t nup = std::clamp<int64_t>(ip + w, 0, hi);
    acc += range_sum(e, nlo, lo) + range_sum(e, up, nup);
    lo = nlo;
    up = nup;
    return acc * il;
  };
  for (size_t w = 0; w < c.windows.size(); ++w) out.window[w] += grow(c.windows[w]);
  auto window_mass = [&](int64_t w) {
    const int64_t wl = std::clamp<int64_t>(ip - w + 1, 0, hi);
    const int64_t wu = std::clamp<int64_t>(ip + w, 0, hi);
    return std::pair<double, int64_t>{range_sum(e, wl, wu) * il, wl};
  };
  const auto [recent, recent_lo] = window_mass(opt.recall_window);
  out.recall += recent + range_sum(e, 0, std::min(sink_hi, recent_lo)) * il;
  if (opt.model_window > 0) out.model_window += window_mass(opt.model_window).first;
}

// One row's statistics, as range sums of its e = exp(z - max) over l = sum e; returns 1 / l.
ATTNPROF_INLINE double add_row_statistics(const Context& c, const UnitRows& g, int64_t r, float* e, int64_t hi,
                                          Scratch& s, UnitSums& out) {
  const HeadOptions& opt = *c.opt;
  double neg_ez = 0;
  const double l = softmax_row(e, hi, g.ld, neg_ez);
  const double il = 1.0 / l;
  out.keys += static_cast<double>(hi);
  if (hi > 1) {
    const double entropy = std::log(l) - neg_ez * il;  // -sum p log p
    out.entropy += std::max(0.0, entropy) / std::log(static_cast<double>(hi));
    ++out.entropy_rows;
  }
  out.max_weight += il;  // the largest e is exp(0) = 1
  const int64_t sink_hi = std::min(opt.sink_tokens, hi);
  const double sink = range_sum(e, 0, sink_hi) * il;
  out.sink += sink;
  const int64_t special_lo = std::max(sink_hi, g.klen - opt.trailing_special_tokens);
  out.special += sink + (special_lo < hi ? range_sum(e, special_lo, hi) * il : 0.0);
  add_window_masses(c, e, hi, g.q0 + r + g.off, il, sink_hi, out);
  for (int64_t blk = 0; blk < g.nblocks; ++blk) {
    const int64_t j0 = blk * opt.block_size, j1 = std::min(hi, j0 + opt.block_size);
    if (j0 < j1) s.block_mass[static_cast<size_t>(blk)] += range_sum(e, j0, j1) * il;
  }
  return il;
}

// Sweep 2: exact softmax per row and the statistics; returns each row's 1 / l (0 for a row
// that sees no key), which the output norm scales by.
ATTNPROF_INLINE std::vector<double> add_softmax_statistics(const Context& c, const UnitRows& g, Scratch& s,
                                                           UnitSums& out) {
  s.block_mass.assign(static_cast<size_t>(g.nblocks), 0.0);
  int64_t valid_rows = 0;
  std::vector<double> inv_l(static_cast<size_t>(g.nrows_pad), 0.0);
  for (int64_t r = 0; r < g.nrows; ++r) {
    float* e = s.z.data() + r * g.ld;
    const int64_t hi = s.hi[static_cast<size_t>(r)];
    if (hi == 0) {
      std::fill(e, e + g.ld, 0.0f);
      continue;
    }
    inv_l[static_cast<size_t>(r)] = add_row_statistics(c, g, r, e, hi, s, out);
    ++valid_rows;
  }
  for (int64_t r = g.nrows; r < g.nrows_pad; ++r) std::fill_n(s.z.data() + r * g.ld, g.ld, 0.0f);
  out.rows = valid_rows;
  if (valid_rows > 0) {
    out.visible_blocks = g.nblocks;
    out.needed90 = blocks_to_cover(s.block_mass, 0.90);
    out.needed95 = blocks_to_cover(s.block_mass, 0.95);
  }
  return inv_l;
}

// Output norm: o = (e V) / l, then f = o W_O^h (or ||o|| without W_O).
ATTNPROF_INLINE void add_output_norms(const Context& c, const Unit& u, const UnitRows& g,
                                      const std::vector<double>& inv_l, Scratch& s, UnitSums& out) {
  const HeadInputs& in = *c.in;
  const int64_t dvp = c.dv_pad, nrows_pad = g.nrows_pad, ld = g.ld, hi_max = g.hi_max;
  s.o.assign(static_cast<size_t>(nrows_pad * dvp), 0.0f);
  const float* vp = c.v_packed.data() + (u.b * in.Hkv + g.kvh) * c.skv_pad * dvp;
  // Key panels of 256 rows of V stay in cache while every row group accumulates into them.
  constexpr int64_t kPanel = 256;
  for (int64_t k0 = 0; k0 < hi_max; k0 += kPanel)
    for (int64_t c0 = 0; c0 < dvp; c0 += 16)
      for (int64_t r0 = 0; r0 < nrows_pad; r0 += 4)
        gemm_4x16(s.z.data() + r0 * ld + k0, ld, vp + k0 * dvp + c0, dvp, std::min(kPanel, hi_max - k0),
                  s.o.data() + r0 * dvp + c0, dvp, k0 > 0);
  for (int64_t r = 0; r < g.nrows; ++r)
    for (int64_t cc = 0; cc < dvp; ++cc)
      s.o[static_cast<size_t>(r * dvp + cc)] *= static_cast<float>(inv_l[static_cast<size_t>(r)]);
  const float* rows = s.o.data();
  int64_t width = dvp;
  if (!c.wo_t.empty()) {
    const int64_t hp = c.hidden_pad;
    s.f.assign(static_cast<size_t>(nrows_pad * hp), 0.0f);
    const float* wt = c.wo_t.data() + u.h * dvp * hp;
    for (int64_t r0 = 0; r0 < nrows_pad; r0 += 4)
      for (int64_t c0 = 0; c0 < hp; c0 += 16)
        gemm_4x16(s.o.data() + r0 * dvp, dvp, wt + c0, hp, dvp, s.f.data() + r0 * hp + c0, hp,
                  false);
    rows = s.f.data();
    width = hp;
  }
  for (int64_t r = 0; r < g.nrows; ++r) {
    if (s.hi[static_cast<size_t>(r)] == 0) continue;
    double sq = 0;
    for (int64_t cc = 0; cc < width; ++cc) {
      const double x = rows[r * width + cc];
      sq += x * x;
    }
    out.out_norm += std::sqrt(sq);
  }
}

// One (batch, head, query block). Compiled for x86-64-v3 (AVX2+FMA) and a baseline; the
// loader picks by ISA level (an "arch=haswell" clone would be picked only on Haswell itself).
// Its sweeps are ATTNPROF_INLINE so that each clone compiles them for its own ISA.
__attribute__((target_clones("arch=x86-64-v3", "default")))
void run_unit(const Context& c, const Unit& u, Scratch& s, UnitSums& out) {
  const HeadInputs& in = *c.in;
  const int64_t bs = c.opt->block_size;
  UnitRows g;
  g.q0 = u.qb * bs;
  g.nrows = std::min(in.Sq, g.q0 + bs) - g.q0;
  g.nrows_pad = round_up(g.nrows, 4);
  g.off = in.Skv - in.Sq;
  g.klen = in.key_lengths.empty() ? in.Skv : in.key_lengths[static_cast<size_t>(u.b)];
  g.kvh = u.h / c.group;
  g.hi_max = visible_keys(c, g, s);
  out.window.assign(c.windows.size(), 0.0);
  if (g.hi_max == 0) return;
  g.ld = round_up(g.hi_max, kTile);
  g.nblocks = (g.hi_max + bs - 1) / bs;
  compute_logits(c, u, g, s);
  const std::vector<double> inv_l = add_softmax_statistics(c, g, s, out);
  if (in.v != nullptr) add_output_norms(c, u, g, inv_l, s, out);
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Query blocks of one (batch, head): all of them, or a stratified sample (one random
// block per equal stratum), which keeps every part of the sequence represented.
std::vector<int64_t> query_blocks(int64_t nqb, int64_t max_blocks, uint64_t seed) {
  std::vector<int64_t> out;
  if (max_blocks <= 0 || nqb <= max_blocks) {
    out.resize(static_cast<size_t>(nqb));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (int64_t k = 0; k < max_blocks; ++k) {
    const int64_t lo = k * nqb / max_blocks, hi = (k + 1) * nqb / max_blocks;
    const uint64_t r = splitmix64(seed + static_cast<uint64_t>(k));
    out.push_back(lo + static_cast<int64_t>(r % static_cast<uint64_t>(hi - lo)));
  }
  return out;
}

// long: a flat list of input checks, one per requirement of the kernel, each with its message
Status validate(const HeadInputs& in, const HeadOptions& opt) {
  auto bad = [](const std::string& m) { return make_error(ErrorCode::kInvalidArgument, m); };
  if (in.q == nullptr || in.k == nullptr) return bad("heads: Q and K are required");
  if (in.B <= 0 || in.Hq <= 0 || in.Hkv <= 0 || in.Sq <= 0 || in.Skv <= 0 || in.D <= 0)
    return bad("heads: every dimension of Q and K must be positive");
  if (in.Hq % in.Hkv != 0) return bad("heads: Hq must be a multiple of Hkv (GQA)");
  if (in.v != nullptr && in.Dv <= 0) return bad("heads: V given without its head dim");
  if (in.w_o != nullptr && (in.v == nullptr || in.hidden <= 0))
    return bad("heads: the output projection needs V and its output width");
  if (opt.block_size != 64 && opt.block_size != 128) return bad("heads: block size must be 64 or 128");
  if (opt.sink_tokens < 0 || opt.recall_window <= 0 || opt.trailing_special_tokens < 0)
    return bad("heads: sink tokens and windows must be positive");
  if (!in.key_lengths.empty()) {
    if (static_cast<int64_t>(in.key_lengths.size()) != in.B)
      return bad("heads: key_lengths needs one length per batch row");
    for (int64_t len : in.key_lengths)
      if (len < 0 || len > in.Skv) return bad("heads: a key length is outside [0, Skv]");
  }
  return Ok{};
}

}  // namespace

namespace {

Context make_context(const HeadInputs& in, const HeadOptions& opt) {
  Context c;
  c.in = &in;
  c.opt = &opt;
  c.group = in.Hq / in.Hkv;
  c.ntiles = (in.Skv + kTile - 1) / kTile;
  c.skv_pad = c.ntiles * kTile;
  c.dv_pad = round_up(std::max<int64_t>(in.Dv, 1), 16);
  c.hidden_pad = round_up(std::max<int64_t>(in.hidden, 1), 16);
  c.scale = static_cast<float>(in.scale > 0 ? in.scale : 1.0 / std::sqrt(static_cast<double>(in.D)));
  for (int64_t w : opt.windows)
    if (w > 0) c.windows.push_back(w);
  std::sort(c.windows.begin(), c.windows.end());
  c.windows.erase(std::unique(c.windows.begin(), c.windows.end()), c.windows.end());
  pack_inputs(c);
  return c;
}

// Every (batch, head, query block) to run, of `nqb` query blocks per head.
std::vector<Unit> make_units(const HeadInputs& in, const HeadOptions& opt, int64_t nqb) {
  std::vector<Unit> units;
  for (int64_t b = 0; b < in.B; ++b)
    for (int64_t h = 0; h < in.Hq; ++h)
      for (int64_t qb : query_blocks(nqb, opt.max_query_blocks,
                                     splitmix64(opt.seed ^ static_cast<uint64_t>(b * in.Hq + h))))
        units.push_back({b, h, qb});
  return units;
}

// The units run on opt.threads threads (0: one per core), each taking the next unit.
std::vector<UnitSums> run_units(const Context& c, const std::vector<Unit>& units) {
  std::vector<UnitSums> sums(units.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    Scratch s;
    for (size_t i = next++; i < units.size(); i = next++) run_unit(c, units[i], s, sums[i]);
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int threads = c.opt->threads;
  const size_t nthreads = std::min<size_t>(units.size(), threads > 0 ? static_cast<size_t>(threads) : hw);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < nthreads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return sums;
}

// A head's unit sums added up, with the per-unit means its sampling error is estimated from.
struct HeadAcc {
  UnitSums total;
  std::vector<double> entropy_means, sink_means, max_means;
};

void add_unit(const UnitSums& s, HeadAcc& a) {
  UnitSums& t = a.total;
  t.rows += s.rows;
  t.entropy_rows += s.entropy_rows;
  t.keys += s.keys;
  t.entropy += s.entropy;
  t.max_weight += s.max_weight;
  t.sink += s.sink;
  t.special += s.special;
  t.recall += s.recall;
  t.model_window += s.model_window;
  t.out_norm += s.out_norm;
  for (size_t w = 0; w < s.window.size(); ++w) t.window[w] += s.window[w];
  t.needed90 += s.needed90;
  t.needed95 += s.needed95;
  t.visible_blocks += s.visible_blocks;
  if (s.rows > 0) {
    const double rows = static_cast<double>(s.rows);
    a.sink_means.push_back(s.sink / rows);
    a.max_means.push_back(s.max_weight / rows);
    if (s.entropy_rows > 0) a.entropy_means.push_back(s.entropy / static_cast<double>(s.entropy_rows));
  }
}

// Units reduced into heads, in unit order (deterministic).
std::vector<HeadAcc> reduce_heads(const Context& c, const std::vector<Unit>& units, const std::vector<UnitSums>& sums) {
  std::vector<HeadAcc> acc(static_cast<size_t>(c.in->Hq));
  for (auto& a : acc) a.total.window.assign(c.windows.size(), 0.0);
  for (size_t i = 0; i < units.size(); ++i) add_unit(sums[i], acc[static_cast<size_t>(units[i].h)]);
  return acc;
}

// Standard error of a mean over n sampled blocks out of N (finite-population corrected); 0
// when every block was computed.
double sampling_stderr(const std::vector<double>& x, bool sampled, double N) {
  const double n = static_cast<double>(x.size());
  if (!sampled || n < 2) return 0.0;
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / n;
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= (n - 1);
  return std::sqrt(std::max(0.0, 1.0 - n / N) * var / n);
}

// One head's statistics from its sums; `norm_total` is the sum of every head's mean output norm.
HeadStats head_stats(const Context& c, int64_t h, const HeadAcc& a, double norm_total, bool sampled, double N) {
  const HeadInputs& in = *c.in;
  const UnitSums& t = a.total;
  const double rows = std::max<double>(1.0, static_cast<double>(t.rows));
  HeadStats hs;
  hs.layer = in.layer;
  hs.head = h;
  hs.kv_head = h / c.group;
  hs.query_rows = t.rows;
  hs.mean_keys = t.keys / rows;
  hs.entropy = t.entropy_rows > 0 ? t.entropy / static_cast<double>(t.entropy_rows) : 0.0;
  hs.max_weight = t.max_weight / rows;
  hs.sink_mass = t.sink / rows;
  hs.special_mass = t.special / rows;
  for (size_t w = 0; w < c.windows.size(); ++w) hs.window_mass.emplace_back(c.windows[w], t.window[w] / rows);
  if (c.opt->model_window > 0) hs.window_dropped_mass = std::max(0.0, 1.0 - t.model_window / rows);
  hs.sink_window_recall = t.recall / rows;
  if (t.visible_blocks > 0) {
    hs.block_coverage_90 = static_cast<double>(t.needed90) / static_cast<double>(t.visible_blocks);
    hs.block_coverage_95 = static_cast<double>(t.needed95) / static_cast<double>(t.visible_blocks);
  }
  if (in.v != nullptr && norm_total > 0) hs.output_share = (t.out_norm / rows) / norm_total;
  hs.sampling_stderr = std::max({sampling_stderr(a.entropy_means, sampled, N), sampling_stderr(a.sink_means, sampled, N),
                                 sampling_stderr(a.max_means, sampled, N)});
  return hs;
}

}  // namespace

Result<std::vector<HeadStats>> compute_head_stats(const HeadInputs& in, const HeadOptions& opt) {
  if (auto st = validate(in, opt); !st) return st.error();
  const Context c = make_context(in, opt);
  const int64_t nqb = (in.Sq + opt.block_size - 1) / opt.block_size;
  const std::vector<Unit> units = make_units(in, opt, nqb);
  const std::vector<HeadAcc> acc = reduce_heads(c, units, run_units(c, units));
  const bool sampled = opt.max_query_blocks > 0 && nqb > opt.max_query_blocks;
  const double all_blocks = static_cast<double>(nqb * in.B);
  double norm_total = 0;
  for (const auto& a : acc) norm_total += a.total.rows > 0 ? a.total.out_norm / static_cast<double>(a.total.rows) : 0;
  std::vector<HeadStats> out;
  for (int64_t h = 0; h < in.Hq; ++h)
    out.push_back(head_stats(c, h, acc[static_cast<size_t>(h)], norm_total, sampled, all_blocks));
  return out;
}

double masked_score_fraction(int64_t Sq, int64_t Skv, bool causal, int64_t window) {
  if (Sq <= 0 || Skv <= 0) return 0;
  const int64_t off = Skv - Sq;
  double kept = 0;
  for (int64_t i = 0; i < Sq; ++i) {
    const int64_t ip = i + off;
    int64_t hi = causal ? std::clamp<int64_t>(ip + 1, 0, Skv) : Skv;
    int64_t lo = window > 0 ? std::clamp<int64_t>(ip - window + 1, 0, Skv) : 0;
    if (window > 0 && !causal) hi = std::clamp<int64_t>(ip + window, 0, Skv);
    kept += static_cast<double>(std::max<int64_t>(0, hi - lo));
  }
  return 1.0 - kept / (static_cast<double>(Sq) * static_cast<double>(Skv));
}

}  // namespace attnprof
