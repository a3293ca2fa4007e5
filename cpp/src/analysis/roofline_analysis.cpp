// Roofline and memory per call and per layer (issue 5 items 1-2); docs/cost.md.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/memory_timeline.h"
#include "attnprof/attention.h"
#include "attnprof/call_facts.h"
#include "attnprof/cost.h"
#include "attnprof/hw.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// A layer whose attention peak exceeds this multiple of the median layer's is flagged.
constexpr double kDisproportionateFactor = 1.5;

// The ceilings of the run's device: the spec table row, with a user's measured values put in.
std::optional<GpuSpec> spec_of(const SourceInfo& source, bool has_gpu) {
  const GpuSpec* row = find_gpu_spec(source.device_name);
  if (row == nullptr && !has_gpu) row = find_gpu_spec("cpu");
  if (source.measured_peaks) return with_measured_peaks(row, *source.measured_peaks);
  if (row == nullptr) return std::nullopt;
  return *row;
}

double call_flops(const Call& call) { return call.flops > 0 ? call.flops : attention_flops(call); }

// Compute- or memory-bound: executed FLOPs per byte against the ridge point, and the share
// of the attainable roofline min(peak, intensity x bandwidth) the call reached.
void bound_verdict(const Call& call, const GpuSpec* spec, CallCost& cost) {
  cost.bound = "unknown";
  if (spec == nullptr || cost.peak_tflops <= 0 || spec->bandwidth_gbs <= 0) return;
  if (call.flops_executed <= 0 || cost.bytes_moved <= 0) return;
  cost.arithmetic_intensity = call.flops_executed / cost.bytes_moved;
  cost.ridge_point = cost.peak_tflops * 1e12 / (spec->bandwidth_gbs * 1e9);
  cost.bound = cost.arithmetic_intensity >= cost.ridge_point ? "compute" : "memory";
  cost.attainable_tflops = std::min(cost.peak_tflops, cost.arithmetic_intensity * spec->bandwidth_gbs * 1e9 / 1e12);
  if (call.device_time_us > 0 && cost.attainable_tflops > 0)
    cost.attainable_share = call.flops_executed / (call.device_time_us * 1e-6) / 1e12 / cost.attainable_tflops;
}

CallCost cost_of_call(const Call& call, const GpuSpec* spec, const analysis::MemoryTimeline& memory) {
  CallCost cost;
  const bool materialised = materialises_scores(call.backend);
  const double seconds = call.device_time_us * 1e-6;
  if (spec != nullptr) cost.peak_tflops = peak_tflops(*spec, call.shape.dtype);
  const AttentionTraffic traffic = attention_traffic(call);
  cost.bytes_read = traffic.read;
  cost.bytes_written = traffic.written;
  cost.bytes_moved = traffic.total();
  cost.bytes_upper_bound = traffic.upper_bound && cost.bytes_moved > 0;
  if (seconds > 0) {
    const double achieved = call_flops(call) / seconds / 1e12;
    if (cost.peak_tflops > 0) cost.peak_fraction = achieved / cost.peak_tflops;
    cost.bandwidth_gbs = cost.bytes_moved / seconds / 1e9;
  }
  bound_verdict(call, spec, cost);
  cost.analytic_bytes = attention_memory(call.shape, materialised, call.mask.present).transient();
  if (!memory.empty()) {
    const int64_t begin = call.cpu_ts_ns, end = call.cpu_ts_ns + call.cpu_dur_ns;
    const int64_t before = memory.allocated_before(begin);
    const int64_t highest = memory.max_allocated_in(begin, end);
    cost.peak_bytes_during = highest < 0 ? 0 : std::max<int64_t>(0, highest - before);
    cost.allocated_bytes = memory.net_bytes_in(begin, end);
  }
  return cost;
}

LayerCost cost_of_layer(const Layer& layer, const std::vector<Call>& calls, const std::vector<CallCost>& call_costs,
                        const GpuSpec* spec) {
  LayerCost cost;
  double flops = 0, seconds = 0, peak_tflops_sum = 0;
  for (int64_t id : layer.call_ids) {
    if (id < 0 || static_cast<size_t>(id) >= calls.size()) continue;
    const Call& call = calls[static_cast<size_t>(id)];
    const CallCost& call_cost = call_costs[static_cast<size_t>(id)];
    flops += call_flops(call);
    seconds += call.device_time_us * 1e-6;
    if (spec != nullptr) peak_tflops_sum += peak_tflops(*spec, call.shape.dtype) * call.device_time_us * 1e-6;
    if (call_cost.peak_bytes_during >= 0) cost.peak_bytes = std::max(cost.peak_bytes, call_cost.peak_bytes_during);
  }
  if (seconds > 0) {
    cost.achieved_tflops = flops / seconds / 1e12;
    const double peak = peak_tflops_sum / seconds;  // time-weighted peak of the layer's dtypes
    if (peak > 0) cost.peak_fraction = cost.achieved_tflops / peak;
  }
  if (const Call* first = first_call_of(calls, layer)) {
    const Shape& s = first->shape;
    if (cost.peak_bytes >= 0 && s.Hq > 0) cost.bytes_per_q_head = cost.peak_bytes / s.Hq;
    const int64_t dv = s.Dv > 0 ? s.Dv : s.D;
    if (s.B > 0) cost.bytes_per_kv_head = s.B * s.Skv * (s.D + dv) * dtype_bytes(s.dtype);
  }
  return cost;
}

// Marks the layers whose peak exceeds kDisproportionateFactor x the median layer's; their finding.
std::optional<Finding> flag_disproportionate_layers(const std::vector<Layer>& layers, std::vector<LayerCost>& costs) {
  std::vector<int64_t> peaks;
  for (const LayerCost& cost : costs)
    if (cost.peak_bytes > 0) peaks.push_back(cost.peak_bytes);
  if (peaks.size() < 3) return std::nullopt;
  std::nth_element(peaks.begin(), peaks.begin() + static_cast<std::ptrdiff_t>(peaks.size() / 2), peaks.end());
  const double median = static_cast<double>(peaks[peaks.size() / 2]);
  Finding finding{"medium", "", "", finding::kMemoryShare, {}, 0};
  for (size_t i = 0; i < layers.size(); ++i) {
    if (static_cast<double>(costs[i].peak_bytes) <= kDisproportionateFactor * median) continue;
    costs[i].disproportionate = true;
    finding.layers.push_back(layers[i].index);
  }
  if (finding.layers.empty()) return std::nullopt;
  finding.title = fmt::format("{} attention layer(s) allocate over {}x the median layer's peak",
                              finding.layers.size(), kDisproportionateFactor);
  finding.detail = fmt::format("Median layer peak during attention: {}. Peak bytes come from the "
                               "trace's [memory] events inside each call's time span.",
                               bytes_text(median));
  return finding;
}

namespace {

// The timed calls of one backend whose FLOPs are known, added up.
struct RooflineSum {
  double flops = 0, executed = 0, bytes = 0, peak_seconds = 0, seconds = 0;
  bool upper_bound = false;
  std::string dtype;
  std::pair<int64_t, double> best_layer{-1, -1.0};  // (layer, fraction of peak)
};

std::map<std::string, RooflineSum> roofline_sums(const std::vector<Call>& calls, const std::vector<CallCost>& costs) {
  std::map<std::string, RooflineSum> by_backend;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& call = calls[i];
    const CallCost& cost = costs[i];
    if (cost.peak_tflops <= 0 || call.device_time_us <= 0) continue;
    if (call_flops(call) <= 0) continue;  // FLOPs unknown (no key length): no share of peak, not 0%
    RooflineSum& sum = by_backend[call.backend];
    const double seconds = call.device_time_us * 1e-6;
    sum.flops += call_flops(call);
    sum.executed += call.flops_executed;
    sum.bytes += cost.bytes_moved;
    sum.upper_bound = sum.upper_bound || call.flops_upper_bound;
    sum.seconds += seconds;
    sum.peak_seconds += cost.peak_tflops * 1e12 * seconds;
    sum.dtype = call.shape.dtype;
    if (cost.peak_fraction > sum.best_layer.second) sum.best_layer = {call.layer, cost.peak_fraction};
  }
  return by_backend;
}

// Where the GPU's bandwidth is known: which roof bounds the backend, and how close it comes.
void add_roofline_bound(const RooflineSum& sum, const GpuSpec& spec, Finding& finding) {
  const double peak = sum.peak_seconds / sum.seconds / 1e12;  // time-weighted TFLOP/s
  const double intensity = sum.executed / sum.bytes, ridge = peak * 1e12 / (spec.bandwidth_gbs * 1e9);
  const double attainable = std::min(peak, intensity * spec.bandwidth_gbs / 1e3);
  finding.title += fmt::format("; {}-bound, {} of the attainable roofline", intensity >= ridge ? "compute" : "memory",
                               percent_text(sum.executed / sum.seconds / 1e12 / attainable));
  finding.detail += fmt::format(" Arithmetic intensity {:.0f} FLOP/byte (executed FLOPs over the minimum HBM "
                                "traffic) against a ridge point of {:.0f} ({} / {:.0f} GB/s).",
                                intensity, ridge, flops_text(peak), spec.bandwidth_gbs);
}

Finding roofline_finding(const std::string& name, const RooflineSum& sum, const SourceInfo& source, const GpuSpec* spec) {
  const std::string peaks = source.measured_peaks ? fmt::format("measured ({})", source.measured_peaks->file)
                                                  : std::string("the GPU spec table's datasheet");
  const double fraction = sum.flops / sum.peak_seconds;
  const auto& best = sum.best_layer;
  const std::string le = sum.upper_bound ? "<= " : "";
  Finding finding;
  finding.severity = "info";
  finding.rule = finding::kRoofline;
  finding.title = fmt::format("{} attention reaches {}{} of {} {} {}peak (best layer {}: {})", name, le,
                              percent_text(fraction), source.device_name, sum.dtype, source.measured_peaks ? "measured " : "",
                              best.first, percent_text(best.second));
  finding.detail = fmt::format("{}{} useful ({}{} executed) over {} of attention kernels; "
                               "useful FLOPs 2*B*Hq*(D+Dv) per unmasked (q, k) pair, executed what the kernel "
                               "computed; peaks from {} (docs/cost.md).",
                               le, flops_text(sum.flops / sum.seconds / 1e12), le, flops_text(sum.executed / sum.seconds / 1e12),
                               time_text(sum.seconds * 1e6), peaks);
  if (spec != nullptr && spec->bandwidth_gbs > 0 && sum.bytes > 0 && sum.executed > 0)
    add_roofline_bound(sum, *spec, finding);
  if (best.first >= 0) finding.layers.push_back(best.first);
  return finding;
}

}  // namespace

// One line per backend: "cudnn attention reaches 61% of NVIDIA H200 bf16 peak (best layer 3:
// 63%); compute-bound, 64% of the attainable roofline".
std::vector<Finding> roofline_findings(const std::vector<Call>& calls, const std::vector<CallCost>& costs,
                                       const SourceInfo& source, const GpuSpec* spec) {
  std::vector<Finding> findings;
  for (const auto& [name, sum] : roofline_sums(calls, costs)) findings.push_back(roofline_finding(name, sum, source, spec));
  return findings;
}

}  // namespace

PassMemory pass_memory(const Trace& trace) {
  PassMemory result;
  const analysis::MemoryTimeline timeline(trace);
  const std::optional<MemoryEvent> peak = timeline.peak();
  if (!peak) return result;
  result.baseline_bytes = timeline.baseline();
  result.peak_allocated_bytes = peak->total_allocated;
  result.peak_activation_bytes = peak->total_allocated - result.baseline_bytes;
  result.peak_reserved_bytes = peak->total_reserved;
  return result;
}

CostSection analyze_cost(const std::vector<Call>& calls, const std::vector<Layer>& layers, const SourceInfo& source,
                         bool has_gpu, const Trace& trace) {
  CostSection section;
  const std::optional<GpuSpec> ceilings = spec_of(source, has_gpu);
  const GpuSpec* spec = ceilings ? &*ceilings : nullptr;
  const analysis::MemoryTimeline memory(trace);
  for (const Call& call : calls) section.calls.push_back(cost_of_call(call, spec, memory));
  for (const Layer& layer : layers) section.layers.push_back(cost_of_layer(layer, calls, section.calls, spec));
  if (auto finding = flag_disproportionate_layers(layers, section.layers)) section.findings.push_back(std::move(*finding));
  for (Finding& f : roofline_findings(calls, section.calls, source, spec)) section.findings.push_back(std::move(f));
  for (Finding& f : non_kernel_time_findings(calls)) section.findings.push_back(std::move(f));
  section.shape_groups = shape_groups(calls, section.calls);
  return section;
}

}  // namespace attnprof
