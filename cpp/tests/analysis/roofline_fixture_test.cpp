// Roofline and memory per call/layer on the real H200 traces.
#include <gtest/gtest.h>

#include "analysis/fixture_support.h"
#include "attnprof/cost.h"

namespace attnprof {
namespace {

Report analysed(const std::string& name) {
  auto trace = load_trace(testing::h200_trace(name));
  EXPECT_TRUE(trace.ok());
  return trace.ok() ? analyze_trace(*trace) : Report{};
}

TEST(Roofline, CudnnReachesAFarLargerShareOfH200PeakThanTheMathFallback) {
  const Report cudnn = analysed("llama7b4l_sdpa_bf16_b4_s2048_force_cudnn_attention");
  const Report math = analysed("llama7b4l_sdpa_bf16_b4_s2048_force_math");
  ASSERT_FALSE(cudnn.calls.empty());
  ASSERT_FALSE(math.calls.empty());
  for (const auto& call : cudnn.calls) {
    ASSERT_TRUE(call.cost.has_value());
    EXPECT_DOUBLE_EQ(call.cost->peak_tflops, 989);  // H200 bf16 dense
    // 4*4*32*2048^2*128/2 FLOP in ~276 us -> ~50% of peak.
    EXPECT_GT(call.cost->peak_fraction, 0.3);
    EXPECT_LT(call.cost->peak_fraction, 0.9);
  }
  for (const auto& call : math.calls) EXPECT_LT(call.cost->peak_fraction, 0.05);
  bool line = false;
  for (const auto& f : cudnn.findings)
    if (f.rule == "cost.roofline" && f.title.find("cudnn attention reaches") == 0) line = true;
  EXPECT_TRUE(line);
}

TEST(MemoryPerCall, EagerCallPeakMatchesTheAnalyticScoresAndSoftmax) {
  const Report r = analysed("llama7b4l_eager_bf16_b4_s2048");
  ASSERT_FALSE(r.calls.empty());
  for (const auto& call : r.calls) {
    ASSERT_TRUE(call.cost.has_value());
    // B*H*S^2*(2 + 8) = 4*32*2048^2*10 = 5.37e9 bytes, measured within the call's span.
    EXPECT_NEAR(static_cast<double>(call.cost->peak_bytes_during) / 5368709120.0, 1.0, 0.15) << call.id;
  }
  ASSERT_FALSE(r.layers.empty());
  const LayerCost& layer = *r.layers.front().cost;
  EXPECT_EQ(layer.bytes_per_q_head, layer.peak_bytes / 32);
  EXPECT_EQ(layer.bytes_per_kv_head, 4LL * 2048 * 256 * 2);  // K and V of one KV head
  EXPECT_FALSE(layer.disproportionate);  // four identical layers
}

TEST(MemoryPerCall, FusedCallAllocatesOrdersOfMagnitudeLessThanEager) {
  const Report fused = analysed("llama7b4l_sdpa_bf16_b4_s2048");
  ASSERT_FALSE(fused.calls.empty());
  for (const auto& call : fused.calls) {
    ASSERT_TRUE(call.cost.has_value());
    EXPECT_GE(call.cost->peak_bytes_during, 0);
    EXPECT_LT(call.cost->peak_bytes_during, 5368709120 / 50);
  }
}

}  // namespace
}  // namespace attnprof
