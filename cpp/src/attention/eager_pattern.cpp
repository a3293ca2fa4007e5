// Eager ("naive") attention: Q @ K^T -> [scale] -> [mask] -> softmax -> [dropout] -> P @ V,
// written with plain ATen ops and no attention op (HF attn_implementation="eager",
// hand-written attention). The matcher walks, per thread, the outermost ATen ops in time
// order (Python frames are transparent) and anchors on each softmax:
//   - a matmul-family op must come before it, with only scale/mask/cast/view ops between;
//   - another must come after it, with only cast/dropout/view ops between;
//   - when shapes are recorded they must agree: [..,Sq,D]x[..,D,Skv] -> softmax over the
//     last dim of [..,Sq,Skv] -> [..,Sq,Skv]x[..,Skv,Dv].
// log_softmax is a different op and never matches; a softmax without matmuls on both sides
// (a classifier head, a router) is not attention.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/attention.h"
#include "extraction.h"
#include "op_args.h"

namespace attnprof {
namespace {

constexpr size_t kMaxOpsBetween = 12;  // views/casts between the matmuls and the softmax
// With shapes recorded, any ops may sit between Q@K^T and the softmax when the matmul
// provably produced the softmax's input: a score bias computed there (T5 relative position
// buckets, ALiBi) is dozens of ops of arange/log/where/embedding.
constexpr size_t kMaxBiasOps = 64;

struct Operands {  // the two matrix operands of a matmul-family op
  const TensorDims* a = nullptr;
  const TensorDims* b = nullptr;
};

Operands matmul_operands(const OpArgsView& args, std::string_view name) {
  if (name == "aten::baddbmm") return {&args.dims(1), &args.dims(2)};
  return {&args.dims(0), &args.dims(1)};
}

bool shapes_recorded(const Operands& m, const TensorDims& scores) {
  return m.a->size() >= 2 && m.b->size() >= 2 && scores.size() >= 2;
}

// In attention both operands of each product belong to the sequences: K^T and V carry the
// batch (and head) dims of Q and of the probabilities. A 2-D operand against a batched one
// is a matrix shared by every sequence, a weight: a vocabulary projection with a tied
// embedding (logits = h @ E^T, softmax over the vocabulary, softmax @ E in pointer/copy
// generators), not attention. Two 2-D operands (one unbatched sequence) cannot tell.
bool shared_weight_operand(const Operands& m) {
  return (m.a->size() == 2) != (m.b->size() == 2);
}

// [..,Sq,D] x [..,D,Skv] produces the scores [..,Sq,Skv].
bool computes_scores(const Operands& m, const TensorDims& scores) {
  const auto& a = *m.a;
  const auto& b = *m.b;
  const size_t r = scores.size();
  if (shared_weight_operand(m)) return false;
  return a[a.size() - 1] == b[b.size() - 2] && a[a.size() - 2] == scores[r - 2] &&
         b.back() == scores[r - 1] && product(a, 0, a.size() - 2) == product(scores, 0, r - 2);
}

// [..,Sq,Skv] x [..,Skv,Dv] applies the probabilities to V.
bool applies_probs(const Operands& m, const TensorDims& probs) {
  const auto& a = *m.a;
  const auto& b = *m.b;
  const size_t r = probs.size();
  if (shared_weight_operand(m)) return false;
  return a[a.size() - 2] == probs[r - 2] && a.back() == probs[r - 1] && b[b.size() - 2] == probs[r - 1] &&
         product(a, 0, a.size() - 2) == product(probs, 0, r - 2);
}

// What an op name is to the matcher (the vocabulary's ATen op roles, AtenOpRole bits),
// decided once per interned name (a trace repeats few).
enum OpKind : uint8_t { kSoftmax = kRoleSoftmax, kMatmul = kRoleMatmul, kLayout = kRoleLayout, kScore = kRoleScore, kProb = kRoleProb };

uint8_t op_kind(std::string_view name) {
  const AtenOpWord* word = aten_op_word(name);
  return static_cast<uint8_t>(word ? word->roles : 0);
}

class EagerMatcher {
 public:
  explicit EagerMatcher(ExtractionContext& ctx) : ctx_(ctx), kinds_(ctx.trace.strings.size(), kUnclassified) {}

  void scan(const std::vector<uint32_t>& ops, std::vector<Call>& out) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!is(ops[i], kSoftmax)) continue;
      if (auto call = match_at(ops, i)) out.push_back(std::move(*call));
    }
  }

 private:
  std::string_view name(uint32_t s) const { return ctx_.trace.name_of(ctx_.trace.slices[s]); }

  static constexpr uint8_t kUnclassified = 0xff;
  bool is(uint32_t s, uint8_t kinds) {
    uint8_t& k = kinds_[ctx_.trace.slices[s].name];
    if (k == kUnclassified) k = op_kind(name(s));
    return (k & kinds) != 0;
  }

  std::optional<Call> match_at(const std::vector<uint32_t>& ops, size_t sm) {
    const OpArgsView sm_args(ctx_.trace, ctx_.trace.slices[ops[sm]]);
    const TensorDims& scores = sm_args.dims(0);
    if (!softmax_over_last_dim(sm_args, scores)) return std::nullopt;

    const std::optional<size_t> found = scores_matmul_before(ops, sm, scores);
    if (!found) return std::nullopt;
    const size_t qk = *found;
    size_t av = sm;
    for (size_t steps = 0; av + 1 < ops.size() && steps <= kMaxOpsBetween; ++steps) {
      const uint32_t op = ops[++av];
      if (is(op, kMatmul)) break;
      if (!is(op, kLayout | kProb)) return std::nullopt;
    }
    if (av == sm || !is(ops[av], kMatmul)) return std::nullopt;

    if (transposes_a_weight(ops, qk)) return std::nullopt;

    const OpArgsView qk_args(ctx_.trace, ctx_.trace.slices[ops[qk]]);
    const OpArgsView av_args(ctx_.trace, ctx_.trace.slices[ops[av]]);
    const Operands qk_m = matmul_operands(qk_args, name(ops[qk]));
    const Operands av_m = matmul_operands(av_args, name(ops[av]));
    if (shapes_recorded(qk_m, scores) && !computes_scores(qk_m, scores)) return std::nullopt;
    if (shapes_recorded(av_m, scores) && !applies_probs(av_m, scores)) return std::nullopt;
    return build_call(ops, scale_before(ops, qk, qk_m), qk, sm, av, qk_m, av_m, scores);
  }

  // The Q@K^T before the softmax at `sm`: the nearest matmul with only score ops (scale,
  // mask, views) between; or, when shapes are recorded, the nearest within kMaxBiasOps whose
  // operands produce exactly the softmax's input, whatever ops lie between.
  std::optional<size_t> scores_matmul_before(const std::vector<uint32_t>& ops, size_t sm,
                                             const TensorDims& scores) {
    bool only_score_ops = true;
    for (size_t i = sm, steps = 0; i > 0 && steps < kMaxBiasOps; ++steps) {
      const uint32_t op = ops[--i];
      if (!is(op, kMatmul)) {
        only_score_ops = only_score_ops && steps <= kMaxOpsBetween && is(op, kLayout | kScore);
        if (!only_score_ops && scores.size() < 2) return std::nullopt;
        continue;
      }
      if (ctx_.inside_call[op]) return std::nullopt;  // the P@V of the call before
      const OpArgsView args(ctx_.trace, ctx_.trace.slices[op]);
      const Operands m = matmul_operands(args, name(op));
      const bool recorded = shapes_recorded(m, scores);
      if (recorded && computes_scores(m, scores)) return i;
      if (!recorded) return only_score_ops ? std::optional<size_t>(i) : std::nullopt;
    }
    return std::nullopt;
  }

  // aten::t transposes a tensor of at most 2 dims (torch.t docs): a weight matrix, never a
  // batched K^T (k.transpose(-2, -1)). An aten::t right before the product (views between)
  // says, with no shapes recorded, that the product is a projection (h @ E.t()).
  bool transposes_a_weight(const std::vector<uint32_t>& ops, size_t qk) {
    for (size_t i = qk, steps = 0; i > 0 && steps < kMaxOpsBetween; ++steps) {
      const uint32_t op = ops[--i];
      if (name(op) == "aten::t") return true;
      if (!is(op, kLayout)) return false;
    }
    return false;
  }

  // A scale applied to Q (or K) before the product (q / sqrt(d), OpenNMT, fairseq): the
  // div/mul just before Q@K^T, views between, whose output is an operand of the product
  // (same dims, when recorded). Returns its position, or qk when there is none.
  size_t scale_before(const std::vector<uint32_t>& ops, size_t qk, const Operands& qk_m) {
    for (size_t i = qk, steps = 0; i > 0 && steps < kMaxOpsBetween; ++steps) {
      const uint32_t op = ops[--i];
      if (ctx_.inside_call[op]) return qk;
      if (is(op, kLayout) && !is(op, kScore)) continue;
      if (component_of_op(name(op)) != component::kScale) return qk;
      const TensorDims& x = OpArgsView(ctx_.trace, ctx_.trace.slices[op]).dims(0);
      const bool recorded = !x.empty() && qk_m.a->size() >= 2;
      if (recorded && x != *qk_m.a && x != *qk_m.b) return qk;
      return i;
    }
    return qk;
  }

  // softmax(x, dim): attention normalises over the key axis, the last one.
  static bool softmax_over_last_dim(const OpArgsView& args, const TensorDims& x) {
    const std::optional<double> dim = args.number(1);
    if (!dim) return true;  // not recorded
    return *dim == -1 || (!x.empty() && *dim == static_cast<double>(x.size() - 1));
  }

  Call build_call(const std::vector<uint32_t>& ops, size_t first_op, size_t qk, size_t sm, size_t av,
                  const Operands& qk_m, const Operands& av_m, const TensorDims& scores) {
    const Trace& trace = ctx_.trace;
    Call call;
    call.backend = backend::kEager;
    call.library = "aten";
    call.direction = direction::kForward;
    call.fused = false;
    call.op = std::string(name(ops[qk])) + " -> " + std::string(name(ops[sm])) + " -> " + std::string(name(ops[av]));
    const Slice& first = trace.slices[ops[first_op]];
    const Slice& last = trace.slices[ops[av]];
    call.module = module_path(trace, ctx_.index, ops[qk]);
    call.cpu_ts_ns = first.ts_ns;
    call.cpu_dur_ns = last.end_ns() - first.ts_ns;

    Shape& s = call.shape;
    const size_t r = scores.size();
    if (r >= 2) {
      s.Sq = scores[r - 2];
      s.Skv = scores[r - 1];
      s.Hq = r >= 4 ? scores[r - 3] : 1;  // [B*H, Sq, Skv] scores do not separate B from H
      s.B = r >= 4 ? product(scores, 0, r - 3) : scores[0];
    }
    if (qk_m.a->size() >= 2) s.D = qk_m.a->back();
    if (av_m.b->size() >= 2) s.Dv = av_m.b->back();
    s.dtype = dtype_name(OpArgsView(trace, trace.slices[ops[qk]]).type(0));
    call.mask.kind = mask_kind::kNone;

    for (size_t i = first_op; i <= av; ++i) {
      const uint32_t op = ops[i];
      std::string_view component = component_of_op(name(op));
      if (i == qk) component = component::kQK;
      else if (i == av) component = component::kAV;
      describe_component(op, component, call);
      add_kernels_under(ctx_, op, component, call);
      note_grad_sequences(ctx_, op, call.cpu_ts_ns, component);
      claim_ops(ctx_, op);
    }
    return call;
  }

  // What the ops between the matmuls say about mask, scale and dropout.
  void describe_component(uint32_t op, std::string_view component, Call& call) const {
    const OpArgsView args(ctx_.trace, ctx_.trace.slices[op]);
    const std::string_view n = name(op);
    if (component == component::kMask && args.dims(1).size() >= 2) {
      call.mask.present = true;
      call.mask.kind = n.starts_with("aten::add") ? mask_kind::kFloat : mask_kind::kBool;
      call.mask.dims = args.dims(1);
    } else if (component == component::kScale && call.scale == 0) {
      if (const auto v = args.number(1); v && *v != 0) call.scale = n.starts_with("aten::div") ? 1.0 / *v : *v;
    } else if (component == component::kDropout && args.flag(2)) {
      call.dropout = args.number(1).value_or(0.0);
    }
  }

  ExtractionContext& ctx_;
  std::vector<uint8_t> kinds_;  // per interned name: OpKind bits, kUnclassified until first seen
};

}  // namespace

// Per thread, the outermost ATen ops in time order; Python frames and annotations are
// looked through, ops already inside an attention call are left out.
std::vector<std::vector<uint32_t>> outermost_ops_per_thread(const ExtractionContext& ctx) {
  const Trace& trace = ctx.trace;
  std::vector<std::vector<uint32_t>> threads;
  uint32_t thread = 0;
  // An op is taken and not looked below; anything else is looked through.
  const auto take_op = [&](uint32_t s) {
    if (!is_cpu_op(trace.slices[s])) return true;
    if (!ctx.inside_call[s]) threads.back().push_back(s);
    return false;
  };
  for (const uint32_t root : ctx.index.roots) {
    const Slice& r = trace.slices[root];
    if (threads.empty() || r.thread != thread) {
      threads.emplace_back();
      thread = r.thread;
    }
    if (take_op(root)) walk_below(trace, ctx.index, root, take_op);
  }
  return threads;
}

std::string_view component_of_op(std::string_view op) {
  const AtenOpWord* word = aten_op_word(op);
  return word ? word->component : std::string_view(component::kOther);
}

std::vector<Call> find_eager_calls(ExtractionContext& ctx) {
  std::vector<Call> calls;
  EagerMatcher matcher(ctx);
  for (const auto& ops : outermost_ops_per_thread(ctx)) matcher.scan(ops, calls);
  return calls;
}

}  // namespace attnprof
