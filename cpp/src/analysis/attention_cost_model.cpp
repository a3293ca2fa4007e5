// The analytic cost model of one attention call (docs/cost.md, "Per-call formulas").
#include <algorithm>

#include <numeric>

#include "attnprof/attention.h"
#include "attnprof/cost.h"
#include "attnprof/hw.h"

namespace attnprof {
namespace {

double value_dim(const Shape& s) { return static_cast<double>(s.Dv > 0 ? s.Dv : s.D); }
int64_t value_dim_i(const Shape& s) { return s.Dv > 0 ? s.Dv : s.D; }
int64_t kv_heads(const Shape& s) { return s.Hkv > 0 ? s.Hkv : s.Hq; }

// Query tokens and key tokens of a call, and whether the key tokens are a ceiling.
struct Tokens {
  double q = 0, kv = 0;
  bool kv_ceiling = false;
};

Tokens tokens_of(const Shape& s) {
  Tokens t;
  auto sum = [](const std::vector<int64_t>& v) { return static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0})); };
  if (!s.seqlens_q.empty() && s.seqlens_q.size() == s.seqlens_k.size()) return {sum(s.seqlens_q), sum(s.seqlens_k), false};
  const double B = static_cast<double>(s.B);
  t.q = s.tokens > 0 ? static_cast<double>(s.tokens) : B * static_cast<double>(s.Sq);
  t.kv = B * static_cast<double>(s.Skv);
  t.kv_ceiling = (s.tokens > 0 && s.B != 1) || s.skv_ceiling;
  return t;
}

// Score-matrix elements a materialising path writes and reads: its executed (q, k) pairs
// times the query heads.
double matrix_elements(const Call& call) {
  const Shape& s = call.shape;
  const double per_pair = 2.0 * static_cast<double>(s.Hq) * (static_cast<double>(s.D) + value_dim(s));
  const double factor = call.direction == direction::kBackward ? backward_flops_factor(call) : 1.0;
  const double executed = call.flops_executed > 0 ? call.flops_executed : count_call_flops(call).executed;
  return per_pair > 0 ? executed / factor / per_pair * static_cast<double>(s.Hq) : 0;
}

}  // namespace

AttentionTraffic attention_traffic(const Call& call) {
  const Shape& s = call.shape;
  AttentionTraffic traffic;
  const double b = dtype_bytes(s.dtype);
  const Tokens t = tokens_of(s);
  if (b <= 0 || t.q <= 0 || t.kv <= 0 || s.Hq <= 0 || s.D <= 0) return traffic;
  const double hq = static_cast<double>(s.Hq), hkv = static_cast<double>(kv_heads(s)),
               d = static_cast<double>(s.D), dv = value_dim(s);
  const double q = t.q * hq * d * b, kv = t.kv * hkv * (d + dv) * b, o = t.q * hq * dv * b;
  const bool materialised = materialises_scores(call.backend);
  const double matrix = materialised ? matrix_elements(call) * b : 0;
  if (call.direction == direction::kBackward) {
    const double lse = t.q * hq * 4;  // fp32 log-sum-exp per query row and head
    traffic.read = materialised ? q + kv + o + 4 * matrix : q + kv + o + o + lse;  // dO is O-sized
    traffic.written = q + kv + 2 * matrix;                                          // dQ, dK, dV
  } else {
    traffic.read = q + kv + 2 * matrix;
    traffic.written = o + 2 * matrix;
  }
  traffic.upper_bound = t.kv_ceiling;
  return traffic;
}

double attention_min_bytes(const Shape& s, bool materialised) {
  const double b = dtype_bytes(s.dtype);
  const double B = static_cast<double>(s.B), hq = static_cast<double>(s.Hq),
               hkv = static_cast<double>(kv_heads(s)), sq = static_cast<double>(s.Sq),
               skv = static_cast<double>(s.Skv), d = static_cast<double>(s.D), dv = value_dim(s);
  double bytes = (B * hq * sq * d + B * hkv * skv * (d + dv) + B * hq * sq * dv) * b;
  if (materialised) bytes += 4.0 * B * hq * sq * skv * b;
  return bytes;
}

AttentionMemory attention_memory(const Shape& s, bool materialised, bool masked) {
  const int64_t b = dtype_bytes(s.dtype);
  const int64_t matrix = s.B * s.Hq * s.Sq * s.Skv;
  AttentionMemory m;
  m.output_bytes = s.B * s.Hq * s.Sq * value_dim_i(s) * b;
  if (materialised) {
    m.scores_bytes = matrix * b;
    m.softmax_bytes = matrix * 8;
    if (masked) m.mask_bytes = s.B * s.Sq * s.Skv * b;
    if (kv_heads(s) < s.Hq) m.repeat_kv_bytes = s.B * s.Hq * s.Skv * (s.D + value_dim_i(s)) * b;
  } else {
    m.lse_bytes = s.B * s.Hq * s.Sq * 4;
  }
  return m;
}

int64_t kv_cache_bytes_per_token(int64_t kv_heads_count, int64_t head_dim, int bytes) {
  return 2 * kv_heads_count * head_dim * bytes;
}

}  // namespace attnprof
