// The verification section as plain rows, for the text and Markdown reports (docs/verify.md).
#include <fmt/format.h>

#include "attnprof/cost_render.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/render.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

std::string backends_text(const std::vector<std::string>& backends) {
  return backends.empty() ? "-" : fmt::format("{}", fmt::join(backends, "+"));
}

std::string measured_text(const FixVerification& f) {
  if (f.pairs == 0) return "-";
  const std::string ci =
      f.speedup_ci.size() == 2 ? " (" + ratio_text(f.speedup_ci[0]) + "-" + ratio_text(f.speedup_ci[1]) + ")" : "";
  return ratio_text(f.speedup) + ci;
}

}  // namespace

std::string verification_line(const Report& report) {
  if (!report.verification) return "";
  const VerificationSection& v = *report.verification;
  std::string load = v.load_average.size() == 3
                         ? fmt::format(", load average {:.2f} {:.2f} {:.2f}", v.load_average[0], v.load_average[1],
                                       v.load_average[2])
                         : "";
  return fmt::format("fixes applied to {} on {} and timed against it in alternating pairs ({}, {} warm-up runs each{})",
                     v.model.empty() ? "the model" : v.model, v.device, v.timer, v.warmup, load);
}

std::vector<std::string> verification_columns() {
  return {"fix", "where", "verdict", "measured speed-up (95% CI)", "predicted", "baseline ms", "fixed ms",
          "max rel diff", "backends", "peak memory", "why"};
}

std::vector<std::vector<std::string>> verification_rows(const Report& report) {
  std::vector<std::vector<std::string>> rows;
  if (!report.verification) return rows;
  for (const FixVerification& f : report.verification->fixes) {
    const bool measured = f.pairs > 0;
    rows.push_back({f.fix, f.layers.empty() ? "-" : format_layer_ranges(f.layers), f.verdict, measured_text(f),
                    f.predicted_speedup > 0 ? estimated_ratio_text(f.predicted_speedup) : "not estimated",
                    measured ? fmt::format("{:.2f}", f.baseline_ms) : "-",
                    measured ? fmt::format("{:.2f}", f.fixed_ms) : "-",
                    measured ? fmt::format("{:.2g} (tol {:.0g})", f.max_rel_diff, f.tolerance) : "-",
                    measured ? backends_text(f.backends_before) + " -> " + backends_text(f.backends_after) : "-",
                    measured && (f.peak_bytes_before > 0 || f.peak_bytes_after > 0)
                        ? bytes_text(static_cast<double>(f.peak_bytes_before)) + " -> " +
                              bytes_text(static_cast<double>(f.peak_bytes_after))
                        : "-",
                    f.manual.empty() ? f.reason : f.reason + "; by hand: " + f.manual});
  }
  return rows;
}

}  // namespace attnprof
