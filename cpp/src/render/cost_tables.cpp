// The cost sections of a Report as tables (report_view.h): roofline and memory per layer,
// scaling with the OOM threshold, the allocator replay, backend advice, what-if.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "attnprof/cost_render.h"
#include "attnprof/report_view.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

using Row = std::vector<std::string>;

std::string tokens(int64_t n) { return n < 0 ? "-" : fmt::format("{}", n); }

std::string fit_text(const FitTerm& f, const char* unit) {
  return fmt::format("{:.4g} + {:.4g}*S + {:.4g}*S^2 {} ({}, rms err {})", f.c0, f.c1, f.c2, unit, f.growth,
                     percent_text(f.rel_rms_error));
}

// What a layer's calls add to its cost row.
struct LayerCallCosts {
  int64_t analytic = 0;  // the model's transient bytes, next to the measured peak
  bool ceiling = false;  // FLOPs of a packed call known only from max_seqlen
  std::string bound;     // the calls' roofline verdict; "mixed" when they disagree
};

LayerCallCosts layer_call_costs(const Report& r, const Layer& layer) {
  LayerCallCosts out;
  for (int64_t id : layer.call_ids) {
    if (id < 0 || static_cast<size_t>(id) >= r.calls.size()) continue;
    const Call& call = r.calls[static_cast<size_t>(id)];
    if (call.cost) out.analytic = std::max(out.analytic, call.cost->analytic_bytes);
    out.ceiling = out.ceiling || call.flops_upper_bound;
    if (call.cost && (call.cost->bound == "compute" || call.cost->bound == "memory"))
      out.bound = out.bound.empty() || out.bound == call.cost->bound ? call.cost->bound : "mixed";
  }
  return out;
}

std::string bytes_or_dash(int64_t bytes, bool known) { return known ? bytes_text(static_cast<double>(bytes)) : "-"; }

Row layer_cost_row(const Layer& layer, const LayerCost& c, const LayerCallCosts& calls) {
  std::string backends;
  for (const auto& b : layer.backends) backends += (backends.empty() ? "" : ",") + b;
  return {fmt::format("{}", layer.index), backends,
          c.achieved_tflops > 0 ? fmt::format("{}{:.1f}", calls.ceiling ? "<=" : "", c.achieved_tflops) : "-",
          c.peak_fraction > 0 ? percent_text(c.peak_fraction) : "-",
          calls.bound.empty() ? "-" : calls.bound, bytes_or_dash(c.peak_bytes, c.peak_bytes >= 0),
          bytes_or_dash(calls.analytic, calls.analytic > 0), bytes_or_dash(c.bytes_per_q_head, c.bytes_per_q_head >= 0),
          bytes_or_dash(c.bytes_per_kv_head, c.bytes_per_kv_head >= 0), c.disproportionate ? "<- disproportionate" : ""};
}

std::vector<CostTable> layer_tables(const Report& r) {
  CostTable t{"Attention cost per layer (roofline and memory)",
              {"layer", "backends", "useful TFLOP/s", "% peak", "bound", "peak during calls", "analytic", "per Q head", "per KV head (K+V)",
               ""},
              {},
              {}};
  for (const auto& layer : r.layers) {
    if (!layer.cost) continue;
    const LayerCost& c = *layer.cost;
    if (c.achieved_tflops <= 0 && c.peak_bytes < 0) continue;  // no shapes, no memory events: nothing known
    t.rows.push_back(layer_cost_row(layer, c, layer_call_costs(r, layer)));
  }
  if (t.rows.empty()) return {};
  if (r.summary.has_gpu)
    t.notes.push_back("useful TFLOP/s: the FLOPs the mask leaves, over device time; bound: executed FLOPs per byte "
                      "against the GPU's ridge point (docs/cost.md, \"Bound verdict\")");
  else {  // no datasheet peak for a CPU: the roofline columns would be empty
    t.header.erase(t.header.begin() + 2, t.header.begin() + 5);
    for (Row& row : t.rows) row.erase(row.begin() + 2, row.begin() + 5);
    t.notes.push_back("roofline: needs a GPU peak; this trace ran on the CPU, so no TFLOP/s against a peak is shown");
  }
  return {t};
}

constexpr size_t kShapeGroupsShown = 10;

std::string group_name(const ShapeGroup& g) {
  std::string name = g.backend;
  if (!g.library.empty() && g.library != g.backend) name += "/" + g.library;
  if (!g.shape.empty()) name += " " + g.shape;
  if (!g.mask.empty()) name += " " + g.mask;
  if (!g.direction.empty()) name += " " + g.direction;
  if (!g.phase.empty()) name += " " + g.phase;
  return name;
}

std::string range_text(const Spread& s, const char* format) {
  if (s.count == 0) return "-";
  return fmt::format(fmt::runtime(format), s.median, s.min, s.max);
}

std::string slowest_text(const ShapeGroup& g) {
  std::string out;
  for (const SlowCall& c : g.slowest)
    out += fmt::format("{}call {} (step {}, layer {}) {}", out.empty() ? "" : "; ", c.call, c.step, c.layer,
                       time_text(c.device_time_us));
  return out;
}

// Device time, useful TFLOP/s and bandwidth of each shape group: count, mean, median, min,
// max, std, and where its slowest calls ran.
std::vector<CostTable> spread_tables_of(const Report& r) {
  const auto& groups = r.summary.shape_groups;
  if (groups.empty()) return {};
  CostTable t{"Spread per shape group (device time; useful TFLOP/s and GB/s as median [min..max])",
              {"group", "calls", "mean us", "median us", "min us", "max us", "std us", "useful TFLOP/s", "GB/s",
               "slowest"},
              {},
              {}};
  for (size_t i = 0; i < std::min(kShapeGroupsShown, groups.size()); ++i) {
    const ShapeGroup& g = groups[i];
    const Spread& d = g.device_time_us;
    t.rows.push_back({group_name(g), fmt::format("{}", g.count), fmt::format("{:.1f}", d.mean),
                      fmt::format("{:.1f}", d.median), fmt::format("{:.1f}", d.min), fmt::format("{:.1f}", d.max),
                      fmt::format("{:.1f}", d.std), (g.tflops_upper_bound && g.tflops.count ? "<=" : "") + range_text(g.tflops, "{:.1f} [{:.1f}..{:.1f}]"),
                      range_text(g.bandwidth_gbs, "{:.0f} [{:.0f}..{:.0f}]"), slowest_text(g)});
  }
  if (groups.size() > kShapeGroupsShown)
    t.notes.push_back(fmt::format("{} more groups in the JSON Report (summary.shape_groups)", groups.size() - kShapeGroupsShown));
  t.notes.push_back("groups: calls of one backend, library, shape, mask, direction and phase; std is the population "
                    "standard deviation (docs/cost.md, \"Spread per shape group\")");
  return {t};
}

std::string oom_line(const ScalingSection& s, const ScalingSeries& series) {
  std::string line = fmt::format("OOM threshold for {} ({}; {} before the pass", bytes_text(static_cast<double>(s.memory_budget_bytes)),
                                 s.budget_source, bytes_text(static_cast<double>(s.baseline_bytes)));
  if (!series.oom_method.empty()) line += "; " + series.oom_method;
  line += fmt::format("): S <= {}", tokens(series.oom_threshold_tokens));
  if (series.oom_threshold_low_tokens >= 0)
    line += fmt::format(" (error band {} of reserved memory: S in {}..{})", percent_text(series.oom_error_band),
                        tokens(series.oom_threshold_low_tokens), tokens(series.oom_threshold_high_tokens));
  if (const auto& f = series.failing_allocation)
    line += fmt::format("; at S = {} the first allocation to fail is {} in {} (layer {}), with {} reserved for {} "
                        "allocated ({} fragmentation)",
                        f->length, bytes_text(static_cast<double>(f->bytes)), f->op.empty() ? "(no op)" : f->op,
                        f->layer, bytes_text(static_cast<double>(f->reserved_bytes)),
                        bytes_text(static_cast<double>(f->allocated_bytes)), percent_text(series.fragmentation));
  if (!series.oom_note.empty()) line += "; " + series.oom_note;
  if (series.measured_oom_tokens >= 0)
    line += fmt::format("; measured on the device: S <= {} ran (predicted {})", series.measured_oom_tokens,
                        tokens(series.oom_threshold_tokens));
  else if (!series.measured_oom_note.empty())
    line += "; measured: " + series.measured_oom_note;
  return line;
}

CostTable replay_table(const ScalingSection& s) {
  CostTable t{"Allocator replay against the recorded Total Reserved",
              {"trace", "events", "within 2 MiB", "largest difference", "recorded peak", "simulated peak"}, {}, {}};
  for (const auto& r : s.replays)
    t.rows.push_back({r.file.substr(r.file.find_last_of('/') + 1), fmt::format("{}", r.events),
                      percent_text(r.within_2mib_share),
                      bytes_text(static_cast<double>(r.largest_difference_bytes)),
                      bytes_text(static_cast<double>(r.recorded_peak_reserved_bytes)),
                      bytes_text(static_cast<double>(r.simulated_peak_reserved_bytes))});
  if (!s.replays.empty()) t.notes.push_back("replay: " + s.replays.front().cannot_know);
  if (!s.non_pytorch_memory.empty())
    t.notes.push_back(fmt::format("allocator limit {}: {}", bytes_text(static_cast<double>(s.allocator_limit_bytes)),
                                  s.non_pytorch_memory));
  return t;
}

std::vector<CostTable> scaling_tables(const ScalingSection& s) {
  std::vector<CostTable> tables;
  for (const auto& series : s.series) {
    const bool whole_pass = series.forward_pass_time_us.size() == series.lengths.size() && !series.lengths.empty();
    CostTable t{fmt::format("Scaling with sequence length: {}", series.backend),
                {"S", "attention time (us)", "peak activation", "memory residual"},
                {},
                {}};
    if (whole_pass) t.header.insert(t.header.begin() + 2, "forward pass time (us)");
    for (size_t i = 0; i < series.lengths.size(); ++i) {
      const double residual =
          i < series.memory_fit.residuals.size() ? series.memory_fit.residuals[i] : 0.0;
      // A series read back from JSON may carry fewer times or peaks than lengths: "-" for those.
      const bool timed = i < series.time_us.size();
      const bool peaked = i < series.peak_bytes.size() && series.peak_bytes[i] >= 0;
      t.rows.push_back({fmt::format("{}", series.lengths[i]), timed ? fmt::format("{:.1f}", series.time_us[i]) : "-",
                        peaked ? bytes_text(static_cast<double>(series.peak_bytes[i])) : "-",
                        bytes_text(residual)});
      if (whole_pass) t.rows.back().insert(t.rows.back().begin() + 2, fmt::format("{:.1f}", series.forward_pass_time_us[i]));
    }
    t.notes.push_back("time(S)   = " + fit_text(series.time_fit, "us"));
    t.notes.push_back("memory(S) = " + fit_text(series.memory_fit, "bytes"));
    if (series.memory_fit.quadratic_dominates_from > 0)
      t.notes.push_back(fmt::format("memory: the S^2 term dominates from S = {}", series.memory_fit.quadratic_dominates_from));
    if (series.time_fit.quadratic_dominates_from > 0)
      t.notes.push_back(fmt::format("time: the S^2 term dominates from S = {}", series.time_fit.quadratic_dominates_from));
    if (s.memory_budget_bytes > 0) t.notes.push_back(oom_line(s, series));
    tables.push_back(std::move(t));
  }
  if (!s.replays.empty()) tables.push_back(replay_table(s));
  return tables;
}

CostTable advice_table(const AdviceSection& a) {
  CostTable t{"Backend advice (forced-backend runs)", {"shape", "fastest", "PyTorch picked", "gain", "times (us)"}, {}, {}};
  for (const auto& row : a.rows) {
    std::string times;
    for (const auto& [name, us] : row.times_us) times += fmt::format("{}{} {:.0f}", times.empty() ? "" : ", ", name, us);
    t.rows.push_back({row.shape, row.fastest_backend, row.heuristic_backend.empty() ? "?" : row.heuristic_backend,
                      row.gain > 0 ? ratio_text(row.gain) : "-", times});
    if (!row.code.empty()) t.notes.push_back(fmt::format("{}: pin {}:\n{}", row.shape, row.fastest_backend, row.code));
  }
  if (t.notes.empty()) t.notes.push_back("PyTorch's own pick is the fastest (within noise) for every shape.");
  return t;
}

CostTable whatif_table(const WhatIfSection& w) {
  CostTable t{fmt::format("What-if: {} requests (mean {:.0f} tokens), full attention vs window {}{}", w.requests,
                          w.mean_tokens, w.window, w.global_tokens > 0 ? fmt::format(" + {} global", w.global_tokens) : ""),
              {"", "full", "window", "saving"},
              {},
              {}};
  t.rows.push_back({"attention FLOPs", flop_count_text(w.full_flops), flop_count_text(w.window_flops),
                    percent_text(w.flops_saving)});
  t.rows.push_back({"KV cache (sum)", bytes_text(w.full_kv_bytes), bytes_text(w.window_kv_bytes),
                    percent_text(w.memory_saving)});
  t.rows.push_back({"KV cache (longest)", bytes_text(w.max_full_kv_bytes), bytes_text(w.max_window_kv_bytes), ""});
  t.notes.push_back(fmt::format("{} of requests fit entirely in the window (no change for them). Model: {}.",
                                percent_text(w.covered_share), w.model));
  return t;
}

}  // namespace

std::vector<CostTable> spread_tables(const Report& r) { return spread_tables_of(r); }

std::vector<CostTable> cost_tables(const Report& r) {
  std::vector<CostTable> tables = layer_tables(r);
  for (auto& t : spread_tables_of(r)) tables.push_back(std::move(t));
  if (r.scaling)
    for (auto& t : scaling_tables(*r.scaling)) tables.push_back(std::move(t));
  if (r.advice) tables.push_back(advice_table(*r.advice));
  if (r.whatif) tables.push_back(whatif_table(*r.whatif));
  return tables;
}


}  // namespace attnprof
