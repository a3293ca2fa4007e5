// Shared by the call finders of cpp/src/attention (op-based, kernel-only, eager pattern).
#pragma once

#include <string_view>
#include <vector>

#include "attnprof/attention.h"

namespace attnprof {

struct ExtractionContext {
  const Trace& trace;
  const TraceIndex& index;
  bool has_gpu = false;              // the trace has any kernel/memcpy/memset
  std::vector<bool> claimed_gpu;     // per slice: GPU activity already part of a call
  std::vector<bool> inside_call;     // per slice: cpu op already part of a call
};

// Adds every GPU activity launched under `op` (op included) to the call. Fused attention
// kernels get component "fused"; the others get `component`. Marks them claimed.
void add_kernels_under(ExtractionContext& ctx, uint32_t op, std::string_view component, Call& call);

// Marks `op` and its subtree as part of a call.
void claim_ops(ExtractionContext& ctx, uint32_t op);

// Sorts kernels, sums device time (CPU time for CPU-only traces), derives the
// decode/cross/gqa flags, FLOPs and TFLOP/s.
void finish_call(const ExtractionContext& ctx, Call& call);

// Eager/naive attention: matmul -> (scale, mask) -> softmax -> matmul with no attention op.
std::vector<Call> find_eager_calls(ExtractionContext& ctx);

}  // namespace attnprof
