// Kernel time beside call time (the non-kernel finding) and the spread per shape group, on
// real H200 traces and on calls built by hand with figures worked out here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/fixture_support.h"
#include "attnprof/cost.h"

namespace attnprof {
namespace {

Report analysed(const std::string& name) {
  auto trace = load_trace(testing::h200_trace(name));
  EXPECT_TRUE(trace.ok());
  return trace.ok() ? analyze_trace(*trace) : Report{};
}

const Finding* finding_with_rule(const Report& r, std::string_view rule) {
  for (const Finding& f : r.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

TEST(KernelTime, PaddedBertSpendsAFifthOfEachCallConvertingItsBoolMask) {
  // SDPA turns BERT's (16, 1, 512, 512) bool padding mask into a float one on every call:
  // elementwise kernels and a memset beside the cuDNN kernel.
  const Report r = analysed("bert_sdpa_fp16_b16_s512_padmask");
  ASSERT_EQ(r.calls.size(), 4u);
  double other = 0, device = 0;
  for (const Call& c : r.calls) {
    double fused = 0, rest = 0;
    for (const KernelRef& k : c.kernels) (k.component == component::kFused ? fused : rest) += k.device_time_us;
    EXPECT_NEAR(c.kernel_time_us, fused, 1e-9);
    EXPECT_NEAR(c.other_time_us, rest, 1e-9);
    EXPECT_NEAR(c.kernel_time_us + c.other_time_us, c.device_time_us, 1e-9);
    EXPECT_NEAR(c.kernel_tflops, c.flops_useful / (fused * 1e6), 1e-9 * c.kernel_tflops);
    other += rest;
    device += c.device_time_us;
  }
  ASSERT_GT(other / device, 0.15);
  const Finding* f = finding_with_rule(r, finding::kNonKernelTime);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, "medium");  // >= 10% of all attention time
  EXPECT_EQ(f->layers, (std::vector<int64_t>{0, 1, 2, 3}));
  // Percentages carry one decimal (text_format.h).
  EXPECT_NE(f->title.find(fmt::format("{:.1f}% of 4 fused", 100 * other / device)), std::string::npos)
      << f->title;
  EXPECT_NE(f->detail.find("at::native::elementwise_kernel"), std::string::npos) << f->detail;
  EXPECT_NE(f->detail.find("bool mask is converted on every call"), std::string::npos);
  EXPECT_NEAR(f->expected_gain, device / (device - other), 1e-9);
}

TEST(KernelTime, CausalFlagCallsRunNothingBesideTheKernelWorthAFinding) {
  const Report r = analysed("llama7b4l_sdpa_bf16_b4_s1024");
  ASSERT_FALSE(r.calls.empty());
  EXPECT_EQ(finding_with_rule(r, finding::kNonKernelTime), nullptr);
}

Call timed(int64_t id, double us, double other_us, std::string backend = "cudnn") {
  Call c;
  c.id = id;
  c.layer = id;
  c.step = 0;
  c.backend = std::move(backend);
  c.library = c.backend;
  c.fused = true;
  c.direction = "forward";
  c.shape = Shape{.B = 1, .Hq = 8, .Hkv = 8, .Sq = 128, .Skv = 128, .D = 64, .Dv = 64, .dtype = "bf16"};
  c.device_time_us = us;
  c.other_time_us = other_us;
  c.kernel_time_us = us - other_us;
  c.kernels = {{"flash_fwd", component::kFused, 0, us - other_us, 7, 1}};
  if (other_us > 0) c.kernels.push_back({"void at::native::fill_kernel<float>(float*)", component::kOther, 0, other_us, 7, 2});
  return c;
}

TEST(KernelTime, EachMaskGetsTheFixThatRemovesItsConversion) {
  Call causal = timed(0, 100, 10);
  causal.mask.present = true;
  causal.mask.kind = "bool";
  causal.mask.pattern = "causal";
  Call window = timed(1, 100, 10);
  window.mask.present = true;
  window.mask.kind = "bool";
  window.mask.pattern = "sliding_window";
  Call small = timed(2, 100, 4);  // 4% < 5%: not named
  const std::vector<Finding> found = non_kernel_time_findings({causal, window, small});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_NE(found[0].detail.find("pass is_causal=True"), std::string::npos);
  EXPECT_NE(found[1].detail.find("create_block_mask"), std::string::npos);
  for (const Finding& f : found) {
    EXPECT_NE(f.detail.find("at::native::fill_kernel 10.0 us"), std::string::npos) << f.detail;
    EXPECT_EQ(f.title.find("10.0% of 1 fused attention call' time"), 0u) << f.title;
    EXPECT_DOUBLE_EQ(f.expected_gain, 100.0 / 90);
    EXPECT_EQ(f.severity, "low");  // 10 of 300 us of attention
  }
}

TEST(ShapeSpread, GroupsCarryCountMeanMedianMinMaxAndPopulationStd) {
  std::vector<Call> calls = {timed(0, 40, 0), timed(1, 10, 0), timed(2, 30, 0), timed(3, 20, 0),
                             timed(4, 5, 0, "flash")};
  calls[1].step = 3;
  calls[4].direction = "backward";
  std::vector<CallCost> costs(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    calls[i].tflops = 100.0 / calls[i].device_time_us;
    costs[i].bandwidth_gbs = 1000.0 / calls[i].device_time_us;
  }
  calls[2].device_time_unknown = true;  // not timed: left out
  const std::vector<ShapeGroup> groups = shape_groups(calls, costs);
  ASSERT_EQ(groups.size(), 2u);
  const ShapeGroup& g = groups[0];  // most total time first
  EXPECT_EQ(g.backend, "cudnn");
  EXPECT_EQ(g.count, 3);
  EXPECT_DOUBLE_EQ(g.total_time_us, 70);
  EXPECT_DOUBLE_EQ(g.device_time_us.mean, 70.0 / 3);
  EXPECT_DOUBLE_EQ(g.device_time_us.median, 20);
  EXPECT_DOUBLE_EQ(g.device_time_us.min, 10);
  EXPECT_DOUBLE_EQ(g.device_time_us.max, 40);
  // (40-70/3)^2 + (10-70/3)^2 + (20-70/3)^2 = 466.67; / 3 = 155.56
  EXPECT_NEAR(g.device_time_us.std, std::sqrt(1400.0 / 9), 1e-12);
  EXPECT_DOUBLE_EQ(g.tflops.median, 5);  // 100/20
  EXPECT_DOUBLE_EQ(g.bandwidth_gbs.max, 100);  // 1000/10
  ASSERT_EQ(g.slowest.size(), 3u);
  EXPECT_EQ(g.slowest[0].call, 0);
  EXPECT_EQ(g.slowest[2].call, 1);
  EXPECT_EQ(g.slowest[2].step, 3);
  EXPECT_EQ(groups[1].direction, "backward");
  EXPECT_EQ(groups[1].device_time_us.median, 5);
}

TEST(ShapeSpread, H200TrainingRunSplitsForwardAndBackwardOfEachShape) {
  const Report r = analysed("llama7b4l_sdpa_bf16_b1_s2048_train");
  ASSERT_FALSE(r.summary.shape_groups.empty());
  int64_t forward = 0, backward = 0;
  for (const Call& c : r.calls) (c.direction == "backward" ? backward : forward) += !c.device_time_unknown;
  int64_t grouped_forward = 0, grouped_backward = 0;
  for (const ShapeGroup& g : r.summary.shape_groups) {
    (g.direction == "backward" ? grouped_backward : grouped_forward) += g.count;
    EXPECT_LE(g.device_time_us.min, g.device_time_us.median);
    EXPECT_LE(g.device_time_us.median, g.device_time_us.max);
  }
  EXPECT_EQ(grouped_forward, forward);
  EXPECT_EQ(grouped_backward, backward);
  EXPECT_GT(backward, 0);
}

}  // namespace
}  // namespace attnprof
