// Shared by the call finders of cpp/src/attention (op-based, kernel-only, eager pattern).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnprof/attention.h"

namespace attnprof {

// Autograd runs a backward node inside an op named "<prefix><node>".
inline constexpr std::string_view kAutogradNodePrefix = "autograd::engine::evaluate_function: ";

struct ExtractionContext {
  ExtractionContext(const Trace& t, const TraceIndex& i);

  const Trace& trace;
  const TraceIndex& index;
  bool has_gpu = false;              // the trace has any kernel/memcpy/memset
  std::vector<bool> claimed_gpu;     // per slice: GPU activity already part of a call
  std::vector<bool> inside_call;     // per slice: cpu op already part of a call
  // Autograd Sequence numbers of the ops of unfused forward calls -> (CPU start of the
  // call, component), to find their backward, which autograd runs op by op.
  std::unordered_map<int64_t, std::pair<int64_t, std::string>> grad_owner;

  // The catalog entry of a slice's name (classify_kernel), computed once per distinct name:
  // the vocabulary check of unknown names must not run per event.
  const KernelPattern* kernel_pattern(const Slice& s);

 private:
  std::vector<const KernelPattern*> pattern_of_name_;
  std::vector<bool> classified_;
};

// Records the Sequence numbers of `op` and the ops below it as belonging to the unfused
// forward call starting at call_ts (later ops override: an op without an autograd node
// shows the next op's number).
void note_grad_sequences(ExtractionContext& ctx, uint32_t op, int64_t call_ts, std::string_view component);

// Backward calls of unfused (eager, math) forward calls: the autograd nodes
// ("autograd::engine::evaluate_function: SoftmaxBackward0", ...) whose Sequence numbers
// belong to one forward call form one backward call, when one of them is the softmax's.
void add_unfused_backward_calls(ExtractionContext& ctx, std::vector<Call>& calls);

// Adds every GPU activity launched under `op` (op included) to the call. Fused attention
// kernels get component "fused"; the others get `component`. Marks them claimed.
void add_kernels_under(ExtractionContext& ctx, uint32_t op, std::string_view component, Call& call);

// Marks `op` and its subtree as part of a call.
void claim_ops(ExtractionContext& ctx, uint32_t op);


// Eager/naive attention: matmul -> (scale, mask) -> softmax -> matmul with no attention op.
std::vector<Call> find_eager_calls(ExtractionContext& ctx);

}  // namespace attnprof
