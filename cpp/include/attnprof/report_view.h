// The ReportView: every fact the outputs show that is not a field of the Report, computed once
// from the Report so that text, Markdown, HTML, TensorBoard and the annotated trace only format.
// A view points into its Report: keep the Report alive (and unchanged) while the view is used.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attnprof/table.h"
#include "attnprof/call_facts.h"
#include "attnprof/report.h"

namespace attnprof {

// One row of the activation map: a Layer of the Report (time, backends, fused share come from
// it, as attention's build_layers computed them) and the calls it holds.
struct ActivationRow {
  const Layer* layer = nullptr;
  const Call* first = nullptr;     // the layer's first call (library, shape, kernels shown for it); null if none
  std::vector<const Call*> calls;  // the layer's calls, in call order
  std::string module;              // Layer::module, else the first call's module path from the live capture
  std::string cls;                 // the slowest backend class among its calls (backend_class_of)
};

// Why one forward call ran its backend: the rules' verdict with the backends they rejected.
struct ExplanationRow {
  const Call* call = nullptr;  // has an explanation; direction is not "backward"
  // Backends the rules found not eligible (other than the predicted one), each with the value
  // that failed its first rule.
  std::vector<std::pair<std::string, std::string>> rejected;
};

// Forward calls whose explanations say the same thing (same backend, verdict, rejections, fix
// and gain as printed, to 0.1x), with the layers they are in.
struct ExplanationGroup {
  size_t first = 0;             // index of its first row in ReportView::explanations
  std::vector<int64_t> layers;  // one entry per call, in call order
};

// A cost section as a table (roofline/memory per layer, scaling, allocator replay, advice,
// what-if); terminal text and Markdown lay the same table out.
using CostTable = Table;

struct ReportView {
  const Report* report = nullptr;
  int64_t peak_bytes = -1;                          // report_peak_bytes (peak_memory.h)
  std::vector<const Call*> unfused;                 // unfused calls, slowest first (stable)
  std::vector<ActivationRow> layers;                // one per Report layer, in layer order
  std::vector<ExplanationRow> explanations;         // forward calls with an explanation, in call order
  std::vector<ExplanationGroup> explanation_groups; // the rows grouped, in first-seen order
  std::vector<std::string> assumptions;             // the rules' assumptions (first explained call's)
  std::vector<CostTable> cost_tables;               // "" sections are left out
  Table heads;                                      // per-head statistics (heads_table); no rows without them
};

ReportView make_report_view(const Report& report);
// The views of several Reports, in order (views[i] points into reports[i]).
std::vector<ReportView> views_of(const std::vector<Report>& reports);

// No call's kernels were recorded (a graph capture): the run's time and fused shares are
// unknown, not 0. False for a run without calls.
bool device_time_unknown(const Summary& summary);

// The cost sections of a Report as tables (part of the view; `scale`, `predict` and `whatif`
// print these alone).
std::vector<CostTable> cost_tables(const Report& report);
// The spread per shape group alone (one table, none without groups): the dashboard's `spread`.
std::vector<CostTable> spread_tables(const Report& report);

// The module path of a call: the trace's, else the live capture's; "" when neither knows it.
std::string module_of(const Call& call);

}  // namespace attnprof
