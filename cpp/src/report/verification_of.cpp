// Which verified fix answers a finding, and the mark its advice carries in every output.
#include <fmt/format.h>

#include "attnprof/text_format.h"
#include "attnprof/report.h"

namespace attnprof {

const FixVerification* verification_of(const Report& report, const Finding& finding) {
  if (!report.verification || finding.rule.empty()) return nullptr;
  for (const FixVerification& v : report.verification->fixes)
    if (v.finding_rule == finding.rule && v.layers == finding.layers) return &v;
  return nullptr;
}

std::string gain_device(const SourceInfo& source, bool has_gpu) {
  if (!source.device_name.empty()) return source.device_name;
  if (!source.arch.empty()) return source.arch;
  return has_gpu ? "" : "cpu";
}

std::string verification_mark(const FixVerification& v) {
  const std::string ci = v.speedup_ci.size() == 2 ? " (" + ratio_text(v.speedup_ci[0]) + "-" + ratio_text(v.speedup_ci[1]) + ")" : "";
  if (v.verdict == verdict::kConfirmed)
    return fmt::format("verified on this model: {} faster{}, same results", ratio_text(v.speedup), ci);
  if (v.verdict == verdict::kChangesResults)
    return fmt::format("verified on this model: changes results (max relative difference {:.2g} > {:.2g} for {}), "
                       "not recommended", v.max_rel_diff, v.tolerance, v.dtype);
  if (v.verdict == verdict::kNoGain) return fmt::format("verified on this model: no gain ({}{})", ratio_text(v.speedup), ci);
  if (v.verdict == verdict::kNotApplicable) return "not verified: " + v.reason;
  return "";
}

}  // namespace attnprof
