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
  call.direction = direction::kForward;
  return attention_flops(call);
}

int64_t weights_bytes(const ModelConfig& m, const PredictOptions& o) {
  return parameter_count(m) * dtype_bytes(o.dtype);
}

int64_t kv_cache_bytes(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  if (!o.use_cache) return 0;
  return m.layers * kv_cache_bytes_per_token(m.kv_heads, m.head_dim, dtype_bytes(o.dtype)) * o.batch * length;
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

// Builds the pass's allocations in the order the phases above imply (HF transformers decoder
// layer: norm, projections, RoPE, attention, output projection, residual, norm, MLP,
// residual), each tensor one allocation freed when its last reader is done.
class SequenceBuilder {
 public:
  explicit SequenceBuilder(AllocationSequence& seq) : seq_(seq) {}
  int32_t alloc(int64_t bytes, std::string op, int64_t layer) {
    AllocationStep step;
    step.bytes = std::max<int64_t>(1, bytes);
    step.op = std::move(op);
    step.layer = layer;
    seq_.steps.push_back(std::move(step));
    return static_cast<int32_t>(seq_.steps.size() - 1);
  }
  void free(int32_t step) {
    AllocationStep f;
    f.frees = step;
    seq_.steps.push_back(f);
  }

 private:
  AllocationSequence& seq_;
};

// Returns the output projection's step (the residual add reads it).
int32_t attention_allocations(SequenceBuilder& b, const ModelConfig& m, const PredictOptions& o, int64_t length,
                           int64_t layer, int32_t q, int32_t k, int32_t v) {
  const bool eager = o.attn == "eager";
  const AttentionMemory am = attention_memory(attention_shape(m, o, length), eager, /*masked=*/eager);
  std::vector<int32_t> transient;
  if (am.repeat_kv_bytes > 0) transient.push_back(b.alloc(am.repeat_kv_bytes, "aten::repeat_kv", layer));
  if (am.scores_bytes > 0) transient.push_back(b.alloc(am.scores_bytes, "aten::matmul", layer));
  if (am.softmax_bytes > 0) {
    const int32_t upcast = b.alloc(am.softmax_bytes / 2, "aten::to", layer);
    transient.push_back(b.alloc(am.softmax_bytes / 2, "aten::softmax", layer));
    b.free(upcast);
  }
  if (am.lse_bytes > 0) transient.push_back(b.alloc(am.lse_bytes, "aten::scaled_dot_product_attention", layer));
  const int32_t out = b.alloc(am.output_bytes, eager ? "aten::matmul" : "aten::scaled_dot_product_attention", layer);
  for (int32_t t : transient) b.free(t);
  for (int32_t t : {q, k, v}) b.free(t);
  const int32_t projected = b.alloc(o.batch * length * m.hidden * dtype_bytes(o.dtype), "aten::linear", layer);
  b.free(out);
  return projected;
}

}  // namespace

AllocationSequence predicted_allocation_sequence(const ModelConfig& m, const PredictOptions& o, int64_t length) {
  AllocationSequence seq;
  seq.file = fmt::format("{} (config) at S={}", m.name, length);
  seq.length = length;
  seq.opaque_bytes = weights_bytes(m, o);
  SequenceBuilder b(seq);
  const int64_t e = dtype_bytes(o.dtype), tokens = o.batch * length;
  const int64_t h = tokens * m.hidden * e, q = tokens * m.heads * m.head_dim * e, kv = tokens * m.kv_heads * m.head_dim * e;
  const int64_t inter = tokens * m.intermediate * e;
  int32_t hidden = b.alloc(h, "aten::embedding", -1);
  const int32_t mask = o.attn == "eager" ? b.alloc(o.batch * length * length * e, "aten::masked_fill", -1) : -1;
  for (int64_t layer = 0; layer < m.layers; ++layer) {
    const int32_t normed = b.alloc(h, "aten::mul", layer);
    const int32_t qp = b.alloc(q, "aten::linear", layer), kp = b.alloc(kv, "aten::linear", layer);
    const int32_t vp = b.alloc(kv, "aten::linear", layer);
    const int32_t qr = b.alloc(q, "aten::add", layer), kr = b.alloc(kv, "aten::add", layer);  // RoPE
    b.free(qp);
    b.free(kp);
    b.free(normed);
    if (o.use_cache) {  // the cache keeps K and V; copies feed the attention
      b.alloc(kv, "aten::cat", layer);
      b.alloc(kv, "aten::cat", layer);
    }
    const int32_t projected = attention_allocations(b, m, o, length, layer, qr, kr, vp);
    const int32_t residual = b.alloc(h, "aten::add", layer);
    b.free(hidden);
    b.free(projected);
    const int32_t normed2 = b.alloc(h, "aten::mul", layer);
    const int32_t up = b.alloc(inter, "aten::linear", layer);
    int32_t act = b.alloc(inter, m.gated_mlp ? "aten::silu" : "aten::gelu", layer);
    if (m.gated_mlp) {
      const int32_t gate = b.alloc(inter, "aten::linear", layer);
      const int32_t product = b.alloc(inter, "aten::mul", layer);
      b.free(gate);
      b.free(act);
      act = product;
    }
    b.free(up);
    b.free(normed2);
    const int32_t down = b.alloc(h, "aten::linear", layer);
    b.free(act);
    hidden = b.alloc(h, "aten::add", layer);
    b.free(residual);
    b.free(down);
  }
  if (mask >= 0) b.free(mask);
  const int32_t final_norm = b.alloc(h, "aten::mul", m.layers - 1);
  b.free(hidden);
  if (m.lm_head) b.alloc(tokens * m.vocab * e, "aten::linear", m.layers - 1);
  b.free(final_norm);
  return seq;
}

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
    p.rows.push_back(row);
  }
  if (o.budget.bytes > 0) {
    // The caching allocator's reserved memory on the pass the formulas imply grows with S:
    // binary search for the last S whose cold pass fits.
    SimulationOptions sim;
    sim.limit_bytes = allocator_limit(o.budget).bytes;
    const auto fits = [&](int64_t length) { return simulate_pass(predicted_allocation_sequence(m, o, length), sim).fits; };
    for (auto& row : p.rows) row.fits = fits(row.length);
    int64_t lo = 0, hi = kLongestLength;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid)) lo = mid; else hi = mid - 1;
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
  const AllocatorLimit limit = allocator_limit(o.budget);
  section.allocator_limit_bytes = limit.bytes;
  section.non_pytorch_memory = limit.explanation;
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
  if (p.oom_threshold_tokens >= 0) series.oom_method = "caching-allocator simulation";
  section.series.push_back(std::move(series));
  report.scaling = std::move(section);
  return report;
}

}  // namespace attnprof
