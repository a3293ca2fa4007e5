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

// What the catalogs say of each interned name of a Trace, asked once per name and kept: the
// finders ask per event, and a trace repeats a few thousand names millions of times. One
// table for every question, so no finder keeps a cache of its own.
class NameClasses {
 public:
  // `extension`: the user's catalog entries (--kernels), asked with the built-in ones; may be null.
  explicit NameClasses(const Trace& trace, const CatalogExtension* extension = nullptr)
      : trace_(trace), extension_(extension), entries_(trace.strings.size()) {}
  const KernelPattern* kernel(const Slice& s);      // classify_kernel
  const AttentionOp* attention_op(const Slice& s);  // classify_attention_op of a cpu_op, else nullptr
  const CatalogExtension* extension() const { return extension_; }
  bool unrecognised_attention_op(const Slice& s);   // is_unrecognised_attention_op
  bool graph_launch(const Slice& s);                // cudaGraphLaunch / hipGraphLaunch / cuGraphLaunch

 private:
  enum Question : uint8_t { kKernel = 1, kOp = 2, kUnrecognisedOp = 4, kGraphLaunch = 8 };
  struct Entry {
    const KernelPattern* kernel = nullptr;
    const AttentionOp* op = nullptr;
    bool unrecognised_op = false, graph_launch = false;
    uint8_t answered = 0;  // Question bits
  };
  // The name's entry with `question` answered (only what is asked is computed).
  const Entry& answer(StrId name, Question question);

  const Trace& trace_;
  const CatalogExtension* extension_;
  std::vector<Entry> entries_;  // per StrId
  Entry outside_;               // an id past the pool (never from ingest): answered afresh
};

struct ExtractionContext {
  ExtractionContext(const Trace& t, const TraceIndex& i, const CatalogExtension* extension = nullptr);

  const Trace& trace;
  const TraceIndex& index;
  bool has_gpu = false;              // the trace has any kernel/memcpy/memset
  std::vector<bool> claimed_gpu;     // per slice: GPU activity already part of a call
  std::vector<bool> inside_call;     // per slice: cpu op already part of a call
  // Autograd Sequence numbers of the ops of unfused forward calls -> (CPU start of the
  // call, component), to find their backward, which autograd runs op by op.
  std::unordered_map<int64_t, std::pair<int64_t, std::string>> grad_owner;

  NameClasses names;  // the catalogs' verdicts per interned name
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


// What marks one engine step (engine_steps.cpp): its CPU span, name, kind ("annotation",
// "engine", "profiler_step", "graph_replay") and what it says of the step's phase and tokens.
struct StepMarker {
  int64_t ts_ns = 0, end_ns = 0;
  std::string name;
  std::string kind;
  std::string phase;  // from the marker itself (token counts, forward mode), "" when it does not say
  int64_t prefill_requests = -1, prefill_tokens = -1, decode_requests = -1, decode_tokens = -1;
  double sum_sq_sk = -1;
};

// Forward calls (indices into the start-ordered list given) that one marker holds, or a run of
// calls between markers (held false).
struct StepGroup {
  std::vector<size_t> calls;
  bool held = false;
  StepMarker marker;
};

// The forward calls grouped by the finest kind of step marker that holds any of them.
std::vector<StepGroup> engine_step_groups(const Trace& trace, const TraceIndex& index, const std::vector<Call*>& forward);
// Per thread, the outermost cpu ops in time order (Python frames and annotations looked
// through), those already inside a call left out: what the eager matcher walks.
std::vector<std::vector<uint32_t>> outermost_ops_per_thread(const ExtractionContext& ctx);

// Eager/naive attention: matmul -> (scale, mask) -> softmax -> matmul with no attention op.
std::vector<Call> find_eager_calls(ExtractionContext& ctx);

}  // namespace attnprof
