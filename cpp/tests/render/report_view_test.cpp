// The ReportView on real traces: its activation rows are the Report's layers, explanations are
// grouped by what they say, and every format shows the view's numbers instead of its own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/analyze.h"
#include "attnprof/diff.h"
#include "attnprof/peak_memory.h"
#include "attnprof/render.h"
#include "attnprof/report_view.h"
#include "attnprof/tensorboard.h"
#include "render/html_view.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

using nlohmann::json;

Report analyzed(const std::string& relative) {
  auto report = analyze_file(testing::fixture(relative), {});
  EXPECT_TRUE(report.ok()) << report.error().message;
  return report.ok() ? std::move(report).value() : Report{};
}

TEST(ReportView, ActivationRowsAreTheReportsLayersWithTheirCalls) {
  const Report r = analyzed("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b1_s2048_train.pt.trace.json.gz");
  const ReportView v = make_report_view(r);
  ASSERT_EQ(r.layers.size(), 4u);  // 4 layers, each a forward and a backward cuDNN call
  ASSERT_EQ(v.layers.size(), r.layers.size());
  for (size_t i = 0; i < v.layers.size(); ++i) {
    const ActivationRow& row = v.layers[i];
    EXPECT_EQ(row.layer, &r.layers[i]);
    ASSERT_EQ(row.calls.size(), 2u);
    EXPECT_EQ(row.calls[0]->direction, "forward");
    EXPECT_EQ(row.calls[1]->direction, "backward");
    EXPECT_EQ(row.first, row.calls[0]);
    EXPECT_EQ(row.cls, "fused");
    EXPECT_EQ(row.module, r.layers[i].module);
  }
  EXPECT_EQ(v.peak_bytes, report_peak_bytes(r));
  EXPECT_TRUE(v.unfused.empty());
}

TEST(ReportView, ExplanationsGroupByWhatTheySay) {
  // TimeSformer alternates time and space attention: all 24 eager layers would run cuDNN under
  // SDPA, with a different measured gain for the two sequence lengths.
  const Report r = analyzed("tracelens/h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz");
  const ReportView v = make_report_view(r);
  ASSERT_EQ(v.explanations.size(), 24u);
  ASSERT_EQ(v.explanation_groups.size(), 2u);
  std::vector<int64_t> even, odd;
  for (int64_t l = 0; l < 24; ++l) (l % 2 ? odd : even).push_back(l);
  EXPECT_EQ(v.explanation_groups[0].layers, even);
  EXPECT_EQ(v.explanation_groups[1].layers, odd);
  const Explanation& first = *v.explanations[v.explanation_groups[0].first].call->explanation;
  const Explanation& second = *v.explanations[v.explanation_groups[1].first].call->explanation;
  EXPECT_EQ(first.predicted_backend, backend::kCudnn);
  EXPECT_LT(first.expected_speedup, second.expected_speedup);
}

TEST(ReportView, RejectedBackendsAreTheIneligibleOnesWithTheirFirstFailedValue) {
  const Report r = analyzed("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz");
  const ReportView v = make_report_view(r);
  ASSERT_EQ(v.explanation_groups.size(), 1u);
  EXPECT_EQ(v.explanation_groups[0].layers, (std::vector<int64_t>{0, 1, 2, 3}));
  const std::vector<std::pair<std::string, std::string>> rejected = {
      {backend::kCudnn, "cudnn disabled"}, {backend::kFlash, "flash disabled"}, {backend::kEfficient, "efficient disabled"}};
  EXPECT_EQ(v.explanations[0].rejected, rejected);  // sdpa_kernel([MATH]) turned the fused backends off
}

// The formats show the Layer's numbers and the one peak: change them in the Report and every
// format follows (none of them sums the calls again).
TEST(ReportView, EveryFormatShowsTheLayersTimeAndTheOnePeak) {
  Report r = analyzed(testing::kCudnnTrace);
  ASSERT_FALSE(r.layers.empty());
  r.layers[0].device_time_us = 12345.5;
  r.layers[0].backends = {backend::kCudnn, backend::kMath};
  r.calls[1].cost->peak_bytes_during = 3LL << 30;
  const ReportView v = make_report_view(r);
  EXPECT_EQ(v.peak_bytes, 3LL << 30);

  const json run = render::run_view(v, "run");
  EXPECT_DOUBLE_EQ(run["map"][0]["us"].get<double>(), 12345.5);
  EXPECT_EQ(run["map"][0]["backends"], json({"cudnn", "math"}));
  EXPECT_EQ(run["summary"]["peak_bytes"], 3LL << 30);
  const json cmp = render::comparison_view({v, v}, {"a", "b"});
  EXPECT_DOUBLE_EQ(cmp["runs"][1]["layers"][0]["us"].get<double>(), 12345.5);
  EXPECT_EQ(cmp["runs"][1]["peak_bytes"], 3LL << 30);

  EXPECT_NE(render_text(v).find("cudnn+math"), std::string::npos);
  EXPECT_NE(render_text(v).find("12.35 ms"), std::string::npos);
  EXPECT_NE(render_markdown(v).find("| 12.35 ms |"), std::string::npos);
  bool scalar = false;
  for (const auto& [tag, value] : tensorboard_scalars(r))
    if (tag == "memory/peak_bytes") scalar = value == static_cast<double>(3LL << 30);
  EXPECT_TRUE(scalar);
  // The diff's peak is the same fact: its run total is the largest call peak of the step.
  const DiffVerdict d = compare_reports(DiffSide{"a", {r}}, DiffSide{"b", {r}}, {});
  EXPECT_DOUBLE_EQ(d.peak_bytes.before, static_cast<double>(3LL << 30));
}

}  // namespace
}  // namespace attnprof
