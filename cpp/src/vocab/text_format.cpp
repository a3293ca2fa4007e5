#include "attnprof/text_format.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "attnprof/utf8.h"

namespace attnprof {

std::string html_escape(std::string_view text) {
  const std::string clean = sanitize_utf8(text);
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// One character of a Markdown cell or line; `at_line_start`: only spaces came before it.
// '\\' is among the backslashed ones: a text ending in a backslash would otherwise escape the
// cell's closing '|'. '<' '&' become entities, which GitHub shows as the character, and '>'
// too where it would open a block quote; inside a line it is text.
void append_markdown_char(std::string& out, char c, bool at_line_start) {
  switch (c) {
    case '\\': case '|': case '`': case '*': case '_': case '[': case ']':
      out += '\\';
      out += c;
      break;
    case '<': out += "&lt;"; break;
    case '>': out += at_line_start ? "&gt;" : ">"; break;
    case '&': out += "&amp;"; break;
    case '\n': case '\r': out += ' '; break;
    default: out += c;
  }
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const size_t first_mark = text.find_first_not_of(' ');
  for (size_t i = 0; i < text.size(); ++i) append_markdown_char(out, text[i], i <= first_mark);
  return out;
}

// CommonMark 0.31, "Code spans": the fence is a run of backticks no run inside matches, and
// one space is stripped from each end when both are spaces, so a text that begins or ends
// with a backtick is padded by one.
std::string markdown_code(std::string_view text) {
  std::string body;
  size_t run = 0, longest = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    body += (c == '\n' || c == '\r') ? ' ' : c;
  }
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  const std::string fence(longest + 1, '`');
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string terminal_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {  // U+0080..U+009F in UTF-8
      out += fmt::format("\\u{:04x}", next);
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr UnitSpelling kByteUnits[] = {{" B", 1, 0, 1024},
                                       {" KiB", 1024.0, 1, 1024},
                                       {" MiB", 1024.0 * 1024, 1, 1024},
                                       {" GiB", 1024.0 * 1024 * 1024, 2, 1024},
                                       {" TiB", 1024.0 * 1024 * 1024 * 1024, 2, kNever}};
constexpr UnitSpelling kTimeUnits[] = {{" ns", 1e-3, 0, 1000}, {" us", 1, 1, 1000}, {" ms", 1e3, 2, 1000},
                                       {" s", 1e6, 2, 3600},   {" h", 3600e6, 2, kNever}};
constexpr UnitSpelling kFlopsUnits[] = {
    {" MFLOP/s", 1e-6, 1, 1000}, {" GFLOP/s", 1e-3, 1, 1000}, {" TFLOP/s", 1, 1, kNever}};
constexpr UnitSpelling kFlopCountUnits[] = {{" FLOP", 1, 0, 1e6},
                                            {" MFLOP", 1e6, 2, 1000},
                                            {" GFLOP", 1e9, 2, 1000},
                                            {" TFLOP", 1e12, 2, 1000},
                                            {" PFLOP", 1e15, 2, kNever}};
// A fraction times 100 (not over 0.01: 100 * 0.123 is the double nearest 12.3, 0.123 / 0.01 is not).
constexpr UnitSpelling kPercentUnits[] = {{"%", 1, 1, kNever}};
// A measured ratio (a speedup timed on the model, a rank over the median) with two decimals; a
// modelled one (an expected speedup) with one, since the model is not that precise.
constexpr UnitSpelling kRatioUnits[] = {{"x", 1, 2, kNever}};
constexpr UnitSpelling kEstimatedRatioUnits[] = {{"x", 1, 1, kNever}};

constexpr QuantitySpelling kSpellings[] = {{Quantity::kBytes, "bytes", 1, kByteUnits, 0},
                                           {Quantity::kTime, "time", 1, kTimeUnits, 1},
                                           {Quantity::kFlops, "flops", 1, kFlopsUnits, 2},
                                           {Quantity::kFlopCount, "flop_count", 1, kFlopCountUnits, 0},
                                           {Quantity::kPercent, "percent", 100, kPercentUnits, 0},
                                           {Quantity::kRatio, "ratio", 1, kRatioUnits, 0},
                                           {Quantity::kEstimatedRatio, "estimated_ratio", 1, kEstimatedRatioUnits, 0, "~"}};

double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

}  // namespace

std::span<const QuantitySpelling> quantity_spellings() { return kSpellings; }

std::string quantity_text(Quantity quantity, double value) {
  if (!std::isfinite(value)) return std::string(kUnknownQuantityText);
  const QuantitySpelling& q = kSpellings[static_cast<size_t>(quantity)];
  const double v = value * q.scale;
  const double magnitude = std::abs(v);
  size_t i = magnitude == 0 ? q.zero_unit : 0;
  while (i + 1 < q.units.size() && rounded(magnitude / q.units[i].size, q.units[i].digits) >= q.units[i].next_at) ++i;
  const UnitSpelling& u = q.units[i];
  return fmt::format("{}{:.{}f}{}", q.prefix, v / u.size, u.digits, u.suffix);
}

std::string bytes_text(double bytes) { return quantity_text(Quantity::kBytes, bytes); }

std::string time_text(double us) { return quantity_text(Quantity::kTime, us); }

std::string flops_text(double tflops) { return quantity_text(Quantity::kFlops, tflops); }

std::string flop_count_text(double flops) { return quantity_text(Quantity::kFlopCount, flops); }

std::string percent_text(double fraction) { return quantity_text(Quantity::kPercent, fraction); }

std::string ratio_text(double ratio) { return quantity_text(Quantity::kRatio, ratio); }

std::string estimated_ratio_text(double ratio) { return quantity_text(Quantity::kEstimatedRatio, ratio); }

}  // namespace attnprof
