// One rank's Report reduced to what the fleet compares: times, mixes and one row per layer.
#include <algorithm>
#include <filesystem>
#include <map>

#include "attnprof/call_facts.h"
#include "attnprof/fleet.h"
#include "fleet/median.h"

namespace attnprof {
namespace {

using fleet::median;

// A summary holds at most this many distinct shapes: serving ranks see a new length every
// step, and the driver must stay O(ranks x layers).
constexpr size_t kMaxShapes = 16;
// Kernel names are kept to this length: a demangled template can run to kilobytes.
constexpr size_t kMaxKernelName = 200;

std::string shape_without_dtype(Shape shape) {
  shape.dtype.clear();
  return shape_text(shape);
}

std::string mask_text(const MaskInfo& mask) {
  if (!mask.present || mask.kind.empty()) return mask_kind::kNone;
  return mask.pattern.empty() ? mask.kind : mask.kind + " " + mask.pattern;
}

// The kernel a call is known by: the library's own name from the template where the name
// spells one, else its longest-running kernel.
std::string main_kernel(const Call& call) {
  if (call.kernel_template && !call.kernel_template->name.empty()) return call.kernel_template->name;
  const KernelRef* main = nullptr;
  for (const KernelRef& k : call.kernels)
    if (!main || k.device_time_us > main->device_time_us) main = &k;
  if (!main) return "";
  return main->name.size() > kMaxKernelName ? main->name.substr(0, kMaxKernelName) : main->name;
}

std::vector<RankRejection> rejections_of(const Call& call) {
  std::vector<RankRejection> out;
  if (!call.explanation) return out;
  for (const BackendVerdict& v : call.explanation->backends) {
    if (v.eligible || v.failed.empty()) continue;
    const RuleCheck& first = v.failed.front();
    out.push_back({v.backend, first.rule, first.value.empty() ? first.message : first.message + " (" + first.value + ")"});
  }
  return out;
}

// The call a layer is compared by: its first forward that is not a recompute, else its first.
const Call* representative_call(const Report& report, const Layer& layer) {
  const Call* first = nullptr;
  for (int64_t id : layer.call_ids) {
    if (id < 0 || static_cast<size_t>(id) >= report.calls.size()) continue;
    const Call& c = report.calls[id];
    if (!first) first = &c;
    if (c.direction != direction::kBackward && !c.recompute) return &c;
  }
  return first;
}

std::string layer_backend(const Report& report, const Layer& layer) {
  std::map<std::string, double> time;
  for (int64_t id : layer.call_ids)
    if (id >= 0 && static_cast<size_t>(id) < report.calls.size()) time[report.calls[id].backend] += report.calls[id].device_time_us;
  std::string best;
  double best_time = -1;
  for (const auto& [backend, t] : time)  // ordered map: ties go to the first name
    if (t > best_time) best = backend, best_time = t;
  return best;
}

RankLayer layer_facts(const Report& report, const Layer& layer) {
  RankLayer row;
  row.index = layer.index;
  row.time_us = layer.device_time_us;
  row.backend = layer_backend(report, layer);
  if (const Call* c = representative_call(report, layer)) {
    row.kernel = main_kernel(*c);
    row.shape = shape_without_dtype(c->shape);
    row.mask = mask_text(c->mask);
    row.dtype = c->shape.dtype;
    row.phase = c->phase;
    row.rejections = rejections_of(*c);
  }
  return row;
}

std::vector<std::pair<std::string, double>> backend_mix(const Report& report) {
  std::map<std::string, double> time;
  for (const Call& c : report.calls) time[c.backend] += c.device_time_us;
  std::vector<std::pair<std::string, double>> mix(time.begin(), time.end());
  std::stable_sort(mix.begin(), mix.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return mix;
}

void add_distinct(std::vector<std::string>& list, const std::string& value, size_t limit) {
  if (value.empty() || list.size() >= limit) return;
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

RankSummary summarize_rank(const Report& report, const RankOrigin& origin) {
  RankSummary s;
  s.file = origin.file;
  s.trace_rank = origin.trace_rank;
  s.world_size = origin.world_size;
  s.groups = origin.groups;
  const std::string name = std::filesystem::path(origin.file).filename().string();
  s.stage = stage_of_file_name(name);
  s.host = host_of_file_name(name);
  s.device = report.source.device_name;
  s.attention_device_time_us = report.summary.attention_device_time_us;
  s.attention_time_unknown = report.summary.unknown_time_call_count > 0;
  s.fused_time_fraction = report.summary.fused_time_fraction;
  s.attention_share = report.summary.attention_share;
  s.call_count = static_cast<int64_t>(report.calls.size());
  std::vector<double> step_us;
  for (const Step& step : report.steps) step_us.push_back(static_cast<double>(step.dur_ns) / 1000.0);
  s.step_time_us = median(std::move(step_us));
  s.backend_time_us = backend_mix(report);
  for (const Call& c : report.calls) {
    add_distinct(s.libraries, c.library, SIZE_MAX);
    add_distinct(s.shapes, shape_text(c.shape), kMaxShapes);
  }
  std::sort(s.libraries.begin(), s.libraries.end());
  for (const Layer& layer : report.layers) {
    if (layer.index < 0) continue;
    if (s.layer_time_us.size() <= static_cast<size_t>(layer.index)) s.layer_time_us.resize(layer.index + 1, 0.0);
    s.layer_time_us[layer.index] += layer.device_time_us;
    s.layers.push_back(layer_facts(report, layer));
  }
  std::sort(s.layers.begin(), s.layers.end(), [](const RankLayer& a, const RankLayer& b) { return a.index < b.index; });
  return s;
}

RankSummary failed_rank(const std::string& file, const std::string& error) {
  RankSummary s;
  s.file = file;
  s.error = error.empty() ? "failed (no error text)" : error;
  s.stage = stage_of_file_name(std::filesystem::path(file).filename().string());
  return s;
}

}  // namespace attnprof
