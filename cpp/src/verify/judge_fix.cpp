// One applied fix's measurements -> its verdict (docs/verify.md, "Verdicts").
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "attnprof/text_format.h"
#include "attnprof/verify.h"

namespace attnprof::verify {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double percentile(std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::string joined(const std::vector<std::string>& words) {
  return words.empty() ? std::string("none") : fmt::format("{}", fmt::join(words, "+"));
}

}  // namespace

std::vector<double> speedup_interval(const std::vector<double>& baseline_ms, const std::vector<double>& fixed_ms,
                                     int resamples) {
  const size_t n = std::min(baseline_ms.size(), fixed_ms.size());
  if (n < 2 || resamples < 1) return {};
  // A fixed seed: the interval is a property of the measurements, not of the run that judged them.
  std::mt19937_64 rng(0x61747470726f66ULL);
  std::uniform_int_distribution<size_t> pick(0, n - 1);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> a(n), b(n);
  for (int r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const size_t k = pick(rng);  // a pair stays a pair: both sides saw the same moment of the machine
      a[i] = baseline_ms[k];
      b[i] = fixed_ms[k];
    }
    const double fixed = median(b);
    if (fixed > 0) ratios.push_back(median(a) / fixed);
  }
  if (ratios.empty()) return {};
  std::sort(ratios.begin(), ratios.end());
  return {percentile(ratios, 0.025), percentile(ratios, 0.975)};
}

namespace {

// What the measurement recorded, copied into the verdict before it is judged.
FixVerification measured_facts(const FixMeasurement& m) {
  FixVerification v;
  v.fix = m.plan.fix;
  if (const FixWord* w = fix_word(m.plan.fix)) v.change = std::string(w->change);
  v.finding_rule = m.plan.finding_rule;
  v.layers = m.plan.layers;
  v.predicted_speedup = m.plan.predicted_speedup;
  v.applied = m.applied;
  // The Report's spelling ("fp32") of the outputs' dtype, as verify.py or a Report spells it.
  const std::string_view spelled = dtype_of_spelling(m.dtype);
  v.dtype = spelled.empty() ? m.dtype : std::string(spelled);
  const DtypeWord* dtype = dtype_word(v.dtype);
  v.tolerance = dtype ? dtype->verify_tolerance : dtype_word("fp32")->verify_tolerance;
  v.backends_before = m.backends_before;
  v.backends_after = m.backends_after;
  v.kernels_before = m.kernels_before;
  v.kernels_after = m.kernels_after;
  v.peak_bytes_before = m.peak_bytes_before;
  v.peak_bytes_after = m.peak_bytes_after;
  v.max_abs_diff = m.max_abs_diff;
  v.max_rel_diff = m.max_rel_diff;
  return v;
}

// Confirmed when the speedup's 95% interval lies above 1, else no gain.
void judge_speedup(FixVerification& v) {
  if (v.speedup_ci.size() == 2 && v.speedup_ci[0] > 1.0) {
    v.verdict = verdict::kConfirmed;
    v.reason = fmt::format("{} faster, the 95% interval {}-{} lies above 1; outputs within {:.3g}", ratio_text(v.speedup),
                           ratio_text(v.speedup_ci[0]), ratio_text(v.speedup_ci[1]), v.tolerance);
    return;
  }
  v.verdict = verdict::kNoGain;
  v.reason = v.speedup_ci.size() == 2
                 ? fmt::format("{}, but the 95% interval {}-{} reaches 1 or below", ratio_text(v.speedup),
                               ratio_text(v.speedup_ci[0]), ratio_text(v.speedup_ci[1]))
                 : fmt::format("{} from {} pair(s): too few for an interval", ratio_text(v.speedup), v.pairs);
}

}  // namespace

// In order: not applicable (a manual fix, one not applied, or one the model undid), changes the
// results (outputs beyond the dtype's tolerance), then confirmed or no gain by the speedup.
FixVerification judge_fix(const FixMeasurement& m) {
  FixVerification v = measured_facts(m);
  if (m.plan.fix == fix::kManual || !m.applied) {
    v.verdict = verdict::kNotApplicable;
    v.reason = m.plan.fix == fix::kManual ? "the fix changes the model's code or inputs, which verify does not do"
                                          : m.not_applied_reason;
    v.manual = m.plan.manual;
    return v;
  }
  v.pairs = static_cast<int64_t>(std::min(m.baseline_ms.size(), m.fixed_ms.size()));
  v.baseline_ms = median(m.baseline_ms);
  v.fixed_ms = median(m.fixed_ms);
  v.speedup = v.fixed_ms > 0 ? v.baseline_ms / v.fixed_ms : 0;
  v.speedup_ci = speedup_interval(m.baseline_ms, m.fixed_ms);

  const FixWord* word = fix_word(m.plan.fix);
  if (word && word->changes_backend && m.backends_after == m.backends_before) {
    v.verdict = verdict::kNotApplicable;
    v.reason = fmt::format("applied, but the same backends ran ({}): the model's own code sets them again "
                           "(an sdpa_kernel or attention implementation chosen inside its forward)",
                           joined(m.backends_after));
    return v;
  }
  if (v.max_rel_diff > v.tolerance) {
    v.verdict = verdict::kChangesResults;
    v.reason = fmt::format("outputs differ by {:.3g} relative (max abs {:.3g}), above the {} tolerance {:.3g}",
                           v.max_rel_diff, v.max_abs_diff, dtype_word(v.dtype) ? v.dtype : std::string("fp32"),
                           v.tolerance);
    return v;
  }
  judge_speedup(v);
  return v;
}

}  // namespace attnprof::verify
