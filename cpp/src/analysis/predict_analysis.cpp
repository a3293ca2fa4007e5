// Config-only prediction of memory, time and OOM threshold (issue 5 item 5); docs/cost.md.
#include <fmt/format.h>

#include <algorithm>

#include "attnprof/attention.h"
#include "attnprof/cost.h"
#include "attnprof/predict.h"

namespace attnprof {
namespace {

constexpr int64_t kLongestLength = int64_t{1} << 24;  // OOM search ceiling (16M tokens)

Shape attention_shape(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  return Shape{o.batch, m.heads, m.kv_heads, length, length, m.head_dim, m.head_dim, o.dtype};
}

// FLOPs of one layer's self-attention at `length`, by the extraction's formula.
double layer_attention_flops(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  Call call;
  call.shape = attention_shape(m, o, length);
  call.causal = m.causal;
  call.direction = "forward";
  return attention_flops(call);
}

int64_t weights_bytes(const ModelConfig& m, const PredictOptions& o) {
  return parameter_count(m) * dtype_bytes(o.dtype);
}

int64_t kv_cache_bytes(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  if (!o.use_cache) return 0;
  return m.layers * kv_cache_bytes_per_token(m.kv_heads, m.head_dim, dtype_bytes(o.dtype)) * o.batch * length;
}

int64_t total_bytes(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  return weights_bytes(m, o) + kv_cache_bytes(m, o, length) + predicted_activation_bytes(m, o, length);
}

double linear_flops(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  const double q = static_cast<double>(m.heads * m.head_dim), kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double h = static_cast<double>(m.hidden), inter = static_cast<double>(m.intermediate);
  const double per_layer = h * q + 2 * h * kv + q * h + (m.gated_mlp ? 3 : 2) * h * inter;
  double params = static_cast<double>(m.layers) * per_layer;
  if (m.lm_head) params += static_cast<double>(m.vocab) * h;
  return 2.0 * static_cast<double>(o.batch * length) * params;
}

// Roofline lower bound: each part runs at the slower of its compute and memory limits.
struct PassTime {
  double attention_us = 0;
  double rest_us = 0;  // projections, MLP, logits
};

PassTime roofline_time_us(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  if (o.gpu == nullptr) return {};
  const double peak = peak_tflops(*o.gpu, o.dtype) * 1e12, bandwidth = o.gpu->bandwidth_gbs * 1e9;
  if (peak <= 0 || bandwidth <= 0) return {};
  const Shape shape = attention_shape(m, o, length);
  const double layers = static_cast<double>(m.layers);
  const double attn_flops = layers * layer_attention_flops(m, o, length);
  const double attn_bytes = layers * attention_min_bytes(shape, o.attn == "eager");
  return {1e6 * std::max(attn_flops / peak, attn_bytes / bandwidth),
          1e6 * std::max(linear_flops(m, o, length) / peak, static_cast<double>(weights_bytes(m, o)) / bandwidth)};
}

}  // namespace

int64_t predicted_activation_bytes(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  const int64_t b = dtype_bytes(o.dtype);
  const int64_t tokens = o.batch * length;
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const bool eager = o.attn == "eager";
  // Attention phase: hidden, residual and normed input (3h), Q/K/V after RoPE, then either the
  // materialised scores (+ fp32 softmax, 4-D mask, K/V expanded for GQA) or output + LSE.
  const Shape shape = attention_shape(m, o, length);
  const AttentionMemory am = attention_memory(shape, eager, /*masked=*/eager);
  const int64_t attention_phase = tokens * (3 * m.hidden + q + 2 * kv) * b + am.transient();
  // MLP phase: embeddings, two residual copies and the normed input (4h) + the MLP's live
  // intermediates (act(gate), up, product for SwiGLU; fc and activation otherwise).
  const int64_t mlp_phase = tokens * (4 * m.hidden + (m.gated_mlp ? 3 : 2) * m.intermediate) * b;
  const int64_t logits_phase = m.lm_head ? tokens * (2 * m.hidden + m.vocab) * b : 0;
  return std::max({attention_phase, mlp_phase, logits_phase});
}

Result<Prediction> predict(const ModelConfig& m, const PredictOptions& o) {
  if (o.batch <= 0) return make_error(ErrorCode::kInvalidArgument, "--batch must be positive");
  if (dtype_bytes(o.dtype) == 0)
    return make_error(ErrorCode::kInvalidArgument, fmt::format("unknown dtype '{}' (bf16, fp16, fp32, fp8)", o.dtype));
  if (o.attn != "eager" && o.attn != "sdpa")
    return make_error(ErrorCode::kInvalidArgument, fmt::format("--attn must be eager or sdpa, not '{}'", o.attn));
  Prediction p;
  for (int64_t length : o.lengths) {
    if (length <= 0) return make_error(ErrorCode::kInvalidArgument, "lengths must be positive");
    PredictRow row;
    row.length = length;
    row.weights_bytes = weights_bytes(m, o);
    row.activation_bytes = predicted_activation_bytes(m, o, length);
    row.kv_cache_bytes = kv_cache_bytes(m, o, length);
    row.total_bytes = row.weights_bytes + row.activation_bytes + row.kv_cache_bytes;
    row.attention_flops = static_cast<double>(m.layers) * layer_attention_flops(m, o, length);
    row.linear_flops = linear_flops(m, o, length);
    const PassTime time = roofline_time_us(m, o, length);
    row.attention_time_us = time.attention_us;
    row.time_us = time.attention_us + time.rest_us;
    row.fits = o.budget.bytes <= 0 || row.total_bytes <= o.budget.bytes;
    p.rows.push_back(row);
  }
  if (o.budget.bytes > 0) {
    // total(S) grows with S: binary search for the last S that fits.
    int64_t lo = 0, hi = kLongestLength;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (total_bytes(m, o, mid) <= o.budget.bytes) lo = mid; else hi = mid - 1;
    }
    p.oom_threshold_tokens = lo;
  }
  return p;
}

Report prediction_report(const ModelConfig& m, const PredictOptions& o, const Prediction& p) {
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  if (o.gpu != nullptr) {
    report.source.device_name = o.gpu->name;
    report.source.arch = o.gpu->arch;
    report.source.device_memory_bytes = o.gpu->memory_bytes;
  }
  report.source.assumptions.push_back(fmt::format(
      "predicted from the config of {} (no run): B={} {} attn={} use_cache={}; inference forward pass as "
      "Hugging Face transformers runs it; times are roofline lower bounds, attention alone and the whole forward pass (docs/cost.md)",
      m.name, o.batch, o.dtype, o.attn, o.use_cache ? "true" : "false"));
  ScalingSection section;
  section.memory_budget_bytes = o.budget.bytes;
  section.budget_source = o.budget.source;
  section.baseline_bytes = weights_bytes(m, o);
  ScalingSeries series;
  series.backend = o.attn == "eager" ? backend::kEager : "sdpa";
  std::vector<double> lengths, memory, times;
  for (const auto& row : p.rows) {
    series.lengths.push_back(row.length);
    series.time_us.push_back(row.attention_time_us);
    series.forward_pass_time_us.push_back(row.time_us);
    series.peak_bytes.push_back(row.activation_bytes + row.kv_cache_bytes);
    lengths.push_back(static_cast<double>(row.length));
    memory.push_back(static_cast<double>(row.activation_bytes + row.kv_cache_bytes));
    times.push_back(row.attention_time_us);
  }
  if (!lengths.empty()) {
    series.memory_fit = fit_growth(lengths, memory);
    if (o.gpu != nullptr) series.time_fit = fit_growth(lengths, times);
  }
  series.oom_threshold_tokens = p.oom_threshold_tokens;
  section.series.push_back(std::move(series));
  report.scaling = std::move(section);
  return report;
}

}  // namespace attnprof
