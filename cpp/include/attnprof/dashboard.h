// The HTML dashboard: one self-contained file (inline CSS/JS/SVG, no network) rendering one
// or several Reports. Pure function Report -> bytes; it never opens a trace.
//
// Every string that came from a trace travels as JSON inside <script type="application/json">
// (with '<', '>', '&', U+2028 and U+2029 written as \u escapes) and is put on the page by the
// inline script with textContent / setAttribute only, so kernel and module names cannot
// inject markup or script. Invalid UTF-8 is replaced by U+FFFD.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/call_facts.h"  // backend_class_of: how the page colours a call
#include "attnprof/report.h"

namespace attnprof {

// Components drawn as activation-map columns, in this order.
const std::vector<std::string>& activation_map_components();

// The whole dashboard. With several Reports (a sweep, before/after) it adds a multi-run
// view and a run selector; the first Report is the baseline of the comparison table.
// `labels` names the runs (defaults to the Reports' first source file).
std::string render_html(const std::vector<Report>& reports,
                        const std::vector<std::string>& labels = {});
struct ReportView;  // report_view.h: the same page from views already computed
std::string render_html(const std::vector<ReportView>& views, const std::vector<std::string>& labels = {});

// The dashboard's sections, by their <section id>, in page order. A command draws the ones
// it produces; `analyze` draws every one, and one with nothing to show says why in a line.
std::span<const char* const> dashboard_sections();

struct DashboardOptions {
  std::vector<std::string> labels;    // run names (default: each Report's first source file)
  std::vector<std::string> sections;  // ids from dashboard_sections(); empty = all of them
};
std::string render_html(const std::vector<Report>& reports, const DashboardOptions& options);
std::string render_html(const std::vector<ReportView>& views, const DashboardOptions& options);

// The dashboard's stylesheet, for other pages attnprof writes (document.h's markdown_page).
std::string_view dashboard_stylesheet();

}  // namespace attnprof
