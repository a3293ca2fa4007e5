// FLOPs of one attention call: the useful count (unmasked (q, k) pairs) and the executed count
// (what the kernel computed), per sequence where the lengths are known (docs/cost.md, "FLOPs").
#include <algorithm>
#include <cmath>

#include "attnprof/attention.h"

namespace attnprof {
namespace {

// A fused backward recomputes P from the log-sum-exp: QK^T again, then dV, dP, dQ, dK, five
// GEMMs against the forward's two (FlashAttention's benchmark convention, x2.5). An unfused
// backward reads the stored P: four GEMMs (x2.0).
constexpr double kFusedBackwardFactor = 2.5;
constexpr double kUnfusedBackwardFactor = 2.0;

// Sum over i in [0, n) of clamp(a + i, lo, hi), lo <= hi, in closed form.
double sum_clamped_ramp(int64_t a, int64_t n, int64_t lo, int64_t hi) {
  if (n <= 0) return 0;
  const int64_t below = std::clamp<int64_t>(lo - a, 0, n);        // a + i < lo
  const int64_t above = std::clamp<int64_t>(a + n - 1 - hi, 0, n - below);  // a + i > hi
  const int64_t first = a + below, count = n - below - above;    // the unclamped middle
  const double middle = static_cast<double>(count) * (2.0 * static_cast<double>(first) + static_cast<double>(count) - 1) / 2;
  return static_cast<double>(below) * static_cast<double>(lo) + static_cast<double>(above) * static_cast<double>(hi) + middle;
}

// The key offset of row 0's diagonal: a bottom-right causal mask lets row i see keys up to
// i + (sk - sq), a top-left one up to i.
int64_t diagonal_offset(int64_t sq, int64_t sk, CausalAlignment alignment) {
  return alignment == CausalAlignment::kBottomRight ? sk - sq : 0;
}

struct Pairs {
  double useful = 0, executed = 0;
};

bool materialising(const Call& call) { return materialises_scores(call.backend); }

// A mask handed over as a tensor is applied score by score: the kernel computes every pair
// whatever the rows hold (only a causal flag or a BlockMask lets it skip work).
bool mask_tensor(const Call& call) {
  return call.mask.present && call.mask.kind != "causal_flag" && call.mask.kind != "block_mask";
}

// The causal flag a kernel's template spells counts like the op's (a serving kernel launched
// from an op that records no flag).
bool is_causal(const Call& call) {
  return call.causal || (call.kernel_template && call.kernel_template->causal == 1) || call.mask.pattern == "causal" ||
         call.mask.pattern == "sliding_window";
}

int64_t window_of(const Call& call) { return call.mask.window > 0 ? call.mask.window : 0; }

// Useful and executed pairs of one sequence of sq queries against sk keys.
Pairs sequence_pairs(const Call& call, CausalAlignment alignment, int64_t sq, int64_t sk, std::string& granularity) {
  const double full = static_cast<double>(sq) * static_cast<double>(sk);
  Pairs p;
  p.useful = alignment == CausalAlignment::kNone ? full : unmasked_pairs(sq, sk, alignment, window_of(call));
  if (materialising(call) || mask_tensor(call) || alignment == CausalAlignment::kNone) {
    p.executed = full;
    granularity = "full";
  } else if (call.kernel_template && call.kernel_template->tile_m > 0 && call.kernel_template->tile_n > 0) {
    p.executed = tile_pairs(sq, sk, alignment, window_of(call), call.kernel_template->tile_m, call.kernel_template->tile_n);
    granularity = "tile";
  } else {
    p.executed = p.useful;
    granularity = "element";
  }
  return p;
}

// The per-sequence lengths a call's shape knows, as (sq, sk) pairs; empty when it knows none.
std::vector<std::pair<int64_t, int64_t>> known_sequences(const Shape& s) {
  std::vector<std::pair<int64_t, int64_t>> sequences;
  if (!s.seqlens_q.empty() && s.seqlens_q.size() == s.seqlens_k.size())
    for (size_t i = 0; i < s.seqlens_q.size(); ++i) sequences.emplace_back(s.seqlens_q[i], s.seqlens_k[i]);
  return sequences;
}

// Packed calls of several sequences whose lengths the trace gives as a maximum or a sum.
Pairs packed_bound_pairs(const Call& call, CausalAlignment alignment, CallFlops& f) {
  const Shape& s = call.shape;
  Pairs p;
  f.upper_bound = true;
  if (s.sum_sq_sk > 0) {
    // sum of sq*sk over the sequences is exact without a mask. Causal (bottom-right): each
    // sequence loses sq(sq-1)/2 pairs, and sum sq^2 >= T^2/n, so at most
    // sum_sq_sk - (T^2/n - T)/2 pairs remain.
    const double t = static_cast<double>(s.tokens), n = static_cast<double>(std::max<int64_t>(s.B, 1));
    p.useful = s.sum_sq_sk;
    if (alignment != CausalAlignment::kNone) p.useful = std::max(0.0, s.sum_sq_sk - (t * t / n - t) / 2);
    else f.upper_bound = false;
    p.executed = materialising(call) ? s.sum_sq_sk : p.useful;
    f.granularity = materialising(call) || alignment == CausalAlignment::kNone ? "full" : "element";
    f.bound_reason = f.upper_bound ? "sequence lengths: only their count, total and sum of sq*sk recorded" : "";
    return p;
  }
  if (s.Skv <= 0) return p;  // the key length is unknown: no count
  p.useful = p.executed = static_cast<double>(s.tokens) * static_cast<double>(s.Skv);
  f.granularity = "full";
  f.bound_reason = "sequence lengths: only the longest key sequence recorded";
  return p;
}

Pairs call_pairs(const Call& call, CausalAlignment alignment, CallFlops& f) {
  const Shape& s = call.shape;
  Pairs total;
  auto add = [&](int64_t sq, int64_t sk, double times) {
    const Pairs p = sequence_pairs(call, alignment, sq, sk, f.granularity);
    total.useful += times * p.useful;
    total.executed += times * p.executed;
  };
  const auto sequences = known_sequences(s);
  if (!sequences.empty()) {
    for (const auto& [sq, sk] : sequences) add(sq, sk, 1);
  } else if (s.tokens > 0 && s.B == 1 && s.Skv > 0) {  // packed, one sequence
    add(s.tokens, s.Skv, 1);
  } else if (s.tokens > 0) {
    return packed_bound_pairs(call, alignment, f);
  } else if (s.B > 0 && s.Sq > 0 && s.Skv > 0) {
    add(s.Sq, s.Skv, static_cast<double>(s.B));
  }
  return total;
}

}  // namespace

std::string_view causal_alignment_name(CausalAlignment alignment) {
  switch (alignment) {
    case CausalAlignment::kTopLeft: return "top_left";
    case CausalAlignment::kBottomRight: return "bottom_right";
    case CausalAlignment::kNone: break;
  }
  return "";
}

// PyTorch SDPA's is_causal is top-left (torch.nn.functional.scaled_dot_product_attention
// docs: attn_mask = ones(L, S).tril(diagonal=0); the efficient kernel's CausalFromTopLeft),
// as are xformers' LowerTriangularMask and the math path. FlashAttention >= 2.1 (and FA3/FA4,
// the vLLM/SGLang/FlashInfer/TensorRT-LLM/aiter kernels built on its varlen convention)
// aligns bottom-right: the last query sees the last key. A mask tensor whose rows the capture
// read as causal follows the KV cache (transformers builds it bottom-right).
CausalAlignment causal_alignment_of(const Call& call) {
  if (!is_causal(call)) return CausalAlignment::kNone;
  if (call.mask.present && (call.mask.pattern == "causal" || call.mask.pattern == "sliding_window"))
    return CausalAlignment::kBottomRight;
  const bool sdpa = call.op.find("scaled_dot_product") != std::string::npos ||
                    call.backend_op.find("scaled_dot_product") != std::string::npos;
  if (sdpa || call.library == "xformers" || call.backend == backend::kMath || call.backend == backend::kXformers)
    return CausalAlignment::kTopLeft;
  return CausalAlignment::kBottomRight;
}

double unmasked_pairs(int64_t sq, int64_t sk, CausalAlignment alignment, int64_t window) {
  if (sq <= 0 || sk <= 0) return 0;
  if (alignment == CausalAlignment::kNone) return static_cast<double>(sq) * static_cast<double>(sk);
  const int64_t offset = diagonal_offset(sq, sk, alignment);
  // Row i sees keys [i + offset - window + 1, i + offset] within [0, sk).
  double pairs = sum_clamped_ramp(offset + 1, sq, 0, sk);
  if (window > 0) pairs -= sum_clamped_ramp(offset - window + 1, sq, 0, sk);
  return pairs;
}

double tile_pairs(int64_t sq, int64_t sk, CausalAlignment alignment, int64_t window, int64_t tile_m, int64_t tile_n) {
  if (sq <= 0 || sk <= 0 || tile_m <= 0 || tile_n <= 0) return 0;
  if (alignment == CausalAlignment::kNone) return static_cast<double>(sq) * static_cast<double>(sk);
  const int64_t offset = diagonal_offset(sq, sk, alignment);
  double pairs = 0;
  for (int64_t r0 = 0; r0 < sq; r0 += tile_m) {
    const int64_t r1 = std::min(sq, r0 + tile_m);
    const int64_t end = std::clamp<int64_t>(r1 - 1 + offset + 1, 0, sk);  // past the last key any row sees
    const int64_t begin = window > 0 ? std::clamp<int64_t>(r0 + offset - window + 1, 0, sk) : 0;
    if (end <= begin) continue;  // every row of the tile is masked out
    const int64_t first_col = begin / tile_n * tile_n;
    const int64_t last_col = std::min(sk, (end + tile_n - 1) / tile_n * tile_n);
    pairs += static_cast<double>(r1 - r0) * static_cast<double>(last_col - first_col);
  }
  return pairs;
}

bool materialises_scores(std::string_view backend_name) {
  const BackendWord* word = backend_word(backend_name);
  return word != nullptr && word->kind != BackendClass::kFused;
}

double backward_flops_factor(const Call& call) {
  return materialising(call) ? kUnfusedBackwardFactor : kFusedBackwardFactor;
}

namespace {

// Where the count is only what the call could compute at most, and the first reason why.
void mark_upper_bounds(const Call& call, CallFlops& f) {
  auto bound = [&](const char* reason) {
    f.upper_bound = true;
    if (f.bound_reason.empty()) f.bound_reason = reason;
  };
  // A mask tensor whose rows were not read may hide any number of pairs: every pair it could
  // leave is counted.
  if (mask_tensor(call) && call.mask.pattern.empty())
    bound("mask contents not recorded: every pair it could leave is counted");
  // A sliding-window kernel whose window the trace does not give skips keys outside it: the
  // causal count is what it could compute at most.
  if (call.kernel_template && call.kernel_template->local == 1 && window_of(call) == 0)
    bound("sliding-window kernel: the window size is not recorded");
}

}  // namespace

CallFlops count_call_flops(const Call& call) {
  CallFlops f;
  const Shape& s = call.shape;
  if (s.Hq <= 0 || s.D <= 0) return f;
  f.alignment = causal_alignment_of(call);
  const Pairs pairs = call_pairs(call, f.alignment, f);
  if (pairs.useful <= 0 && pairs.executed <= 0) return CallFlops{};
  // QK^T and PV: 2*D and 2*Dv multiply-adds per (query, key) pair and query head.
  const double per_pair = 2.0 * static_cast<double>(s.Hq) * static_cast<double>(s.D + (s.Dv > 0 ? s.Dv : s.D));
  f.useful = per_pair * pairs.useful;
  f.executed = per_pair * pairs.executed;
  // A compiled FlexAttention kernel computes only the blocks its BlockMask keeps (capture).
  if (call.backend == backend::kFlex && call.fused && call.mask.block_sparsity > 0) {
    f.executed = per_pair * static_cast<double>(s.B) * static_cast<double>(s.Sq) * static_cast<double>(s.Skv) *
                 (1.0 - call.mask.block_sparsity);
    f.granularity = "block";
    if (f.alignment == CausalAlignment::kNone) f.useful = f.executed;
  }
  mark_upper_bounds(call, f);
  if (call.direction == "backward") {
    f.useful *= backward_flops_factor(call);
    f.executed *= backward_flops_factor(call);
  }
  return f;
}

double attention_flops(const Call& call) { return count_call_flops(call).useful; }

void refresh_call_flops(Call& call) {
  CallFlops f = count_call_flops(call);
  if (call.shape.skv_ceiling && call.shape.seqlens_k.empty() && f.useful > 0) {
    f.upper_bound = true;
    if (f.bound_reason.empty()) f.bound_reason = "key length from the block table: a sequence's last block is partly filled";
  }
  call.flops_useful = call.flops = f.useful;
  call.flops_executed = f.executed;
  call.flops_granularity = f.useful > 0 ? f.granularity : "";
  call.causal_alignment = std::string(causal_alignment_name(f.alignment));
  call.flops_upper_bound = f.useful > 0 && f.upper_bound;
  call.flops_bound_reason = call.flops_upper_bound ? f.bound_reason : "";
  auto per_second = [](double flops, double us) { return us > 0 ? flops / (us * 1e6) : 0; };
  call.tflops = per_second(call.flops_useful, call.device_time_us);
  call.tflops_executed = per_second(call.flops_executed, call.device_time_us);
  call.kernel_tflops = per_second(call.flops_useful, call.kernel_time_us);
  call.unknown = missing_shape_facts(call);
}

}  // namespace attnprof
