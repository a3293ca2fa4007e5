// compare_reports on hand-built Reports: gates, noise rule, backend ranges, named causes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/call_facts.h"
#include "attnprof/diff.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "diff/diff_test_reports.h"
#include "attnprof/layer_ranges.h"

namespace attnprof {
namespace {

using testing::CallSpec;
using testing::make_report;

DiffVerdict compare(const Report& a, const Report& b, DiffThresholds t = {}) {
  return compare_reports(DiffSide{"base", {a}}, DiffSide{"cand", {b}}, t);
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ReportDiff, IdenticalReportsAreNotARegression) {
  const Report r = make_report(4, 1, CallSpec{});
  const DiffVerdict v = compare(r, r);
  EXPECT_FALSE(v.regression);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_TRUE(v.backend_changes.empty());
  EXPECT_TRUE(v.causes.inputs.empty());
  EXPECT_TRUE(v.causes.environment.empty());
  EXPECT_DOUBLE_EQ(v.attention_time_us.before, 400);  // 4 layers x 100 us
  EXPECT_DOUBLE_EQ(v.attention_time_us.after, 400);
}

TEST(ReportDiff, AllLayersFusedToMathIsARegressionNamedAsOneRange) {
  const Report base = make_report(4, 1, CallSpec{});
  const Report cand = make_report(4, 1, CallSpec{.backend = "math", .fused = false, .time_us = 400});
  const DiffVerdict v = compare(base, cand);
  EXPECT_TRUE(v.regression);
  ASSERT_EQ(v.backend_changes.size(), 1u);
  EXPECT_EQ(format_layer_ranges(v.backend_changes[0].layers), "layers 0-3");
  EXPECT_EQ(v.backend_changes[0].before, "cudnn");
  EXPECT_EQ(v.backend_changes[0].after, "math");
  EXPECT_DOUBLE_EQ(v.fused_time_pct.before, 100);
  EXPECT_DOUBLE_EQ(v.fused_time_pct.after, 0);
  EXPECT_TRUE(v.fused_time_pct.regression);
  EXPECT_TRUE(v.fused_calls_pct.regression);
  EXPECT_TRUE(v.attention_time_us.regression);  // 400 -> 1600 us, +300%
  EXPECT_DOUBLE_EQ(v.attention_time_us.relative(), 3.0);
}

TEST(ReportDiff, SlowdownWithinTheStepSpreadIsNotARegression) {
  // Baseline steps 100, 80, 120 us per layer (spread 40 us x 4 layers = 160 us); candidate
  // median 15% slower (+60 us) but the runs spread more than that.
  const Report base = make_report(4, 3, CallSpec{}, {0, -0.2, 0.2});
  const Report cand = make_report(4, 3, CallSpec{.time_us = 115}, {0, -0.2, 0.2});
  const DiffVerdict v = compare(base, cand);
  EXPECT_GT(v.attention_time_us.worsening, v.attention_time_us.limit);  // beyond 10% ...
  EXPECT_LE(v.attention_time_us.worsening, v.attention_time_us.noise);  // ... but within noise
  EXPECT_FALSE(v.attention_time_us.regression);
  EXPECT_FALSE(v.regression);
}

TEST(ReportDiff, SlowdownBeyondThresholdAndSpreadIsARegression) {
  const Report base = make_report(4, 3, CallSpec{}, {0, -0.01, 0.01});
  const Report cand = make_report(4, 3, CallSpec{.time_us = 130}, {0, -0.01, 0.01});
  const DiffVerdict v = compare(base, cand);
  EXPECT_EQ(v.attention_time_us.before_samples, 3);
  EXPECT_NEAR(v.attention_time_us.noise, 4 * 130 * 0.02, 1e-9);  // candidate spread is larger
  EXPECT_TRUE(v.attention_time_us.regression);
  EXPECT_TRUE(v.regression);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_NE(v.reasons[0].find("attention device time"), std::string::npos);
}

TEST(ReportDiff, SlowdownUnderTheThresholdIsNotARegression) {
  const DiffVerdict v = compare(make_report(2, 1, CallSpec{}), make_report(2, 1, CallSpec{.time_us = 109}));
  EXPECT_FALSE(v.regression);
  DiffThresholds strict;
  strict.max_time_increase = 0.05;
  EXPECT_TRUE(compare(make_report(2, 1, CallSpec{}), make_report(2, 1, CallSpec{.time_us = 109}), strict).regression);
}

TEST(ReportDiff, SeveralRunsPerSideGiveTheNoise) {
  DiffSide base{"base", {make_report(2, 1, CallSpec{.time_us = 100}), make_report(2, 1, CallSpec{.time_us = 130})}};
  DiffSide cand{"cand", {make_report(2, 1, CallSpec{.time_us = 125})}};
  const DiffVerdict v = compare_reports(base, cand, {});
  EXPECT_EQ(v.attention_time_us.before_samples, 2);
  EXPECT_DOUBLE_EQ(v.attention_time_us.before, 230);  // median of 200 and 260
  EXPECT_DOUBLE_EQ(v.attention_time_us.noise, 60);
  EXPECT_FALSE(v.regression);  // +20 us < noise 60 us
}

TEST(ReportDiff, PeakMemoryGrowthBeyondLimitIsARegression) {
  const Report base = make_report(2, 1, CallSpec{.peak_bytes = 1000});
  const Report cand = make_report(2, 1, CallSpec{.peak_bytes = 1200});
  const DiffVerdict v = compare(base, cand);
  EXPECT_TRUE(v.peak_bytes.known);
  EXPECT_TRUE(v.peak_bytes.regression);
  EXPECT_DOUBLE_EQ(v.layers[1].peak_bytes.after, 1200);
  EXPECT_FALSE(compare(base, make_report(2, 1, CallSpec{.peak_bytes = 1050})).regression);
}

TEST(ReportDiff, MemoryIsNotComparedWithoutMemoryData) {
  const DiffVerdict v = compare(make_report(2, 1, CallSpec{}), make_report(2, 1, CallSpec{}));
  EXPECT_FALSE(v.peak_bytes.known);
  EXPECT_TRUE(std::any_of(v.notes.begin(), v.notes.end(),
                          [](const std::string& n) { return n.find("peak memory not compared") != std::string::npos; }));
}

TEST(ReportDiff, HeadDimChangeIsNamedAsTheInputCause) {
  const DiffVerdict v = compare(make_report(4, 1, CallSpec{}), make_report(4, 1, CallSpec{.head_dim = 96}));
  EXPECT_TRUE(contains(v.causes.inputs, "head_dim 128 -> 96 (layers 0-3)"));
  EXPECT_TRUE(contains(v.layers[2].input_changes, "head_dim 128 -> 96"));
}

TEST(ReportDiff, AppearingMaskAndDtypeChangeAreNamed) {
  const DiffVerdict v = compare(make_report(2, 1, CallSpec{}),
                                make_report(2, 1, CallSpec{.dtype = "fp32", .mask = true}));
  EXPECT_TRUE(contains(v.causes.inputs, "dtype bf16 -> fp32 (layers 0-1)"));
  EXPECT_TRUE(contains(v.causes.inputs, "mask appeared (bool) (layers 0-1)"));
  EXPECT_TRUE(contains(v.causes.inputs, "causal flag on -> off (layers 0-1)"));
}

TEST(ReportDiff, EnvironmentChangesAreNamed) {
  Report cand = make_report(1, 1, CallSpec{});
  cand.source.versions = {{"torch", "2.13.0"}, {"cudnn", "9.19"}};
  cand.source.device_name = "NVIDIA H100";
  const DiffVerdict v = compare(make_report(1, 1, CallSpec{}), cand);
  EXPECT_TRUE(contains(v.causes.environment, "torch 2.11.0 -> 2.13.0"));
  EXPECT_TRUE(contains(v.causes.environment, "GPU NVIDIA H200 -> NVIDIA H100"));
  EXPECT_EQ(v.causes.environment.size(), 2u);
}

TEST(ReportDiff, FallbackExplanationQuotesTheFailedRuleOfTheLostBackendAsTheReportDoes) {
  Report cand = make_report(2, 1, CallSpec{.backend = "math", .fused = false});
  Explanation e;
  e.predicted_backend = "math";
  e.backends = {BackendVerdict{"cudnn", false, {RuleCheck{"cudnn.head_dim", "head_dim must be a multiple of 8",
                                                          "head_dim=100", "pad head_dim to 104"}}}};
  for (Call& c : cand.calls) c.explanation = e;
  const DiffVerdict v = compare(make_report(2, 1, CallSpec{}), cand);
  ASSERT_EQ(v.backend_changes.size(), 1u);
  EXPECT_EQ(v.backend_changes[0].explanation,
            "cudnn not eligible: cudnn.head_dim (head_dim=100) - head_dim must be a multiple of 8 -> fix: pad "
            "head_dim to 104");
  // The same line the text report and the dashboard list for the call (explanation_lines).
  EXPECT_EQ(explanation_lines(cand.calls[0]).at(1), v.backend_changes[0].explanation);
}

TEST(ReportDiff, ChangedLayersAreGroupedIntoConsecutiveRanges) {
  EXPECT_EQ(format_layer_ranges({3, 0, 1, 2, 6, 8, 7}), "layers 0-3, 6-8");
  EXPECT_EQ(format_layer_ranges({5}), "layer 5");
  EXPECT_EQ(format_layer_ranges({-1, 2}), "layer 2, unattributed");
}

TEST(ReportDiff, CodeRangeIsTakenFromTheRecordedCommits) {
  Report base = make_report(1, 1, CallSpec{}), cand = make_report(1, 1, CallSpec{});
  base.source.code = CodeInfo{"aaaa", false, "/nonexistent", "cfg1", {}};
  cand.source.code = CodeInfo{"bbbb", true, "/nonexistent", "cfg2", {}};
  const DiffVerdict v = compare(base, cand);
  ASSERT_TRUE(v.causes.code.has_value());
  EXPECT_EQ(v.causes.code->before_commit, "aaaa");
  EXPECT_EQ(v.causes.code->after_commit, "bbbb");
  EXPECT_TRUE(v.causes.code->after_dirty);
  EXPECT_TRUE(v.causes.code->config_changed());
}

TEST(DiffThresholdParsing, PercentagesAcceptSignAndBareNumbers) {
  EXPECT_DOUBLE_EQ(parse_percent("10%").value(), 0.10);
  EXPECT_DOUBLE_EQ(parse_percent("10").value(), 0.10);
  EXPECT_DOUBLE_EQ(parse_percent("2.5%").value(), 0.025);
  EXPECT_FALSE(parse_percent("ten").ok());
  EXPECT_FALSE(parse_percent("-5%").ok());
  EXPECT_FALSE(parse_percent("").ok());
}

TEST(DiffRendering, MarkdownHasThePerLayerBeforeAfterTable) {
  DiffSection result;
  result.pairs.push_back(compare(make_report(2, 1, CallSpec{}),
                                 make_report(2, 1, CallSpec{.backend = "math", .fused = false, .time_us = 300})));
  const std::string md = render_markdown(diff_report(result));
  EXPECT_NE(md.find("## attnprof diff: REGRESSION"), std::string::npos);
  EXPECT_NE(md.find("| Layer | Module | Backend | Fused (time) | Fused (calls) | Device time |"), std::string::npos);
  EXPECT_NE(md.find("| 0 | model.layers.0.self\\_attn | cudnn -> math | 100.0% -> 0.0% (-100.0 pp) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("100.0 us -> 300.0 us (+200.0%)"), std::string::npos) << md;
  EXPECT_NE(md.find("- layers 0-1: cudnn -> math"), std::string::npos) << md;
}

TEST(DiffRendering, MarkdownEscapesHostileModuleNames) {
  Report r = make_report(1, 1, CallSpec{});
  r.calls[0].module = "evil|<script>alert(1)</script>";
  DiffSection result;
  result.pairs.push_back(compare(r, r));
  const std::string md = render_markdown(diff_report(result));
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("evil\\|&lt;script>alert(1)&lt;/script>"), std::string::npos);
}

TEST(DiffRendering, JsonVerdictCarriesExitCodeAndReasons) {
  DiffSection result;
  result.pairs.push_back(compare(make_report(2, 1, CallSpec{}),
                                 make_report(2, 1, CallSpec{.backend = "math", .fused = false})));
  const auto j = nlohmann::json::parse(report_to_json(diff_report(result)))["diff"];
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["pairs"][0]["backend_changes"][0]["layers_text"], "layers 0-1");
  EXPECT_EQ(j["pairs"][0]["fused_time_pct"]["after"], 0.0);
  EXPECT_EQ(j["pairs"][0]["layers"].size(), 2u);
}

// Graph captures record the ops but not the kernels: such calls carry device_time_unknown and
// device_time_us 0, which must never read as "0 ms, 100% faster".
Report with_unknown_time(Report r) {
  for (Call& c : r.calls) {
    c.device_time_unknown = true;
    c.device_time_us = 0;
    c.tflops = 0;
  }
  return r;
}

TEST(ReportDiff, UnknownDeviceTimeIsNeitherARegressionNorAnImprovement) {
  const Report measured = make_report(4, 1, CallSpec{});
  const Report captured = with_unknown_time(make_report(4, 1, CallSpec{.fused = false}));
  for (const DiffVerdict& v : {compare(measured, captured), compare(captured, measured)}) {
    EXPECT_FALSE(v.regression);
    EXPECT_FALSE(v.attention_time_us.known);
    EXPECT_FALSE(v.attention_time_us.regression);
    EXPECT_FALSE(v.fused_time_pct.regression);
    EXPECT_FALSE(v.fused_calls_pct.regression);
    EXPECT_EQ(v.attention_time_us.before_unknown + v.attention_time_us.after_unknown, 1);
    EXPECT_DOUBLE_EQ(v.attention_time_us.worsening, 0);
    ASSERT_EQ(v.layers.size(), 4u);
    EXPECT_FALSE(v.layers[0].time_us.known);
  }
}

TEST(DiffRendering, UnknownDeviceTimeIsWrittenUnknownNotZero) {
  DiffSection result;
  result.pairs.push_back(compare(make_report(2, 1, CallSpec{}), with_unknown_time(make_report(2, 1, CallSpec{}))));
  const std::string md = render_markdown(diff_report(result));
  EXPECT_NE(md.find("| Attention device time | 200.0 us -> unknown | not compared (device time unknown) |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| 0 | model.layers.0.self\\_attn | cudnn | 100.0% -> unknown | 100.0% -> unknown | 100.0 us -> unknown |"),
            std::string::npos) << md;
  EXPECT_EQ(md.find(" 0.0 us"), std::string::npos) << md;
  EXPECT_NE(md.find("candidate 2; their kernels were not recorded"), std::string::npos) << md;
  const std::string text = render_text(diff_report(result));
  EXPECT_NE(text.find("200.0 us -> unknown  [not compared (device time unknown)]"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: no regression"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(report_to_json(diff_report(result)))["diff"];
  EXPECT_EQ(j["pairs"][0]["attention_device_time_us"]["known"], false);
  EXPECT_EQ(j["pairs"][0]["attention_device_time_us"]["after_unknown"], 1);
  EXPECT_EQ(j["exit_code"], 0);
}

}  // namespace
}  // namespace attnprof
