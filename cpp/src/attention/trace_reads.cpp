// What the analyses read of a trace, in one place (attention.h: op_inputs_read,
// analysis_reads). The pipeline hands it to ingest, which keeps nothing else: the inputs of
// the ops listed here, every op's sequence number, every slice but the python frames outside
// nn.Module calls and engine step functions (of those, the source files), every op but the metadata-only ones another
// op holds, every kernel and memory event.
// An analysis that starts reading more adds it here; until it does, the test that every
// fixture's Report is the same with these reads as with everything kept fails
// (cpp/tests/attention/trace_reads_test.cpp).
#include "attnprof/attention.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

bool is_catalog_op(std::string_view name) { return classify_attention_op(name) != nullptr; }

// The eager matcher (eager_pattern.cpp) reads the operands of the matmuls and the softmax and
// the arguments of the mask, scale and dropout ops between them; the views, casts and copies
// it allows in between (most ops of a trace) only by name.
bool is_eager_operand_op(std::string_view name) {
  const AtenOpWord* word = aten_op_word(name);
  if (word == nullptr) return false;
  const std::string_view c = word->component;
  return (word->roles & (kRoleSoftmax | kRoleMatmul)) != 0 || c == component::kMask || c == component::kScale ||
         c == component::kDropout;
}

bool is_mask_building_op(std::string_view name) { return mask_building_op(name) != nullptr; }

// Each reader of OpArgs::inputs and the ops it reads them of.
struct InputReader {
  std::string_view reader;
  bool (*reads)(std::string_view op_name);
};

constexpr InputReader kInputReaders[] = {
    {"call extraction (call_extraction.cpp): shape, mask, causal, dropout, scale", is_catalog_op},
    {"eager attention (eager_pattern.cpp): matmul and softmax operands, mask/scale/dropout", is_eager_operand_op},
    {"window effectiveness (heads/window_effectiveness.cpp): mask-building shapes", is_mask_building_op},
};

// What the analyses read of an op nested in another: every op but those that run nothing of
// their own (the metadata-only and composite ATen ops, vocabulary.h), which nothing reads
// there: the eager matcher walks only the outermost ops of a thread, the call extraction reads
// whole subtrees only below attention ops (subtree_read), and inside any other op the analyses
// look for kernels, sequence numbers and (the allocator replay) the innermost op around an
// allocation, none of which is one of these (one with a sequence number is kept).
bool nested_op_read(std::string_view name) { return !runs_nothing_of_its_own(name) || op_inputs_read(name); }

// Ops whose whole subtree the call extraction reads: the catalog's attention ops, and any op
// named with attention vocabulary (an unrecognised one becomes a call with its subtree).
bool subtree_read(std::string_view name) { return is_catalog_op(name) || has_attention_vocabulary(name); }

}  // namespace

bool op_inputs_read(std::string_view op_name) {
  for (const InputReader& r : kInputReaders)
    if (r.reads(op_name)) return true;
  return false;
}

TraceReads analysis_reads() {
  TraceReads reads;
  reads.op_inputs = op_inputs_read;
  // Python frames are read by name and time only: the nn.Module frames as slices (module
  // paths, trace_index.cpp), the others only for their source file (code_info.cpp). GPU work
  // is linked to its launch by correlation id, not flows.
  reads.python_ids = false;
  reads.all_python_frames = false;
  reads.python_frame_read = is_engine_step_frame;  // engine step functions mark steps (engine_steps.cpp)
  reads.flows = false;
  reads.nested_op_read = nested_op_read;
  reads.subtree_read = subtree_read;
  return reads;
}

}  // namespace attnprof
