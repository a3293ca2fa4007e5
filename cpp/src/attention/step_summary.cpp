// What each step and each phase of a run cost, and what the steps say about the run (uneven
// layer counts, tensor parallelism). docs/report-schema.md ("Steps", "Phases").
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attnprof/attention.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/vocabulary.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// The CPU time GPU work was launched at: its launch call, else the op linked to it.
int64_t launch_ts(const Trace& trace, const TraceIndex& index, uint32_t gpu_slice) {
  const uint32_t launch = index.launch_of(gpu_slice);
  if (launch != kNoSlice) return trace.slices[launch].ts_ns;
  const uint32_t op = index.op_of(gpu_slice);
  return op != kNoSlice ? trace.slices[op].ts_ns : -1;
}

// Busy time of a set of [start, end) intervals.
int64_t union_ns(std::vector<std::pair<int64_t, int64_t>>& spans) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, open_start = 0, open_end = INT64_MIN;
  for (const auto& [start, end] : spans) {
    if (start > open_end) {
      if (open_end > open_start) total += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) total += open_end - open_start;
  return total;
}

// Collectives: NCCL/RCCL kernels and the c10d / record_param_comms ops that launch them.
bool is_collective(std::string_view name) {
  constexpr std::string_view kWords[] = {"nccl", "rccl", "c10d::", "record_param_comms", "all_reduce", "allreduce",
                                         "all_gather", "allgather", "reduce_scatter", "custom_ar", "cross_device_reduce"};
  return std::any_of(std::begin(kWords), std::end(kWords),
                     [&](std::string_view w) { return name.find(w) != std::string_view::npos; });
}

}  // namespace

void summarize_steps(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls,
                     std::vector<Step>& steps) {
  if (steps.empty()) return;
  for (const Call& c : calls) {
    if (c.step < 0 || static_cast<size_t>(c.step) >= steps.size()) continue;
    Step& s = steps[static_cast<size_t>(c.step)];
    if (!c.device_time_unknown) s.attention_device_time_us += c.device_time_us;
    s.overhead_time_us += c.overhead_time_us;
  }
  // GPU work belongs to the step it was launched in: steps in start order partition the CPU
  // time line from the first step's start on.
  std::vector<size_t> order(steps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return steps[a].ts_ns < steps[b].ts_ns; });
  std::vector<std::vector<std::pair<int64_t, int64_t>>> spans(steps.size());
  for (const TraceIndex::GpuLink& link : index.gpu_links) {  // one row per GPU slice, its launch beside it
    const uint32_t cpu = link.launch != kNoSlice ? link.launch : link.op;
    if (cpu == kNoSlice) continue;
    const int64_t ts = trace.slices[cpu].ts_ns;
    auto it = std::upper_bound(order.begin(), order.end(), ts, [&](int64_t t, size_t s) { return t < steps[s].ts_ns; });
    if (it == order.begin()) continue;
    const Slice& k = trace.slices[link.slice];
    spans[*std::prev(it)].push_back({k.ts_ns, k.end_ns()});
  }
  const bool has_gpu = !index.gpu_slices.empty();
  for (size_t i = 0; i < steps.size(); ++i) {
    Step& s = steps[i];
    s.gpu_time_us = has_gpu ? static_cast<double>(union_ns(spans[i])) / 1000.0 : static_cast<double>(s.dur_ns) / 1000.0;
    s.attention_share = s.gpu_time_us > 0 ? std::min(1.0, s.attention_device_time_us / s.gpu_time_us) : 0;
  }
}

namespace {

// The call's backend and fused kernels (by display name) into its phase's lists, each once.
void add_backend_and_kernels(const Call& c, PhaseSummary& p) {
  if (std::find(p.backends.begin(), p.backends.end(), c.backend) == p.backends.end()) p.backends.push_back(c.backend);
  for (const KernelRef& k : c.kernels) {
    if (k.component != component::kFused) continue;
    std::string name = kernel_display_name(k.name);
    if (std::find(p.kernels.begin(), p.kernels.end(), name) == p.kernels.end()) p.kernels.push_back(std::move(name));
  }
}

}  // namespace

std::vector<PhaseSummary> summarize_phases(const std::vector<Call>& calls, const std::vector<Step>& steps) {
  std::map<std::string, PhaseSummary> by_phase;
  std::map<std::string, double> flops, timed_us;
  double total_us = 0;
  for (const Call& c : calls) {
    if (c.phase.empty() || c.direction != direction::kForward) continue;
    PhaseSummary& p = by_phase[c.phase];
    p.phase = c.phase;
    ++p.calls;
    p.inferred = p.inferred || c.phase_inferred;
    if (!c.device_time_unknown) {
      p.device_time_us += c.device_time_us;
      total_us += c.device_time_us;
      if (c.flops > 0 && c.device_time_us > 0) {
        flops[c.phase] += c.flops;
        timed_us[c.phase] += c.device_time_us;
      }
    }
    add_backend_and_kernels(c, p);
  }
  for (const Step& s : steps)
    if (by_phase.count(s.phase)) ++by_phase[s.phase].steps;
  std::vector<PhaseSummary> out;
  for (const char* name : {phase::kPrefill, phase::kMixed, phase::kDecode}) {
    auto it = by_phase.find(name);
    if (it == by_phase.end()) continue;
    PhaseSummary& p = it->second;
    p.share = total_us > 0 ? p.device_time_us / total_us : 0;
    p.tflops = timed_us[name] > 0 ? flops[name] / (timed_us[name] * 1e6) : 0;
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// When each collective (CPU op, annotation, or GPU activity at its launch) started, in order.
std::vector<int64_t> collective_times(const Trace& trace, const TraceIndex& index) {
  // Each distinct name judged once; a trace without any collective name needs no pass over its slices.
  std::vector<bool> collective_name(trace.strings.size(), false);
  bool any = false;
  for (StrId id = 0; id < collective_name.size(); ++id) any |= collective_name[id] = is_collective(trace.strings.get(id));
  std::vector<int64_t> collective_ts;
  if (!any) return collective_ts;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (s.cat != Category::kCpuOp && s.cat != Category::kUserAnnotation && !is_gpu_activity(s)) continue;
    if (s.name >= collective_name.size() || !collective_name[s.name]) continue;
    const int64_t ts = is_gpu_activity(s) ? launch_ts(trace, index, i) : s.ts_ns;
    if (ts >= 0) collective_ts.push_back(ts);
  }
  std::sort(collective_ts.begin(), collective_ts.end());
  return collective_ts;
}

}  // namespace

void detect_tensor_parallel(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls,
                            SourceInfo& source) {
  // Gaps between consecutive forward calls of one step, by CPU start.
  std::vector<std::pair<int64_t, int64_t>> gaps;
  for (size_t i = 1; i < calls.size(); ++i) {
    const Call& a = calls[i - 1];
    const Call& b = calls[i];
    if (a.direction == direction::kForward && b.direction == direction::kForward && a.step == b.step) gaps.push_back({a.cpu_ts_ns, b.cpu_ts_ns});
  }
  if (gaps.empty()) return;
  const std::vector<int64_t> collective_ts = collective_times(trace, index);
  if (collective_ts.empty()) return;
  size_t with_collective = 0;
  for (const auto& [from, to] : gaps) {
    auto it = std::upper_bound(collective_ts.begin(), collective_ts.end(), from);
    with_collective += it != collective_ts.end() && *it < to;
  }
  if (with_collective == 0) return;
  const int world = trace.meta.distributed ? trace.meta.distributed->world_size : -1;
  source.tensor_parallel = world > 1 ? world : 1;
  source.tensor_parallel_evidence = fmt::format(
      "collectives between the attention layers of a forward ({} of {} gaps between consecutive calls){}: heads "
      "are per rank",
      with_collective, gaps.size(), world > 1 ? fmt::format(", world size {} (distributedInfo)", world) : "");
}

// Activation checkpointing runs the forward attention of its layers again in the backward: time
// spent for memory, said with what it costs and the documented way to keep attention's output
// instead (selective activation checkpointing, torch.utils.checkpoint).
Finding recompute_finding(const Report& report) {
  const Summary& s = report.summary;
  if (s.recompute_call_count == 0) return {};
  std::vector<int64_t> layers;
  for (const Call& c : report.calls)
    if (c.recompute && c.layer >= 0 && std::find(layers.begin(), layers.end(), c.layer) == layers.end())
      layers.push_back(c.layer);
  std::sort(layers.begin(), layers.end());
  const double share = s.attention_device_time_us > 0 ? s.recompute_time_us / s.attention_device_time_us : 0;
  return {"info",
          fmt::format("activation checkpointing recomputes attention: {} call{}, {} ({} of attention time)",
                      s.recompute_call_count, s.recompute_call_count == 1 ? "" : "s", time_text(s.recompute_time_us),
                      percent_text(share)),
          fmt::format("forward attention calls ran again inside the backward (under autograd nodes) for {}; each is "
                      "paired with its layer's forward and counted as recompute, not as another layer. To trade the "
                      "memory back for this time, keep the attention op's output under selective activation "
                      "checkpointing (torch.utils.checkpoint.create_selective_checkpoint_contexts with a policy that "
                      "returns MUST_SAVE for the scaled_dot_product_attention ops)",
                      format_index_ranges(layers, "layer", "layers")),
          finding::kRecompute, layers, 0, "recompute"};
}

std::vector<Finding> step_findings(const Report& report) {
  std::vector<Finding> out;
  std::map<int64_t, int64_t> forward_per_step;
  for (const Call& c : report.calls)
    if (c.direction == direction::kForward && !c.recompute) ++forward_per_step[c.step];
  std::map<int64_t, std::vector<int64_t>> steps_by_count;
  for (const auto& [step, n] : forward_per_step) steps_by_count[n].push_back(step);
  if (steps_by_count.size() > 1) {
    std::string counts;
    for (const auto& [n, steps] : steps_by_count)
      counts += fmt::format("{}{} calls in {}", counts.empty() ? "" : "; ", n, format_index_ranges(steps, "step", "steps"));
    out.push_back({"info", fmt::format("steps have different numbers of attention calls ({})", counts),
                   "layers are positions among a step's forward calls: layer k of a step with fewer calls is its k-th "
                   "attention call, so a hybrid or early-exit model's layers line up only where steps run the same "
                   "layers; compare steps with the same count",
                   finding::kUnevenSteps, {}, 0, ""});
  }
  if (const Finding recompute = recompute_finding(report); !recompute.title.empty()) out.push_back(recompute);
  if (report.source.tensor_parallel > 0)
    out.push_back({"info", "tensor parallel: head counts are per rank", report.source.tensor_parallel_evidence,
                   finding::kTensorParallel, {}, 0, ""});
  return out;
}

}  // namespace attnprof
