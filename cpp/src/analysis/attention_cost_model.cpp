// The analytic cost model of one attention call (docs/cost.md, "Per-call formulas").
#include <algorithm>

#include "attnprof/cost.h"
#include "attnprof/hw.h"

namespace attnprof {
namespace {

double value_dim(const Shape& s) { return static_cast<double>(s.Dv > 0 ? s.Dv : s.D); }
int64_t value_dim_i(const Shape& s) { return s.Dv > 0 ? s.Dv : s.D; }
int64_t kv_heads(const Shape& s) { return s.Hkv > 0 ? s.Hkv : s.Hq; }

}  // namespace

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

bool materialises_scores(std::string_view backend) {
  return backend == backend::kEager || backend == backend::kMath;
}

}  // namespace attnprof
