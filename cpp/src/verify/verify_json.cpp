// FixPlan and FixMeasurement <-> JSON, the form verify.py exchanges with the engine.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include "attnprof/verify.h"

namespace attnprof::verify {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FixPlan, fix, finding_rule, layers, predicted_speedup, manual,
                                                from_backend, dtype, seq_len, device)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FixMeasurement, plan, applied, not_applied_reason, baseline_ms,
                                                fixed_ms, peak_bytes_before, peak_bytes_after, max_abs_diff,
                                                max_rel_diff, dtype, backends_before, backends_after,
                                                kernels_before, kernels_after)

std::string plans_to_json(const std::vector<FixPlan>& plans) { return nlohmann::json(plans).dump(); }

Result<FixMeasurement> measurement_from_json(std::string_view text) {
  auto parsed = parse_json_input(text, "", "fix measurement");
  if (!parsed) return parsed.error();
  try {
    FixMeasurement m = parsed->get<FixMeasurement>();
    if (m.baseline_ms.size() != m.fixed_ms.size())
      return make_error(ErrorCode::kMalformedJson, "fix measurement: baseline_ms and fixed_ms are not paired (different lengths)");
    return m;
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::kMalformedJson, "fix measurement has a bad " + json_error_text(e));
  }
}

}  // namespace attnprof::verify
