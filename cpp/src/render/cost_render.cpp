// Cost tables (cost_tables.cpp, part of the ReportView) laid out as terminal text or Markdown.
#include "attnprof/cost_render.h"
#include "attnprof/report_view.h"
#include "attnprof/text_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace attnprof {
namespace {

using Row = std::vector<std::string>;

std::string as_text(const CostTable& t) {
  std::vector<size_t> width(t.header.size(), 0);
  auto widen = [&](const Row& r) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  widen(t.header);
  for (const auto& r : t.rows) widen(r);
  std::string out = t.title + "\n";
  auto line = [&](const Row& r) {
    std::string s = " ";
    for (size_t i = 0; i < r.size(); ++i) s += fmt::format(" {:<{}}", r[i], width[i]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(t.header);
  for (const auto& r : t.rows) out += line(r);
  for (const auto& n : t.notes) out += "  " + n + "\n";
  return out + "\n";
}

std::string as_markdown(const CostTable& t) {
  std::string out = "### " + t.title + "\n\n" + table_markdown(t);
  for (const auto& n : t.notes) out += "\n" + markdown_escape(n) + "\n";
  return out + "\n";
}

}  // namespace

std::string render_cost_text(const std::vector<CostTable>& tables) {
  std::string out;
  for (const auto& t : tables) out += as_text(t);
  return terminal_escape(out);
}

std::string render_cost_markdown(const std::vector<CostTable>& tables) {
  std::string out;
  for (const auto& t : tables) out += as_markdown(t);
  return out;
}

std::string render_cost_text(const Report& report) { return render_cost_text(cost_tables(report)); }

std::string render_cost_markdown(const Report& report) { return render_cost_markdown(cost_tables(report)); }

}  // namespace attnprof
