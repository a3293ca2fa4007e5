#include "render/html_view.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <unordered_map>

#include "attnprof/dashboard.h"
#include "attnprof/render.h"
#include "render/html_sections.h"
#include "attnprof/report_view.h"
#include "attnprof/text_format.h"

namespace attnprof {

const std::vector<std::string>& activation_map_components() {
  static const std::vector<std::string> components = {component::kQK,      component::kMask,
                                                      component::kSoftmax, component::kDropout,
                                                      component::kAV,      component::kFused};
  return components;
}

namespace render {
namespace {

using nlohmann::json;

// A peak the trace did not record (-1) reaches the page as null, which its formatters read as unknown.
json known_bytes(int64_t bytes) { return bytes >= 0 ? json(bytes) : json(nullptr); }

json call_view(const Call& call) {
  json kernels = json::array();
  for (const KernelRef& k : call.kernels)
    kernels.push_back({{"name", k.name}, {"component", k.component}, {"us", k.device_time_us}});
  return {{"id", call.id},
          {"layer", call.layer},
          {"module", module_of(call)},
          {"backend", call.backend},
          {"library", call.library},
          {"cls", backend_class_of(call)},
          {"op", call.op},
          {"backend_op", call.backend_op},
          {"direction", call.direction},
          {"shape", shape_text(call.shape)},
          {"us", call.device_time_unknown ? json(nullptr) : json(call.device_time_us)},
          {"unknown", call.device_time_unknown},
          {"tflops", call.tflops},
          {"tflops_upper_bound", call.flops_upper_bound},
          {"kernels", std::move(kernels)},
          {"why", explanation_lines(call)}};
}

json map_cell(const std::string& comp, const std::vector<const Call*>& calls) {
  std::string cls;
  double us = 0;
  std::map<std::string, std::pair<int64_t, double>> kernels;  // name -> count, time
  json call_ids = json::array();
  for (const Call* c : calls) {
    bool contributes = false;
    for (const KernelRef& k : c->kernels) {
      if (k.component != comp) continue;
      contributes = true;
      us += k.device_time_us;
      auto& [count, time] = kernels[k.name];
      ++count;
      time += k.device_time_us;
    }
    // CPU-only traces have fused calls without device kernels: the op itself is the cell.
    if (c->kernels.empty() && c->fused && comp == component::kFused) {
      contributes = true;
      us += c->device_time_us;
      auto& [count, time] = kernels[c->backend_op.empty() ? c->op : c->backend_op];
      ++count;
      time += c->device_time_us;
    }
    if (!contributes) continue;
    cls = worse_backend_class(cls, backend_class_of(*c));
    call_ids.push_back(c->id);
  }
  json kernel_list = json::array();
  for (const auto& [name, ct] : kernels)
    kernel_list.push_back({{"name", name}, {"count", ct.first}, {"us", ct.second}});
  return {{"component", comp}, {"cls", cls.empty() ? "absent" : cls}, {"us", us},
          {"kernels", std::move(kernel_list)}, {"calls", std::move(call_ids)}};
}

// One row per Report layer (its time and backends are the Layer's), one cell per component.
json activation_map(const ReportView& view) {
  json rows = json::array();
  for (const ActivationRow& row : view.layers) {
    if (row.calls.empty()) continue;
    json cells = json::array();
    for (const std::string& comp : activation_map_components()) cells.push_back(map_cell(comp, row.calls));
    int64_t unknown = 0;
    for (const Call* c : row.calls) unknown += c->device_time_unknown ? 1 : 0;
    // Calls whose kernels were not recorded (graph capture) have no time: unknown, not 0.
    const bool all_unknown = row.layer->device_time_unknown;
    if (all_unknown)
      for (json& cell : cells) cell["cls"] = "unknown";
    rows.push_back({{"layer", row.layer->index}, {"module", row.module}, {"backends", row.layer->backends},
                    {"us", all_unknown ? json(nullptr) : json(row.layer->device_time_us)},
                    {"unknown_calls", unknown}, {"cells", std::move(cells)}});
  }
  return rows;
}

// A node of the module tree: the calls under its path.
struct ModuleNode {
  double us = 0;
  std::string cls;
  bool attention = false;
  int64_t calls = 0;
  int64_t timed_calls = 0;  // calls under the node whose device time is known
  std::vector<int64_t> call_ids;
};

// The nodes of every prefix of the calls' module paths; `total` gets every call's device time.
std::map<std::string, ModuleNode> module_nodes(const Report& report, double& total) {
  std::map<std::string, ModuleNode> nodes;
  for (const Call& c : report.calls) {
    const std::string path = module_of(c);
    total += c.device_time_us;
    if (path.empty()) continue;
    for (size_t dot = 0;; ++dot) {
      dot = path.find('.', dot);
      ModuleNode& n = nodes[path.substr(0, dot)];
      n.us += c.device_time_us;
      n.timed_calls += c.device_time_unknown ? 0 : 1;
      n.cls = worse_backend_class(n.cls, backend_class_of(c));
      if (dot == std::string::npos) {
        n.attention = true;
        ++n.calls;
        n.call_ids.push_back(c.id);
        break;
      }
    }
  }
  return nodes;
}

std::vector<std::string> path_segments(const std::string& p) {
  std::vector<std::string> s;
  size_t start = 0;
  for (size_t dot = p.find('.'); dot != std::string::npos; dot = p.find('.', start = dot + 1))
    s.push_back(p.substr(start, dot - start));
  s.push_back(p.substr(start));
  return s;
}

bool is_index_segment(const std::string& s) {
  return !s.empty() && s.size() < 18 && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// Depth-first order by path segments, indices as numbers ("layers.2" before "layers.10"):
// std::map orders "a.b" before "a.b.c" but also "a.b" before "a.b0".
bool tree_order_less(const std::string& a, const std::string& b) {
  const auto numeric_less = [](const std::string& x, const std::string& y) {
    if (is_index_segment(x) && is_index_segment(y)) return std::stoll(x) < std::stoll(y);
    return x < y;
  };
  const auto sa = path_segments(a), sb = path_segments(b);
  return std::lexicographical_compare(sa.begin(), sa.end(), sb.begin(), sb.end(), numeric_less);
}

// Module tree from the dotted module paths of attention calls; every prefix is a node.
json module_tree(const Report& report) {
  double total = 0;
  const std::map<std::string, ModuleNode> nodes = module_nodes(report, total);
  std::vector<std::string> paths;
  for (const auto& [p, n] : nodes) paths.push_back(p);
  std::sort(paths.begin(), paths.end(), tree_order_less);
  json out = json::array();
  for (const std::string& p : paths) {
    const ModuleNode& n = nodes.at(p);
    const auto segs = path_segments(p);
    const bool timed = n.timed_calls > 0;
    out.push_back({{"path", p}, {"name", segs.back()}, {"depth", segs.size() - 1},
                   {"attention", n.attention}, {"cls", n.cls}, {"us", timed ? json(n.us) : json(nullptr)},
                   {"calls", n.calls}, {"call_ids", n.call_ids},
                   {"share", timed ? json(total > 0 ? n.us / total : 0.0) : json(nullptr)}});
  }
  return out;
}

json memory_view(const Report& report) {
  json rows = json::array();
  for (const Layer& l : report.layers) {
    if (!l.cost || l.cost->peak_bytes < 0) continue;
    rows.push_back({{"layer", l.index}, {"peak_bytes", l.cost->peak_bytes},
                    {"bytes_per_q_head", l.cost->bytes_per_q_head},
                    {"bytes_per_kv_head", l.cost->bytes_per_kv_head},
                    {"disproportionate", l.cost->disproportionate}});
  }
  return rows.empty() ? json(nullptr) : rows;
}

json advice_view(const Report& report) {
  if (!report.advice || report.advice->rows.empty()) return nullptr;
  json rows = json::array();
  for (const AdviceRow& r : report.advice->rows)
    rows.push_back({{"shape", r.shape}, {"fastest", r.fastest_backend}, {"heuristic", r.heuristic_backend},
                    {"gain", r.gain}, {"code", r.code}});
  return rows;
}

// --- ranks: a fleet's ranks against each other ------------------------------------------------

double rank_layer_time(const RankSummary& r, int64_t layer) {
  return layer >= 0 && static_cast<size_t>(layer) < r.layer_time_us.size() ? r.layer_time_us[layer] : 0.0;
}

// Each layer's median time over the ranks, as the fleet merge measured its stragglers against.
std::map<int64_t, double> layer_medians(const RanksSection& k, const std::set<int64_t>& layers) {
  std::map<int64_t, double> out;
  for (int64_t layer : layers)
    out[layer] = layer >= 0 && static_cast<size_t>(layer) < k.layer_median_us.size() ? k.layer_median_us[layer] : 0.0;
  return out;
}

// (rank, layer) -> the facets in which the rank's layer differs from most ranks.
std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> disagreeing_cells(const RanksSection& k) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::string>> out;
  for (const Disagreement& d : k.disagreements) out[{d.rank, d.layer}].push_back(d.facet);
  return out;
}

const RankLayer* rank_layer(const RankSummary& r, int64_t layer) {
  for (const RankLayer& l : r.layers)
    if (l.index == layer) return &l;
  return nullptr;
}

// Rank x layer: each cell's time and its time over the layer's median (null when the rank's
// time is unknown or the median is 0), the backend, and the facets that differ from most ranks.
json rank_heat_map(const RanksSection& k) {
  std::set<int64_t> layers;
  for (const RankSummary& r : k.ranks)
    for (const RankLayer& l : r.layers) layers.insert(l.index);
  const std::map<int64_t, double> medians = layer_medians(k, layers);
  const auto differ = disagreeing_cells(k);
  json rows = json::array();
  for (const RankSummary& r : k.ranks) {
    json cells = json::array();
    for (int64_t layer : layers) {
      const RankLayer* l = rank_layer(r, layer);
      const double us = rank_layer_time(r, layer), median = medians.at(layer);
      json cell = {{"layer", layer}, {"us", r.attention_time_unknown ? json(nullptr) : json(us)},
                   {"ratio", r.attention_time_unknown || median <= 0 ? json(nullptr) : json(us / median)},
                   {"backend", l ? l->backend : ""}, {"absent", l == nullptr}};
      if (auto it = differ.find({r.rank, layer}); it != differ.end()) cell["disagree"] = it->second;
      cells.push_back(std::move(cell));
    }
    rows.push_back({{"rank", r.rank}, {"cells", std::move(cells)}});
  }
  json median_list = json::array();
  for (const auto& [layer, median] : medians) median_list.push_back(median);
  return {{"layers", layers}, {"medians", std::move(median_list)}, {"rows", std::move(rows)}};
}

// A rank's own dashboard (RankSummary::report_html) as a link target: a path, relative to the
// page or absolute, or an http(s)/file URL. Other schemes (s3://, javascript:) are shown as text
// and never followed: the browser cannot open an object store, and a Report is untrusted input.
json report_href(const std::string& path) {
  if (path.empty()) return nullptr;
  const size_t colon = path.find(':'), slash = path.find('/');
  const bool has_scheme = colon != std::string::npos && (slash == std::string::npos || colon < slash);
  if (!has_scheme) return path;
  for (const char* scheme : {"http://", "https://", "file://"})
    if (path.starts_with(scheme)) return path;
  return nullptr;
}

std::string backend_mix_text(const RankSummary& r) {
  double total = 0;
  for (const auto& [backend, us] : r.backend_time_us) total += us;
  std::string out;
  for (const auto& [backend, us] : r.backend_time_us)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", backend, percent_text(total > 0 ? us / total : 0.0));
  return out;
}

json rank_rows(const RanksSection& k) {
  json rows = json::array();
  for (const RankSummary& r : k.ranks)
    rows.push_back({{"rank", r.rank}, {"file", r.file}, {"us", r.attention_device_time_us},
                    {"unknown", r.attention_time_unknown}, {"fused", r.fused_time_fraction},
                    {"over_median", k.median_attention_us > 0 && !r.attention_time_unknown
                                        ? json(r.attention_device_time_us / k.median_attention_us)
                                        : json(nullptr)},
                    {"device", r.device}, {"host", r.host}, {"stage", r.stage}, {"calls", r.call_count},
                    {"backends", backend_mix_text(r)}, {"report_html", r.report_html},
                    {"report_href", report_href(r.report_html)}});
  return rows;
}

// The tables as the text and Markdown reports print them (ranks_rows.cpp; the page lists every
// straggler and disagreement), and the rank of each straggler row for its link.
json ranks_view(const Report& report) {
  if (!report.ranks || (report.ranks->ranks.empty() && report.ranks->failed.empty())) return nullptr;
  const RanksSection& k = *report.ranks;
  json straggler_ranks = json::array();
  for (const Straggler& s : k.stragglers) straggler_ranks.push_back(s.rank);
  return {{"line", ranks_line(k)},
          {"rows", rank_rows(k)},
          {"slowest", k.slowest_rank},
          {"slowest_over_median", k.slowest_over_median},
          {"median_us", k.median_attention_us},
          {"threshold", k.straggler_threshold},
          {"heat", rank_heat_map(k)},
          {"stragglers", {{"columns", straggler_columns()}, {"rows", straggler_rows(k, k.stragglers.size())},
                          {"ranks", std::move(straggler_ranks)}}},
          {"disagreements", disagreement_lines(k)},
          {"groups", {{"columns", group_columns()}, {"rows", group_rows(k)}}},
          {"failed", failed_rank_rows(k)}};
}

// after / before of a compared metric; null when it was not compared (a side lacks it or its
// time is unknown) or the baseline is 0.
json ratio(const MetricDelta& d) { return d.known && d.before != 0 ? json(d.after / d.before) : json(nullptr); }

const LayerDelta* layer_delta(const DiffVerdict& verdict, int64_t layer) {
  for (const LayerDelta& d : verdict.layers)
    if (d.layer == layer) return &d;
  return nullptr;
}

json findings_view(const Report& report) {
  json rows = json::array();
  for (const Finding& f : report.findings) {
    const FixVerification* v = verification_of(report, f);
    rows.push_back({{"severity", f.severity}, {"title", f.title}, {"detail", f.detail},
                    {"rule", f.rule}, {"layers", f.layers}, {"gain", f.expected_gain},
                    {"verified", v ? verification_mark(*v) : ""}, {"verdict", v ? v->verdict : ""}});
  }
  return rows;
}

}  // namespace

json run_view(const ReportView& view, const std::string& label) {
  const Report& report = *view.report;
  const Summary& s = report.summary;
  json calls = json::array();
  for (const Call& c : report.calls) calls.push_back(call_view(c));
  json run = {{"label", label},
          {"device", report.source.device_name},
          {"arch", report.source.arch},
          {"files", report.source.files},
          {"tool_version", report.tool_version},
          {"assumptions", report.source.assumptions},
          {"missing", report.source.missing},
          {"summary",
           {{"calls", s.call_count}, {"fused_calls", s.fused_call_count},
            {"fused_time_fraction", s.fused_time_fraction}, {"attention_us", s.attention_device_time_us},
            {"gpu_us", s.gpu_time_us}, {"attention_share", s.attention_share}, {"has_gpu", s.has_gpu},
            {"peak_bytes", known_bytes(view.peak_bytes)},
            {"unknown_time_calls", s.unknown_time_call_count},
            {"time_unknown", device_time_unknown(s)}}},
          {"map", activation_map(view)},
          {"calls", std::move(calls)},
          {"tree", module_tree(report)},
          {"memory", memory_view(report)},
          {"advice", advice_view(report)},
          {"ranks", ranks_view(report)},
          {"findings", findings_view(report)}};
  add_section_views(run, report);
  return run;
}

json run_view(const Report& report, const std::string& label) { return run_view(make_report_view(report), label); }

namespace {

// One layer of run `i` in the comparison: its time, and its class against the first run's.
json compared_layer(int64_t l, size_t i, const std::map<int64_t, const ActivationRow*>& by_index,
                    const DiffVerdict* verdict) {
  auto it = by_index.find(l);
  const bool present = it != by_index.end();
  const bool unknown = present && it->second->layer->device_time_unknown;
  const LayerDelta* d = verdict ? layer_delta(*verdict, l) : nullptr;
  json layer = {{"layer", l},
                {"us", present && !unknown ? json(it->second->layer->device_time_us) : json(nullptr)},
                {"unknown", unknown},
                {"cls", d ? (i == 0 ? d->class_before : d->class_after) : std::string()}};
  if (i > 0) {
    layer["ratio"] = d ? ratio(d->time_us) : json(nullptr);
    layer["changed"] = d && d->class_before != d->class_after;
    layer["better"] = d && d->time_us.known && d->time_us.worsening < 0;
  }
  return layer;
}

// Run `i` of the comparison, with `verdict` its comparison against the first run.
json compared_run(const ReportView& view, size_t i, const std::string& label, const std::set<int64_t>& all_layers,
                  const DiffVerdict* verdict) {
  const Report& r = *view.report;
  std::map<int64_t, const ActivationRow*> by_index;
  for (const ActivationRow& row : view.layers)
    if (!row.calls.empty()) by_index[row.layer->index] = &row;
  json layers = json::array();
  for (int64_t l : all_layers) layers.push_back(compared_layer(l, i, by_index, verdict));
  json run_ratio = verdict ? ratio(verdict->attention_time_us) : json(nullptr);
  if (i == 0 && !run_ratio.is_null()) run_ratio = 1.0;  // the baseline against itself
  return {{"label", label}, {"calls", r.summary.call_count},
          {"fused_time_fraction", r.summary.fused_time_fraction},
          {"attention_us", r.summary.attention_device_time_us},
          {"time_unknown", device_time_unknown(r.summary)},
          {"ratio", std::move(run_ratio)},
          {"peak_bytes", known_bytes(view.peak_bytes)}, {"layers", std::move(layers)}};
}

// A later run's comparison with the first: its diff section's one pair (compare_with_first).
const DiffVerdict* verdict_against_first(const Report& run) {
  return run.diff && run.diff->pairs.size() == 1 ? &run.diff->pairs.front() : nullptr;
}

}  // namespace

// Each run against the first, as `attnprof diff` compares them (each later run's diff section,
// compare_with_first): the ratio of its attention time per step and of each layer's, the
// backend class of each layer, and whether a changed class is faster. The times shown are the
// runs' own (Summary, Layer).
json comparison_view(const std::vector<ReportView>& views, const std::vector<std::string>& labels) {
  std::set<int64_t> all_layers;
  for (const ReportView& v : views)
    for (const ActivationRow& row : v.layers)
      if (!row.calls.empty()) all_layers.insert(row.layer->index);
  json runs = json::array();
  for (size_t i = 0; i < views.size(); ++i) {
    // The baseline's classes are the "before" side of the second run's comparison with it.
    const DiffVerdict* verdict = views.size() > 1 ? verdict_against_first(*views[i == 0 ? 1 : i].report) : nullptr;
    runs.push_back(compared_run(views[i], i, labels[i], all_layers, verdict));
  }
  return {{"runs", std::move(runs)}, {"layers", all_layers}};
}

}  // namespace render
}  // namespace attnprof
