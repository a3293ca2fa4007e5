#include "render/html_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "attnprof/dashboard.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/report_view.h"
#include "attnprof/hw.h"

namespace attnprof::render {
namespace {

using nlohmann::json;

// --- roofline -------------------------------------------------------------------------------

// The GPU's roofline is drawn only where the Report ran on a GPU the spec table knows, or one
// whose ceilings the user measured (--gpu-spec): those replace the datasheet's.
std::optional<GpuSpec> roofline_gpu(const Report& report) {
  if (!report.summary.has_gpu) return std::nullopt;
  const GpuSpec* row = find_gpu_spec(report.source.device_name);
  if (row != nullptr && std::string_view(row->vendor) == "cpu") return std::nullopt;
  if (row == nullptr && !report.source.measured_peaks) return std::nullopt;
  const GpuSpec spec = report.source.measured_peaks ? with_measured_peaks(row, *report.source.measured_peaks) : *row;
  if (spec.bandwidth_gbs <= 0) return std::nullopt;
  return spec;
}

bool on_roofline(const Call& c) {
  return !c.device_time_unknown && c.cost && c.cost->arithmetic_intensity > 0 && c.tflops_executed > 0;
}

// A point is the work the kernel executed (masked-out tiles included) per byte, at the rate it
// executed it: the same quantities the bound verdict compares (docs/cost.md, "Bound verdict").
json roofline_point(const Call& c) {
  return {{"id", c.id}, {"layer", c.layer}, {"backend", c.backend}, {"cls", backend_class_of(c)},
          {"dtype", c.shape.dtype}, {"intensity", c.cost->arithmetic_intensity}, {"tflops", c.tflops_executed},
          {"useful_tflops", c.tflops}, {"bound", c.cost->bound}, {"upper_bound", c.flops_upper_bound},
          {"us", c.device_time_us}, {"peak_fraction", c.cost->peak_fraction}};
}

// Decade below/above: the log axes start and end on powers of ten.
double decade_floor(double x) { return std::pow(10.0, std::floor(std::log10(x))); }
double decade_ceil(double x) { return std::pow(10.0, std::ceil(std::log10(x))); }

// One roof per dtype the calls ran in: bandwidth slope up to the ridge point, then the peak.
json roofs(const GpuSpec& gpu, const std::set<std::string>& dtypes, double lo, double hi) {
  json out = json::array();
  for (const std::string& dtype : dtypes) {
    const double peak = peak_tflops(gpu, dtype);
    if (peak <= 0) continue;
    const double ridge = peak * 1e3 / gpu.bandwidth_gbs;  // FLOP/byte where bandwidth meets peak
    out.push_back({{"dtype", dtype}, {"peak_tflops", peak}, {"ridge", ridge},
                   {"points", {{lo, gpu.bandwidth_gbs * lo / 1e3}, {ridge, peak}, {hi, peak}}}});
  }
  return out;
}

json roofline_calls(const Report& report) {
  const std::optional<GpuSpec> gpu = roofline_gpu(report);
  if (!gpu) return nullptr;
  json points = json::array();
  std::set<std::string> dtypes;
  double lo = 0, hi = 0;
  for (const Call& c : report.calls) {
    if (!on_roofline(c)) continue;
    json p = roofline_point(c);
    const double x = p["intensity"];
    lo = points.empty() ? x : std::min(lo, x);
    hi = points.empty() ? x : std::max(hi, x);
    dtypes.insert(c.shape.dtype);
    points.push_back(std::move(p));
  }
  if (points.empty()) return nullptr;
  for (const std::string& dtype : dtypes) {
    const double peak = peak_tflops(*gpu, dtype);
    if (peak > 0) lo = std::min(lo, peak * 1e3 / gpu->bandwidth_gbs), hi = std::max(hi, peak * 1e3 / gpu->bandwidth_gbs);
  }
  lo = decade_floor(lo / 10), hi = decade_ceil(hi * 2);
  const std::string ceilings = report.source.measured_peaks
                                   ? "measured ceilings from " + report.source.measured_peaks->file
                                   : std::string("peaks and bandwidth from the GPU spec table");
  return {{"gpu", gpu->name}, {"bandwidth_gbs", gpu->bandwidth_gbs}, {"x_range", {lo, hi}},
          {"ceilings", ceilings}, {"roofs", roofs(*gpu, dtypes, lo, hi)}, {"points", std::move(points)}};
}

// The spread table as the terminal and Markdown show it, with each group's slowest calls as
// ids the page links to their layer.
json spread_view(const Report& report) {
  const std::vector<CostTable> tables = spread_tables(report);
  if (tables.empty()) return nullptr;
  json slowest = json::array();
  for (const ShapeGroup& g : report.summary.shape_groups) {
    json ids = json::array();
    for (const SlowCall& c : g.slowest) ids.push_back({{"call", c.call}, {"step", c.step}, {"layer", c.layer}});
    slowest.push_back(std::move(ids));
  }
  return {{"title", tables.front().title}, {"header", tables.front().header}, {"rows", tables.front().rows},
          {"notes", tables.front().notes}, {"slowest", std::move(slowest)}};
}

std::string roofline_why(const Report& report) {
  if (report.calls.empty()) return "No attention calls, so nothing to place on a roofline.";
  if (!report.summary.has_gpu)
    return "CPU run: there is no GPU peak to compare against, so no roofline is drawn.";
  if (std::all_of(report.calls.begin(), report.calls.end(), [](const Call& c) { return c.device_time_unknown; }))
    return "Every call's device time is unknown (its kernels were not recorded, e.g. during a CUDA/HIP graph "
           "capture): nothing to place on a roofline.";
  if (!roofline_gpu(report))
    return fmt::format("The device ({}) is not in the GPU spec table (docs/cost.md): no peaks to draw against.",
                       report.source.device_name.empty() ? "unnamed in the trace" : report.source.device_name);
  return "No call has both a measured device time and a FLOP and byte count (unknown device time, or shapes "
         "not recorded: profile with record_shapes=True).";
}

// --- scaling --------------------------------------------------------------------------------

json fit_view(const FitTerm& fit, double from, double to) {
  return {{"growth", fit.growth}, {"rel_rms_error", fit.rel_rms_error},
          {"quadratic_from", fit.quadratic_dominates_from}, {"curve", fit_curve(fit, from, to)}};
}

json series_view(const ScalingSeries& s) {
  json out = {{"backend", s.backend}, {"lengths", s.lengths}, {"time_us", s.time_us},
              {"forward_pass_time_us", s.forward_pass_time_us}, {"peak_bytes", s.peak_bytes},
              {"oom_tokens", s.oom_threshold_tokens}, {"oom_low", s.oom_threshold_low_tokens},
              {"oom_high", s.oom_threshold_high_tokens}, {"oom_method", s.oom_method}, {"oom_note", s.oom_note},
              {"measured_oom_tokens", s.measured_oom_tokens}, {"measured_oom_note", s.measured_oom_note}};
  if (s.lengths.empty()) return out;
  const auto [min_it, max_it] = std::minmax_element(s.lengths.begin(), s.lengths.end());
  const double shortest = static_cast<double>(*min_it);
  double to = static_cast<double>(*max_it);
  // Extend the curves to the predicted OOM length when it is near enough to read on one chart,
  // and down to where the S^2 term takes over when that lies below the shortest length.
  if (s.oom_threshold_tokens > to && s.oom_threshold_tokens < 16 * to) to = static_cast<double>(s.oom_threshold_tokens);
  const auto from = [shortest](const FitTerm& fit) {
    const double q = static_cast<double>(fit.quadratic_dominates_from);
    return q > 0 && q < shortest ? q : shortest;
  };
  out["time_fit"] = fit_view(s.time_fit, from(s.time_fit), to);
  out["memory_fit"] = fit_view(s.memory_fit, from(s.memory_fit), to);
  return out;
}

json scaling_view(const ScalingSection& s) {
  json series = json::array();
  for (const ScalingSeries& ser : s.series) series.push_back(series_view(ser));
  const bool predicted = std::any_of(s.series.begin(), s.series.end(),
                                     [](const ScalingSeries& ser) { return !ser.forward_pass_time_us.empty(); });
  // The series' peaks are memory the pass adds; the budget left for it is the budget less what
  // was allocated before the pass (weights).
  const int64_t for_pass = s.memory_budget_bytes > 0 ? s.memory_budget_bytes - s.baseline_bytes : 0;
  return {{"budget_bytes", s.memory_budget_bytes}, {"budget_source", s.budget_source},
          {"baseline_bytes", s.baseline_bytes}, {"budget_for_pass_bytes", for_pass},
          {"allocator_config", s.allocator_config}, {"predicted", predicted}, {"series", std::move(series)}};
}

// --- heads ----------------------------------------------------------------------------------

// Locality = attention mass within the smallest window every head was measured at.
int64_t locality_window(const HeadsSection& h) {
  std::set<int64_t> common;
  bool first = true;
  for (const HeadStats& s : h.heads) {
    std::set<int64_t> mine;
    for (const auto& [w, mass] : s.window_mass) mine.insert(w);
    if (first) common = mine, first = false;
    std::set<int64_t> both;
    std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(), std::inserter(both, both.end()));
    common = both;
  }
  return common.empty() ? 0 : *common.begin();
}

json mass_within(const HeadStats& s, int64_t window) {
  for (const auto& [w, mass] : s.window_mass)
    if (w == window) return mass;
  return nullptr;
}

json head_cells(const HeadsSection& h, int64_t window) {
  json cells = json::array();
  for (const HeadStats& s : h.heads) {
    json actions = json::array();
    for (const HeadCandidate& c : h.candidates)
      if (c.layer == s.layer && c.head == s.head) actions.push_back(c.action);
    cells.push_back({{"layer", s.layer}, {"head", s.head}, {"kv_head", s.kv_head}, {"entropy", s.entropy},
                     {"sink_mass", s.sink_mass}, {"special_mass", s.special_mass},
                     {"locality", window > 0 ? mass_within(s, window) : json(nullptr)},
                     {"coverage90", s.block_coverage_90}, {"max_weight", s.max_weight},
                     {"output_share", s.output_share}, {"kind", s.kind}, {"candidates", std::move(actions)}});
  }
  return cells;
}

json window_rows(const HeadsSection& h) {
  json rows = json::array();
  for (const WindowEffectiveness& w : h.sliding_window)
    rows.push_back({{"layer", w.layer}, {"call_id", w.call_id}, {"backend", w.backend}, {"mask", w.mask},
                    {"mask_kind", w.mask_kind}, {"skips", w.skips_masked_work}, {"window", w.window},
                    {"window_source", w.window_source}, {"masked_fraction", w.masked_fraction},
                    {"masked_fraction_min", w.masked_fraction_min}, {"wasted", w.wasted_flops_share},
                    {"verdict", w.verdict}});
  return rows;
}

json heads_view(const HeadsSection& h) {
  int64_t layers = 0, heads = 0;
  for (const HeadStats& s : h.heads) layers = std::max(layers, s.layer + 1), heads = std::max(heads, s.head + 1);
  const int64_t window = locality_window(h);
  json candidates = json::array();
  for (const HeadCandidate& c : h.candidates)
    candidates.push_back({{"layer", c.layer}, {"head", c.head}, {"action", c.action}, {"reason", c.reason},
                          {"kv_bytes_per_token", c.kv_bytes_per_token}, {"expected_speedup", c.expected_speedup}});
  return {{"layers", layers}, {"heads", heads}, {"cells", head_cells(h, window)}, {"locality_window", window},
          {"block_size", h.block_size}, {"sink_tokens", h.sink_tokens}, {"model_window", h.model_window},
          {"note", h.sampling_note}, {"untrained", h.weights_look_trained ? "" : h.untrained_reason},
          {"notes", h.notes}, {"candidates", std::move(candidates)}, {"window", window_rows(h)}};
}

// --- what-if --------------------------------------------------------------------------------

json length_histogram(const WhatIfSection& w) {
  json out = json::array();
  for (const LengthBucket& b : w.length_buckets)
    out.push_back({{"from", b.from}, {"to", b.to}, {"requests", b.requests}, {"within_window", b.within_window}});
  return out;
}

json whatif_view(const WhatIfSection& w) {
  return {{"model", w.model}, {"window", w.window}, {"global_tokens", w.global_tokens},
          {"requests", w.requests}, {"mean_tokens", w.mean_tokens}, {"covered_share", w.covered_share},
          {"full_flops", w.full_flops}, {"window_flops", w.window_flops}, {"flops_saving", w.flops_saving},
          {"full_kv_bytes", w.full_kv_bytes}, {"window_kv_bytes", w.window_kv_bytes},
          {"memory_saving", w.memory_saving}, {"max_full_kv_bytes", w.max_full_kv_bytes},
          {"max_window_kv_bytes", w.max_window_kv_bytes}, {"histogram", length_histogram(w)}};
}

// --- what an empty section says --------------------------------------------------------------

// Steps and phases: the same rows as the text and Markdown reports, and each step's attention
// and GPU time for the bar chart.
json steps_view(const Report& report) {
  if (report.steps.size() < 2 && report.summary.phases.empty()) return nullptr;
  constexpr size_t kMaxSteps = 500;
  json bars = json::array();
  for (const Step& s : report.steps) {
    if (bars.size() == kMaxSteps) break;
    bars.push_back({{"index", s.index}, {"phase", s.phase}, {"attention_us", s.attention_device_time_us},
                    {"overhead_us", s.overhead_time_us}, {"gpu_us", s.gpu_time_us}});
  }
  return {{"line", steps_line(report)}, {"rows", step_rows(report, kMaxSteps)}, {"phases", phase_rows(report)},
          {"scope", heads_scope_text(report.source)}, {"bars", bars},
          {"more", report.steps.size() > kMaxSteps ? report.steps.size() - kMaxSteps : 0}};
}

json why_lines(const Report& report, const json& run) {
  json why = json::object();
  if (run["steps"].is_null())
    why["steps"] = "One forward and no serving phase: steps and phases show for serving and generate runs "
                   "(engine step markers, ProfilerStep per forward, prefill and decode calls).";
  if (run["roofline_calls"].is_null()) why["roofline"] = roofline_why(report);
  if (run["spread"].is_null()) why["spread"] = "No call has a recorded device time: nothing to spread.";
  if (run["memory"].is_null())
    why["memory"] = "No memory events in the trace (profile with profile_memory=True) or no per-layer cost.";
  if (run["scaling"].is_null())
    why["scaling"] = "One trace is one sequence length: attnprof scale TRACE... (one trace per length) or "
                     "attnprof.sweep() measures time(S) and memory(S).";
  if (run["heads"].is_null())
    why["heads"] = "Per-head statistics need Q/K: attnprof heads FILE.safetensors (attnprof.heads.save_safetensors); "
                   "attnprof heads TRACE gives sliding-window verdicts.";
  if (run["advice"].is_null())
    why["advice"] = "Backend advice needs forced-backend traces (*_force_<backend>*) given to attnprof scale.";
  if (run["verification"].is_null())
    why["verification"] = "No fix was verified: attnprof.verify(model, inputs) applies each suggested fix to the model "
                          "and times it against the unchanged model (docs/verify.md).";
  if (run["diff"].is_null())
    why["diff"] = "attnprof diff BASELINE CANDIDATE --html FILE compares two runs: per-layer backend and time "
                  "changes and the causes of a regression.";
  if (run["ranks"].is_null()) why["ranks"] = "One trace: analyze a directory of per-rank traces to compare ranks.";
  if (run["whatif"].is_null())
    why["whatif"] = "attnprof whatif --lengths FILE --model NAME --window W compares full and sliding-window "
                    "attention over a request-length distribution.";
  return why;
}

}  // namespace

json fit_curve(const FitTerm& fit, double from, double to) {
  json points = json::array();
  if (fit.growth.empty() || from <= 0 || to < from) return points;
  constexpr int kSamples = 32;
  for (int i = 0; i <= kSamples; ++i) {
    const double s = from * std::pow(to / from, static_cast<double>(i) / kSamples);
    points.push_back({s, fit.c0 + fit.c1 * s + fit.c2 * s * s});
  }
  return points;
}

namespace {

// The verification table as the text and Markdown reports print it (verification_rows).
json verification_view(const Report& report) {
  if (!report.verification) return nullptr;
  return {{"line", verification_line(report)}, {"columns", verification_columns()},
          {"rows", verification_rows(report)}};
}

}  // namespace

void add_section_views(json& run, const Report& report) {
  run["roofline_calls"] = roofline_calls(report);
  run["spread"] = spread_view(report);
  run["scaling"] = report.scaling && !report.scaling->series.empty() ? scaling_view(*report.scaling) : json(nullptr);
  const bool heads = report.heads && (!report.heads->heads.empty() || !report.heads->sliding_window.empty() ||
                                      !report.heads->notes.empty());
  run["heads"] = heads ? heads_view(*report.heads) : json(nullptr);
  run["whatif"] = report.whatif ? whatif_view(*report.whatif) : json(nullptr);
  run["steps"] = steps_view(report);
  run["verification"] = verification_view(report);
  run["diff"] = report.diff ? json::parse(diff_section_to_json(*report.diff)) : json(nullptr);
  run["why"] = why_lines(report, run);
}

}  // namespace attnprof::render
