// The verify stage: which fixes a Report's findings call for, and what measurements say.
#include <gtest/gtest.h>

#include <algorithm>

#include "attnprof/dashboard.h"
#include "attnprof/tensorboard.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/verify.h"

namespace attnprof::verify {
namespace {

Finding finding_of(const char* rule, std::vector<int64_t> layers, double gain = 0) {
  Finding f;
  f.severity = "high";
  f.title = std::string("about ") + rule;
  f.detail = std::string("do what ") + rule + " says";
  f.rule = rule;
  f.layers = std::move(layers);
  f.expected_gain = gain;
  return f;
}

FixMeasurement measured(const char* fix, std::vector<double> baseline, std::vector<double> fixed) {
  FixMeasurement m;
  m.plan.fix = fix;
  m.plan.finding_rule = finding::kEagerAttention;
  m.plan.layers = {0, 1};
  m.plan.predicted_speedup = 2.8;
  m.applied = true;
  m.baseline_ms = std::move(baseline);
  m.fixed_ms = std::move(fixed);
  m.dtype = "fp32";
  m.backends_before = {"eager"};
  m.backends_after = {"cpu_flash"};
  m.max_abs_diff = 1e-6;
  m.max_rel_diff = 2e-7;
  return m;
}

TEST(PlanFixes, MapsFindingRulesToFixesInFindingOrderAndSkipsReportOnlyFindings) {
  Report r;
  Call c;
  c.layer = 3;
  c.backend = "math";
  c.shape.Sq = 2048;
  c.shape.dtype = "bf16";
  r.calls.push_back(c);
  r.findings = {finding_of(finding::kEagerAttention, {0, 1}, 2.8), finding_of(finding::kRoofline, {}),
                finding_of(finding::kForcedBackend, {3}, 2.1), finding_of(finding::kCausalMask, {0}),
                finding_of("flash.dtype", {2}), finding_of(finding::kPaddingMask, {1})};
  const std::vector<FixPlan> plans = plan_fixes(r);
  ASSERT_EQ(plans.size(), 5u);
  EXPECT_EQ(plans[0].fix, fix::kUseSdpa);
  EXPECT_DOUBLE_EQ(plans[0].predicted_speedup, 2.8);
  EXPECT_EQ(plans[0].layers, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(plans[1].fix, fix::kUnforceBackend);
  EXPECT_EQ(backend_word(plans[1].from_backend)->sdp_backend, "MATH");
  // What a saved gain of it is matched on: the finding's calls and the Report's device.
  EXPECT_EQ(plans[1].from_backend, "math");
  EXPECT_EQ(plans[1].dtype, "bf16");
  EXPECT_EQ(plans[1].seq_len, 2048);
  EXPECT_EQ(plans[1].device, "cpu");
  EXPECT_EQ(plans[0].from_backend, "");  // no call of layers 0-1 in this Report
  EXPECT_EQ(plans[2].fix, fix::kIsCausal);
  EXPECT_EQ(plans[3].fix, fix::kAutocastBf16);
  EXPECT_EQ(plans[4].fix, fix::kManual);
  EXPECT_EQ(plans[4].manual, "do what heads.padding_mask says");
}

TEST(JudgeFix, ConsistentlyFasterWithEqualOutputsIsConfirmedWithTheIntervalAboveOne) {
  const FixVerification v = judge_fix(measured(fix::kUseSdpa, {10, 11, 10.5, 10.2, 10.8, 10.1}, {2, 2.1, 2.05, 2.2, 1.9, 2}));
  EXPECT_EQ(v.verdict, verdict::kConfirmed);
  EXPECT_EQ(v.pairs, 6);
  EXPECT_NEAR(v.baseline_ms, 10.35, 1e-9);
  EXPECT_NEAR(v.fixed_ms, 2.025, 1e-9);
  ASSERT_EQ(v.speedup_ci.size(), 2u);
  EXPECT_GT(v.speedup_ci[0], 1.0);
  EXPECT_LE(v.speedup_ci[0], v.speedup);
  EXPECT_GE(v.speedup_ci[1], v.speedup);
  EXPECT_DOUBLE_EQ(v.tolerance, 1e-3);  // fp32's
  EXPECT_DOUBLE_EQ(v.predicted_speedup, 2.8);
}

TEST(JudgeFix, TimesThatOverlapGiveNoGain) {
  const FixVerification v = judge_fix(measured(fix::kUseSdpa, {10, 12, 9, 11, 10, 12}, {11, 9, 12, 10, 11, 9}));
  EXPECT_EQ(v.verdict, verdict::kNoGain);
  ASSERT_EQ(v.speedup_ci.size(), 2u);
  EXPECT_LE(v.speedup_ci[0], 1.0);
}

TEST(JudgeFix, OutputsBeyondTheDtypeToleranceChangeResultsHoweverFast) {
  FixMeasurement m = measured(fix::kAutocastBf16, {10, 10, 10, 10}, {2, 2, 2, 2});
  m.max_rel_diff = 7e-3;  // a bf16 forward against fp32: above fp32's 1e-3
  EXPECT_EQ(judge_fix(m).verdict, verdict::kChangesResults);
  m.dtype = "bf16";  // within bf16's own tolerance
  EXPECT_EQ(judge_fix(m).verdict, verdict::kConfirmed);
}

TEST(JudgeFix, AFixNotAppliedOrUndoneByTheModelIsNotApplicableWithItsReason) {
  FixMeasurement m = measured(fix::kUnforceBackend, {10, 10, 10}, {10, 10, 10});
  m.backends_after = m.backends_before;  // the model forces the backend again inside its forward
  FixVerification v = judge_fix(m);
  EXPECT_EQ(v.verdict, verdict::kNotApplicable);
  EXPECT_NE(v.reason.find("same backends ran (eager)"), std::string::npos) << v.reason;

  FixMeasurement none = measured(fix::kUseSdpa, {}, {});
  none.applied = false;
  none.not_applied_reason = "the model has no attn_implementation";
  v = judge_fix(none);
  EXPECT_EQ(v.verdict, verdict::kNotApplicable);
  EXPECT_EQ(v.reason, "the model has no attn_implementation");
  EXPECT_EQ(v.pairs, 0);
}

TEST(SpeedupInterval, IsTheSameForTheSameMeasurementsAndEmptyBelowTwoPairs) {
  const std::vector<double> a{5, 6, 5.5, 7, 5.2}, b{2, 2.5, 2.2, 3, 2.1};
  EXPECT_EQ(speedup_interval(a, b), speedup_interval(a, b));
  EXPECT_TRUE(speedup_interval({5}, {2}).empty());
}

TEST(MeasurementJson, UnpairedTimesAreRejectedWithTheReason) {
  const auto m = measurement_from_json(R"({"plan": {"fix": "use_sdpa"}, "applied": true, "baseline_ms": [1, 2], "fixed_ms": [1]})");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("not paired"), std::string::npos);
}

Report verified_report() {
  Report r;
  Call c;
  c.layer = 0;
  c.backend = "eager";
  c.device_time_us = 100;
  r.calls.push_back(c);
  r.summary.call_count = 1;
  r.findings = {finding_of(finding::kEagerAttention, {0, 1}, 2.8), finding_of(finding::kRoofline, {})};
  VerificationSection s;
  s.device = "cpu";
  s.timer = "perf_counter";
  s.model = "LlamaForCausalLM";
  s.warmup = 2;
  s.load_average = {0.5, 0.4, 0.3};
  s.fixes.push_back(judge_fix(measured(fix::kUseSdpa, {10, 11, 10.5, 10.2}, {2, 2.1, 2.05, 2.2})));
  r.verification = s;
  return r;
}

TEST(VerificationRender, EveryFormatShowsTheSectionAndMarksTheVerifiedFinding) {
  const Report r = verified_report();
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("## Verified fixes"), std::string::npos);
  EXPECT_NE(md.find("| use\\_sdpa | layers 0-1 | confirmed |"), std::string::npos) << md;
  EXPECT_NE(md.find("**verified on this model: 4.99x faster (4.64x-5.24x), same results"), std::string::npos) << md;
  const std::string text = render_text(r, {});
  EXPECT_NE(text.find("Verified fixes (fixes applied to LlamaForCausalLM on cpu"), std::string::npos) << text;
  EXPECT_NE(text.find("load average 0.50 0.40 0.30"), std::string::npos);
  EXPECT_NE(text.find("eager -> cpu_flash"), std::string::npos);
  const auto scalars = tensorboard_scalars(r);
  EXPECT_NE(std::find(scalars.begin(), scalars.end(), std::pair<std::string, double>{"verify/use_sdpa/speedup",
                                                                                     r.verification->fixes[0].speedup}),
            scalars.end());
  const std::string html = render_html({r}, std::vector<std::string>{});
  EXPECT_NE(html.find("\"verification\":{\"columns\""), std::string::npos);
  EXPECT_NE(html.find("\"verdict\":\"confirmed\""), std::string::npos);
}

TEST(VerificationJson, RoundTripsThroughTheReport) {
  const Report r = verified_report();
  const Result<Report> back = report_from_json(report_to_json(r));
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->verification);
  EXPECT_EQ(back->verification->fixes.at(0).verdict, verdict::kConfirmed);
  EXPECT_EQ(back->verification->fixes.at(0).speedup_ci, r.verification->fixes.at(0).speedup_ci);
  const Result<VerificationSection> section = verification_from_json(R"({"fixes": [{"speedup": "fast"}]})");
  EXPECT_FALSE(section);
}

}  // namespace
}  // namespace attnprof::verify
