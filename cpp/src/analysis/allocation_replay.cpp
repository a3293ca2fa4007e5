// A pass's allocation sequence from [memory] events, and its replay through the allocator
// model (docs/cost.md, "Allocator simulation").
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "analysis/memory_timeline.h"
#include "attnprof/memory_sim.h"
#include "attnprof/trace_index.h"

namespace attnprof {
namespace {

constexpr int64_t kAgreementTolerance = 2 * 1024 * 1024;
constexpr uint64_t kOpaqueHandle = ~uint64_t{0};
constexpr uint64_t kCarriedBase = uint64_t{1} << 62;

uint64_t step_handle(int pass, size_t step) { return (static_cast<uint64_t>(pass) << 32) | step; }

// Innermost CPU op around each event, by a sweep over each thread's ops in time order.
std::vector<std::string> enclosing_ops(const Trace& trace, const std::vector<const MemoryEvent*>& events) {
  std::map<int64_t, std::vector<const Slice*>> ops_by_tid;
  for (const auto& s : trace.slices)
    if (is_cpu_op(s)) ops_by_tid[s.tid].push_back(&s);
  for (auto& [tid, ops] : ops_by_tid)
    std::sort(ops.begin(), ops.end(), [](const Slice* a, const Slice* b) {
      return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
    });
  std::vector<std::string> names(events.size());
  std::map<int64_t, std::pair<size_t, std::vector<const Slice*>>> cursor;  // tid -> (next op, open ops)
  for (size_t i = 0; i < events.size(); ++i) {
    const auto found = ops_by_tid.find(events[i]->tid);
    if (found == ops_by_tid.end()) continue;
    auto& [next, open] = cursor[events[i]->tid];
    const auto& ops = found->second;
    const int64_t ts = events[i]->ts_ns;
    while (next < ops.size() && ops[next]->ts_ns <= ts) {
      while (!open.empty() && open.back()->end_ns() < ops[next]->ts_ns) open.pop_back();
      open.push_back(ops[next++]);
    }
    while (!open.empty() && open.back()->end_ns() < ts) open.pop_back();
    if (!open.empty()) names[i] = std::string(trace.name_of(*open.back()));
  }
  return names;
}

// Layer of the last forward attention call that started at or before ts.
class LayerClock {
 public:
  explicit LayerClock(const Report& report) {
    for (const auto& call : report.calls)
      if (call.direction != "backward") starts_.emplace_back(call.cpu_ts_ns, call.layer);
    std::sort(starts_.begin(), starts_.end());
  }
  int64_t at(int64_t ts) const {
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), std::pair<int64_t, int64_t>{ts, INT64_MAX});
    return it == starts_.begin() ? -1 : std::prev(it)->second;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> starts_;
};

struct PassRunner {
  const AllocationSequence& seq;
  CachingAllocatorSim sim;
  std::vector<bool> carried_live;

  PassRunner(const AllocationSequence& s, const SimulationOptions& o)
      : seq(s), sim(o.config, o.limit_bytes), carried_live(s.carried.size(), false) {}

  bool setup() {
    if (seq.opaque_bytes > 0 && !sim.malloc(kOpaqueHandle, seq.opaque_bytes)) return false;
    return restore_carried();
  }
  bool restore_carried() {
    for (size_t k = 0; k < seq.carried.size(); ++k)
      if (!carried_live[k]) {
        if (!sim.malloc(kCarriedBase + k, seq.carried[k])) return false;
        carried_live[k] = true;
      }
    return true;
  }
  // Runs one pass; returns the failing step or -1.
  int64_t run(int pass, std::vector<int64_t>* reserved_after) {
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      const AllocationStep& step = seq.steps[i];
      if (!step.is_free()) {
        if (!sim.malloc(step_handle(pass, i), step.bytes)) return static_cast<int64_t>(i);
      } else if (step.frees >= 0) {
        sim.free(step_handle(pass, static_cast<size_t>(step.frees)));
      } else {
        const auto k = static_cast<size_t>(-step.frees - 1);
        sim.free(kCarriedBase + k);
        carried_live[k] = false;
      }
      if (reserved_after) reserved_after->push_back(sim.reserved_bytes());
    }
    return -1;
  }
  // What the caller drops after a pass (its outputs) is freed before the next one.
  void end_pass(int pass) {
    for (size_t i = 0; i < seq.steps.size(); ++i)
      if (!seq.steps[i].is_free()) sim.free(step_handle(pass, i));
  }
};

}  // namespace

Result<AllocationSequence> allocation_sequence(const Trace& trace, const Report& report) {
  const analysis::MemoryTimeline timeline(trace);
  const auto& events = timeline.events();
  if (events.empty() || events.front()->device_type == 0)
    return make_error(ErrorCode::kUnsupported,
                      fmt::format("{}: no CUDA/ROCm [memory] events (a CPU trace's allocator is not PyTorch's "
                                  "caching allocator, so there is nothing to replay)",
                                  trace.path));
  AllocationSequence seq;
  seq.file = trace.path;
  const std::vector<std::string> ops = enclosing_ops(trace, events);
  const LayerClock layers(report);
  std::unordered_map<int64_t, int32_t> live;  // address -> step that allocated it
  int64_t carried_total = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = *events[i];
    if (e.bytes == 0) continue;
    AllocationStep step;
    step.op = ops[i];
    step.layer = layers.at(e.ts_ns);
    step.recorded_reserved = e.total_reserved;
    if (e.bytes > 0) {
      step.bytes = e.bytes;
      live[e.addr] = static_cast<int32_t>(seq.steps.size());
    } else if (const auto it = live.find(e.addr); it != live.end()) {
      step.frees = it->second;
      live.erase(it);
    } else {
      seq.carried.push_back(-e.bytes);
      carried_total += -e.bytes;
      step.frees = -static_cast<int32_t>(seq.carried.size());
    }
    seq.steps.push_back(std::move(step));
  }
  seq.opaque_bytes = std::max<int64_t>(0, timeline.baseline() - carried_total);
  return seq;
}

PassSimulation simulate_pass(const AllocationSequence& seq, const SimulationOptions& options, bool record) {
  PassSimulation result;
  PassRunner runner(seq, options);
  const auto fail = [&](int64_t step) {
    result.fits = false;
    result.failed_step = step;
    result.reserved_at_failure = runner.sim.reserved_bytes();
    result.allocated_at_failure = runner.sim.allocated_bytes();
    return result;
  };
  if (!runner.setup()) return fail(-1);
  for (int pass = 0; pass < options.warmup_passes; ++pass) {
    if (const int64_t failed = runner.run(pass, nullptr); failed >= 0) return fail(failed);
    runner.end_pass(pass);
    if (!runner.restore_carried()) return fail(-1);
  }
  // Peak reserved of the measured pass alone (the simulator's own peak spans the warm-up).
  const int measured = options.warmup_passes;
  int64_t peak_reserved = runner.sim.reserved_bytes(), peak_allocated = runner.sim.allocated_bytes();
  std::vector<int64_t> reserved;
  const int64_t failed = runner.run(measured, &reserved);
  for (int64_t r : reserved) peak_reserved = std::max(peak_reserved, r);
  peak_allocated = std::max(peak_allocated, runner.sim.peak_allocated_bytes());
  if (failed >= 0) return fail(failed);
  result.peak_reserved = peak_reserved;
  result.peak_allocated = peak_allocated;
  if (record) result.reserved_after = std::move(reserved);
  return result;
}

AllocatorReplay replay_check(const AllocationSequence& seq, const AllocatorConfig& config) {
  AllocatorReplay replay;
  replay.file = seq.file;
  // The capture ran warm-up passes of the same model before the recorded one; two leave the
  // cache in the state every later pass finds (the second pass reuses every segment).
  SimulationOptions options;
  options.config = config;
  options.warmup_passes = 2;
  const PassSimulation sim = simulate_pass(seq, options, /*record_reserved=*/true);
  int64_t within = 0;
  for (size_t i = 0; i < seq.steps.size() && i < sim.reserved_after.size(); ++i) {
    const int64_t recorded = seq.steps[i].recorded_reserved;
    if (recorded < 0) continue;
    ++replay.events;
    const int64_t diff = std::llabs(sim.reserved_after[i] - recorded);
    replay.largest_difference_bytes = std::max(replay.largest_difference_bytes, diff);
    if (diff <= kAgreementTolerance) ++within;
    replay.recorded_peak_reserved_bytes = std::max(replay.recorded_peak_reserved_bytes, recorded);
  }
  replay.simulated_peak_reserved_bytes = sim.peak_reserved;
  replay.within_2mib_share = replay.events > 0 ? static_cast<double>(within) / static_cast<double>(replay.events) : 0;
  replay.cannot_know = fmt::format(
      "the recording began mid-run: the {:.1f} MiB allocated before it and kept (weights, inputs) are replayed as one "
      "block and the {} blocks allocated before it that it frees as blocks of their size, after two warm-up passes "
      "of this sequence; how earlier allocations were laid out in segments (free space inside weight segments, "
      "segments left split by earlier passes), other streams and memory outside PyTorch are not in the trace",
      static_cast<double>(seq.opaque_bytes) / (1024.0 * 1024.0), seq.carried.size());
  return replay;
}

}  // namespace attnprof
