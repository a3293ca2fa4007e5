// Attention calls that only the live capture can name: a captured call whose work ran in a
// torch.compile'd graph. Inductor compiles FlexAttention into its own template; on the CPU
// the trace records that graph as "## Call CompiledFxGraph <hash> ##" (and, with kernel
// profiling on, a "graph_<n>_kernel"), with no attention op and no attention kernel name.
// The capture's "attnprof.call#N" range around it says which call it was.
#include <algorithm>
#include <unordered_map>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "attnprof/trace_index.h"
#include "capture_ranges.h"

namespace attnprof {
namespace {

struct GraphRuns {
  std::vector<uint32_t> fx_graph_calls;  // "## Call CompiledFxGraph" (the graph itself)
  std::vector<uint32_t> regions;         // "Torch-Compiled Region" (graph + guards)
};

// The compiled-graph runs inside each call range, by range start.
std::unordered_map<int64_t, GraphRuns> graph_runs_by_range(const Trace& trace, const RangeIndex& calls) {
  std::unordered_map<int64_t, GraphRuns> out;
  std::unordered_map<StrId, bool> is_run;  // per interned name
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (s.cat != Category::kCpuOp && s.cat != Category::kUserAnnotation) continue;
    auto [it, inserted] = is_run.try_emplace(s.name, false);
    if (inserted) it->second = is_compiled_graph_run(trace.name_of(s));
    if (!it->second) continue;
    const Range* r = calls.innermost_containing(s.ts_ns, s.end_ns());
    if (r == nullptr) continue;
    GraphRuns& runs = out[r->begin_ns];
    (is_compiled_fx_graph_call(trace.name_of(s)) ? runs.fx_graph_calls : runs.regions).push_back(i);
  }
  return out;
}

bool range_holds_a_call(const Range& r, const std::vector<Call>& calls) {
  return std::any_of(calls.begin(), calls.end(),
                     [&](const Call& c) { return c.cpu_ts_ns >= r.begin_ns && c.cpu_ts_ns < r.end_ns; });
}

// Timing and kernels of a call from its graph runs: the graph executions when recorded
// (they exclude guard evaluation), else the compiled regions.
void time_from_runs(const Trace& trace, const TraceIndex& index, const std::vector<uint32_t>& runs, Call& call) {
  call.cpu_ts_ns = trace.slices[runs.front()].ts_ns;
  call.cpu_dur_ns = 0;
  std::vector<uint32_t> gpu;
  for (const uint32_t s : runs) {
    call.cpu_dur_ns += trace.slices[s].dur_ns;
    collect_subtree_gpu(trace, index, s, gpu);
  }
  for (const uint32_t g : gpu)
    call.kernels.push_back(kernel_ref_of(trace, trace.slices[g], call.fused ? component::kFused : component::kOther));
}

Call compiled_call(const Trace& trace, const TraceIndex& index, const GraphRuns& runs, const CapturedCall& record) {
  Call call;
  apply_captured(call, record);
  call.direction = direction::kForward;
  call.op = "Torch-Compiled Region";
  call.library = "inductor";
  // Inductor's FlexAttention template is one fused kernel that walks the BlockMask's blocks;
  // other interfaces compiled by Inductor (eager) keep their unfused score matrix.
  call.fused = call.backend == backend::kFlex;
  time_from_runs(trace, index, runs.fx_graph_calls.empty() ? runs.regions : runs.fx_graph_calls, call);
  finish_call(call, !index.gpu_slices.empty());
  return call;
}

}  // namespace

int64_t add_compiled_graph_calls(std::vector<Call>& calls, const Trace& trace, const TraceIndex& index,
                                 const CaptureSidecar& sidecar) {
  std::unordered_map<int64_t, const CapturedCall*> by_id;
  for (const CapturedCall& c : sidecar.calls) by_id[c.id] = &c;
  const CaptureRanges ranges = collect_ranges(trace);
  const auto runs = graph_runs_by_range(trace, ranges.calls);

  std::vector<Call> added;
  for (const Range& r : ranges.calls.all()) {
    auto found = runs.find(r.begin_ns);
    if (found == runs.end() || range_holds_a_call(r, calls)) continue;
    auto id = call_id_of(r.label);
    auto record = id ? by_id.find(*id) : by_id.end();
    if (record == by_id.end()) continue;
    added.push_back(compiled_call(trace, index, found->second, *record->second));
  }
  const auto count = static_cast<int64_t>(added.size());
  if (count == 0) return 0;
  std::move(added.begin(), added.end(), std::back_inserter(calls));
  number_calls_in_start_order(calls);
  return count;
}

}  // namespace attnprof
