// attnprof.verify's engine: which fixes a Report's findings call for (plan_fixes), and what the
// measurements of one applied fix say (judge_fix). Applying a fix and timing it happen in the
// user's process (python/attnprof/verify.py); nothing here runs a model. docs/verify.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof::verify {

// One fix to try: the finding it answers and what to change.
struct FixPlan {
  std::string fix;            // fix::k* (vocabulary.h)
  std::string finding_rule;
  std::vector<int64_t> layers;
  double predicted_speedup = 0;  // the finding's expected gain
  std::string manual;         // fix::kManual: what to do by hand (the finding's own advice)
  // What a saved gain of this fix is matched on (rules::MeasuredGain): the backend and dtype of
  // the finding's forward calls ("" when they differ), their longest query, the Report's device.
  std::string from_backend;
  std::string dtype;
  int64_t seq_len = 0;
  std::string device;
};

// The fixes a Report's findings call for, one per finding that names something to change, in
// the findings' order; a finding no automatic fix answers gets fix::kManual with its advice.
std::vector<FixPlan> plan_fixes(const Report& report);

// What verify.py measured for one fix.
struct FixMeasurement {
  FixPlan plan;
  bool applied = false;
  std::string not_applied_reason;   // why the fix could not be applied ("" when applied)
  std::vector<double> baseline_ms;  // paired: baseline_ms[i] and fixed_ms[i] ran back to back
  std::vector<double> fixed_ms;
  int64_t peak_bytes_before = 0;
  int64_t peak_bytes_after = 0;
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  std::string dtype;                // the outputs' dtype (Report spelling, "fp32")
  std::vector<std::string> backends_before;
  std::vector<std::string> backends_after;
  std::vector<std::string> kernels_before;
  std::vector<std::string> kernels_after;
};

// The verdict of one measurement (verdict::k*): not_applicable when not applied, or applied to
// change the backend while the same backends ran; changes_results beyond the dtype's
// tolerance; confirmed when the speed-up's 95% interval lies above 1; else no_gain.
FixVerification judge_fix(const FixMeasurement& m);

// The 95% interval of median(baseline)/median(fixed) over `resamples` paired bootstrap
// resamples of the pairs, from a fixed seed (the same measurements give the same interval).
std::vector<double> speedup_interval(const std::vector<double>& baseline_ms, const std::vector<double>& fixed_ms,
                                     int resamples = 2000);

// JSON forms for the binding.
std::string plans_to_json(const std::vector<FixPlan>& plans);
Result<FixMeasurement> measurement_from_json(std::string_view text);

}  // namespace attnprof::verify
