// Cost tables (cost_tables.cpp, part of the ReportView) laid out as terminal text or Markdown.
#include "attnprof/cost_render.h"
#include "attnprof/report_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// Markdown cells: pipes and newlines would break the table.
std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += "<br>";
    else out += c;
  }
  return out;
}

std::string as_markdown(const CostTable& t) {
  std::string out = "### " + t.title + "\n\n|";
  for (const auto& h : t.header) out += " " + cell(h) + " |";
  out += "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (const auto& c : r) out += " " + cell(c) + " |";
    out += "\n";
  }
  for (const auto& n : t.notes) out += "\n" + cell(n) + "\n";
  return out + "\n";
}

}  // namespace

std::string format_bytes(double bytes) {
  const double a = std::abs(bytes);
  if (a >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (a >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  if (a >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

std::string render_cost_text(const std::vector<CostTable>& tables) {
  std::string out;
  for (const auto& t : tables) out += as_text(t);
  return out;
}

std::string render_cost_markdown(const std::vector<CostTable>& tables) {
  std::string out;
  for (const auto& t : tables) out += as_markdown(t);
  return out;
}

std::string render_cost_text(const Report& report) { return render_cost_text(cost_tables(report)); }

std::string render_cost_markdown(const Report& report) { return render_cost_markdown(cost_tables(report)); }

}  // namespace attnprof
