// --gains FILE: gains attnprof.verify measured on the user's own model (docs/verify.md,
// "Saved gains"); the rules prefer them to the fixture table where they match.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "attnprof/analyze.h"
#include "attnprof/io.h"

namespace attnprof {
namespace rules {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MeasuredGain, fix, from_backend, dtype, device, seq_len, speedup,
                                                speedup_ci, memory_ratio, model)
}  // namespace rules

Result<std::vector<rules::MeasuredGain>> parse_measured_gains(std::string_view text, const std::string& path) {
  auto doc = parse_json_input(text, path, "gains file");
  if (!doc) return doc.error();
  auto bad = [&](std::string message) { return make_error(ErrorCode::kInvalidArgument, path + ": " + message); };
  if (!doc->is_object() || !doc->contains("gains") || !(*doc)["gains"].is_array())
    return bad("a gains file is a JSON object {\"gains\": [...]} as attnprof.verify(gains=FILE) writes it");
  std::vector<rules::MeasuredGain> gains;
  size_t index = 0;
  for (const nlohmann::json& entry : (*doc)["gains"]) {
    try {
      rules::MeasuredGain g = entry.get<rules::MeasuredGain>();
      if (!fix_word(g.fix)) return bad(fmt::format("gains[{}]: unknown fix \"{}\"", index, g.fix));
      if (!std::isfinite(g.speedup) || g.speedup <= 0 || g.seq_len <= 0)
        return bad(fmt::format("gains[{}]: speedup and seq_len must be positive", index));
      gains.push_back(std::move(g));
    } catch (const nlohmann::json::exception& e) {
      return bad(fmt::format("gains[{}] has a bad {}", index, json_error_text(e)));
    }
    ++index;
  }
  return gains;
}

Result<std::vector<rules::MeasuredGain>> load_measured_gains(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_measured_gains(*text, path);
}

}  // namespace attnprof
