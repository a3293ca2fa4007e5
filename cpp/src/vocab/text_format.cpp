#include "attnprof/text_format.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <span>

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

// '\\' first among the backslashed ones: a text ending in a backslash would otherwise escape
// the cell's closing '|'. '<' '>' '&' become entities, which GitHub shows as the character.
std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '\\': case '|': case '`': case '*': case '_': case '[': case ']':
        out += '\\';
        out += c;
        break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': case '\r': out += ' '; break;
      default: out += c;
    }
  }
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

// One unit of a ladder: a value is shown in the first unit (from the smallest) in which it
// stays below `next_at` once rounded to `digits` decimals, so 1023.96 B is "1.0 KiB", never
// "1024 B", and 999.96 us is "1.00 ms".
struct Unit {
  const char* name;
  double size;     // in the quantity's base unit
  int digits;
  double next_at;  // the rounded value at which the next unit takes over
};

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr Unit kByteUnits[] = {{"B", 1, 0, 1024},
                               {"KiB", 1024.0, 1, 1024},
                               {"MiB", 1024.0 * 1024, 1, 1024},
                               {"GiB", 1024.0 * 1024 * 1024, 2, 1024},
                               {"TiB", 1024.0 * 1024 * 1024 * 1024, 2, kNever}};
constexpr Unit kTimeUnits[] = {{"ns", 1e-3, 0, 1000}, {"us", 1, 1, 1000},       {"ms", 1e3, 2, 1000},
                               {"s", 1e6, 2, 3600},   {"h", 3600e6, 2, kNever}};
constexpr Unit kFlopsUnits[] = {{"MFLOP/s", 1e-6, 1, 1000}, {"GFLOP/s", 1e-3, 1, 1000}, {"TFLOP/s", 1, 1, kNever}};

double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

// `zero_unit`: the unit an exact zero is shown in (a zero duration reads "0.0 us", not "0 ns").
std::string ladder_text(double value, std::span<const Unit> units, size_t zero_unit) {
  if (!std::isfinite(value)) return "unknown";
  const double magnitude = std::abs(value);
  size_t i = magnitude == 0 ? zero_unit : 0;
  while (i + 1 < units.size() && rounded(magnitude / units[i].size, units[i].digits) >= units[i].next_at) ++i;
  const Unit& u = units[i];
  return fmt::format("{:.{}f} {}", value / u.size, u.digits, u.name);
}

}  // namespace

std::string bytes_text(double bytes) { return ladder_text(bytes, kByteUnits, 0); }

std::string time_text(double us) { return ladder_text(us, kTimeUnits, 1); }

std::string flops_text(double tflops) { return ladder_text(tflops, kFlopsUnits, 2); }

std::string percent_text(double fraction) {
  if (!std::isfinite(fraction)) return "unknown";
  return fmt::format("{:.1f}%", 100 * fraction);
}

}  // namespace attnprof
