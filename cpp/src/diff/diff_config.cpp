// Thresholds of `attnprof diff`: percentages on the command line and in a JSON config file.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <charconv>
#include <cmath>

#include "attnprof/diff.h"
#include "attnprof/io.h"

namespace attnprof {

Result<double> parse_percent(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '%')) text.remove_suffix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0)
    return make_error(ErrorCode::kInvalidArgument,
                      "not a percentage: '" + std::string(text) + "' (write e.g. 10% or 10)");
  return value / 100.0;
}

Result<DiffThresholds> load_diff_config(const std::string& path, const DiffThresholds& defaults) {
  Result<std::string> text = read_text_file(path);
  if (!text) return text.error();
  auto parsed = parse_json_input(*text, path, "diff config");
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return make_error(ErrorCode::kMalformedJson, path + ": diff config is not a JSON object");
  DiffThresholds t = defaults;
  for (const auto& [key, value] : j.items()) {
    double* target = key == "max_fused_drop"        ? &t.max_fused_drop_pp
                     : key == "max_time_increase"   ? &t.max_time_increase
                     : key == "max_memory_increase" ? &t.max_memory_increase
                                                    : nullptr;
    if (!target)
      return make_error(ErrorCode::kInvalidArgument, path + ": unknown key '" + key +
                                                         "' (known: max_fused_drop, max_time_increase, max_memory_increase)");
    const std::string as_text = value.is_string() ? value.get<std::string>()
                                : value.is_number() ? value.dump()
                                                    : std::string("?");
    Result<double> fraction = parse_percent(as_text);
    if (!fraction) return make_error(ErrorCode::kInvalidArgument, path + ": " + key + ": " + fraction.error().message);
    // The fused-share limit is in percentage points, the others are fractions.
    *target = target == &t.max_fused_drop_pp ? *fraction * 100 : *fraction;
  }
  return t;
}

}  // namespace attnprof
