// Sequence lengths an engine step's annotation records, given to the step's calls so their
// FLOPs are exact (docs/cost.md, "Serving annotations").
#include <cmath>

#include "attnprof/attention.h"

namespace attnprof {
namespace {

// The step's prefill lengths fit the call: the annotation counts the tokens the call's query
// holds (a call that recorded none takes the step's).
bool lengths_fit(const Call& call, const Step& step) {
  const Shape& s = call.shape;
  if (call.direction != direction::kForward || s.Hq <= 0 || s.D <= 0 || !s.seqlens_q.empty()) return false;
  if (s.tokens > 0) return s.tokens == step.prefill_tokens;
  return s.Sq == 0 || s.Sq == step.prefill_tokens;
}

bool pure_prefill_with_lengths(const Step& step) {
  return step.tokens_from == "annotation" && step.prefill_requests > 0 && step.decode_requests <= 0 &&
         step.prefill_tokens > 0 && step.sum_sq_sk > 0;
}

void give_lengths(Call& call, const Step& step) {
  Shape& s = call.shape;
  s.lengths_from = "annotation";
  s.tokens = step.prefill_tokens;
  s.B = step.prefill_requests;
  const double keys = step.sum_sq_sk / static_cast<double>(step.prefill_tokens);
  if (step.prefill_requests == 1 && keys == std::floor(keys)) {  // one sequence: sq and sk exact
    s.seqlens_q = {step.prefill_tokens};
    s.seqlens_k = {static_cast<int64_t>(keys)};
    s.Sq = step.prefill_tokens;
    s.Skv = static_cast<int64_t>(keys);
    s.skv_ceiling = false;
  } else {
    s.sum_sq_sk = step.sum_sq_sk;
  }
}

}  // namespace

void apply_step_lengths(const std::vector<Step>& steps, std::vector<Call>& calls) {
  for (Call& call : calls) {
    if (call.step < 0 || static_cast<size_t>(call.step) >= steps.size()) continue;
    const Step& step = steps[static_cast<size_t>(call.step)];
    if (!pure_prefill_with_lengths(step) || !lengths_fit(call, step)) continue;
    give_lengths(call, step);
    refresh_call_flops(call);
  }
}

}  // namespace attnprof
