// Rendering of the cost sections (roofline/memory per layer, scaling, advice, what-if) as
// terminal text or Markdown. Pure functions Report -> text; the general text/markdown
// renderers call these for the sections, and so do `attnprof scale|predict|whatif`.
#pragma once

#include <string>
#include <vector>

#include "attnprof/report.h"
#include "attnprof/table.h"

namespace attnprof {

using CostTable = Table;  // also in report_view.h

// Empty string when the report has none of the cost data.
std::string render_cost_text(const Report& report);
std::string render_cost_markdown(const Report& report);

// The tables of a ReportView (ReportView::cost_tables).
std::string render_cost_text(const std::vector<CostTable>& tables);
std::string render_cost_markdown(const std::vector<CostTable>& tables);

}  // namespace attnprof
