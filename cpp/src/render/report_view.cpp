// make_report_view (report_view.h): the facts every output shows, derived once from the Report.
#include "attnprof/report_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "attnprof/call_facts.h"
#include "attnprof/peak_memory.h"
#include "attnprof/render.h"

namespace attnprof {
namespace {

std::vector<const Call*> unfused_slowest_first(const Report& report) {
  std::vector<const Call*> unfused;
  for (const Call& c : report.calls)
    if (!c.fused) unfused.push_back(&c);
  std::stable_sort(unfused.begin(), unfused.end(),
                   [](const Call* a, const Call* b) { return a->device_time_us > b->device_time_us; });
  return unfused;
}

ActivationRow activation_row(const Report& report, const Layer& layer) {
  ActivationRow row;
  row.layer = &layer;
  row.first = first_call_of(report.calls, layer);
  for (int64_t id : layer.call_ids) {
    if (id < 0 || static_cast<size_t>(id) >= report.calls.size()) continue;
    const Call& c = report.calls[static_cast<size_t>(id)];
    row.calls.push_back(&c);
    row.cls = worse_backend_class(row.cls, backend_class_of(c));
    if (row.module.empty()) row.module = module_of(c);
  }
  if (!layer.module.empty()) row.module = layer.module;
  return row;
}

ExplanationRow explanation_row(const Call& call) {
  ExplanationRow row{&call, {}};
  const Explanation& e = *call.explanation;
  for (const BackendVerdict& v : e.backends)
    if (!v.eligible && !v.failed.empty() && v.backend != e.predicted_backend)
      row.rejected.emplace_back(v.backend, v.failed.front().value);
  return row;
}

// What two rows must share to be one group: everything an output prints of them, the gain
// rounded as every output prints it.
auto group_key(const ExplanationRow& row) {
  const Explanation& e = *row.call->explanation;
  const bool gain = e.expected_speedup > 0;
  return std::make_tuple(row.call->backend, e.predicted_backend, row.rejected, e.consistency_note, e.fix,
                         gain ? fmt::format("{:.1f}/{:.1f}", e.expected_speedup, e.expected_memory_ratio) : "",
                         gain ? e.gain_basis : "");
}

std::vector<ExplanationGroup> group_explanations(const std::vector<ExplanationRow>& rows) {
  std::vector<ExplanationGroup> groups;
  for (const ExplanationRow& row : rows) {
    const auto key = group_key(row);
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const ExplanationGroup& g) { return group_key(rows[g.first]) == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), ExplanationGroup{static_cast<size_t>(&row - rows.data()), {}});
    it->layers.push_back(row.call->layer);
  }
  return groups;
}

}  // namespace

std::string module_of(const Call& call) {
  if (!call.module.empty()) return call.module;
  if (call.capture && !call.capture->module_path.empty()) return call.capture->module_path;
  return "";
}

bool device_time_unknown(const Summary& s) { return s.call_count > 0 && s.unknown_time_call_count == s.call_count; }

ReportView make_report_view(const Report& report) {
  ReportView view;
  view.report = &report;
  view.peak_bytes = report_peak_bytes(report);
  view.unfused = unfused_slowest_first(report);
  for (const Layer& layer : report.layers) view.layers.push_back(activation_row(report, layer));
  for (const Call& c : report.calls)
    if (c.explanation && c.direction != direction::kBackward) view.explanations.push_back(explanation_row(c));
  view.explanation_groups = group_explanations(view.explanations);
  const auto explained = std::find_if(report.calls.begin(), report.calls.end(),
                                      [](const Call& c) { return c.explanation.has_value(); });
  if (explained != report.calls.end()) view.assumptions = explained->explanation->assumptions;
  view.cost_tables = cost_tables(report);
  if (report.heads) view.heads = heads_table(*report.heads);
  return view;
}

std::vector<ReportView> views_of(const std::vector<Report>& reports) {
  std::vector<ReportView> views;
  views.reserve(reports.size());
  for (const Report& r : reports) views.push_back(make_report_view(r));
  return views;
}

}  // namespace attnprof
