// The dashboard's view model: what the page draws, computed from Reports in C++ so the
// inline script only lays it out (no analysis logic in JavaScript).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnprof/report.h"
#include "attnprof/report_view.h"

namespace attnprof::render {

// One run: summary, activation map, module tree, optional sections present in the Report.
nlohmann::json run_view(const ReportView& view, const std::string& label);
nlohmann::json run_view(const Report& report, const std::string& label);

// Several runs: per-run totals and per-layer times against the first run.
nlohmann::json comparison_view(const std::vector<ReportView>& views,
                               const std::vector<std::string>& labels);

// The spelling rules of each quantity (text_format.h's quantity_spellings) as the page's
// formatters read them (dashboard/format.js): {"unknown", "quantities": {name: {"scale",
// "zero_unit", "units": [{"suffix", "size", "digits", "next_at" (not on the last unit)}]}}}.
nlohmann::json format_spec_view();

}  // namespace attnprof::render
