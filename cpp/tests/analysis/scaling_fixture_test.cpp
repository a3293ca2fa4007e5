// The llama7b4l H200 sweeps (S = 512..4096, B = 4, bf16) against ground_truth.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/fixture_support.h"
#include "attnprof/scaling.h"

namespace attnprof {
namespace {

using testing::ground_truth;
using testing::load_sweep;

constexpr double kCap24GiB = 24.0 * (1LL << 30);

class LlamaSweeps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    sdpa_ = new std::vector<ScalingRun>(load_sweep("llama7b4l_sdpa_bf16_b4_s"));
    eager_ = new std::vector<ScalingRun>(load_sweep("llama7b4l_eager_bf16_b4_s"));
  }
  static void TearDownTestSuite() {
    delete sdpa_;
    delete eager_;
  }
  static ScalingSeries series_of(const std::vector<ScalingRun>& runs) {
    const ScalingSection s = build_scaling(runs, MemoryBudget{static_cast<int64_t>(kCap24GiB), "--memory-cap 24GiB",
                                                                   /*caps_allocator=*/true});
    EXPECT_EQ(s.series.size(), 1u);
    return s.series.empty() ? ScalingSeries{} : s.series.front();
  }
  static std::vector<ScalingRun>* sdpa_;
  static std::vector<ScalingRun>* eager_;
};
std::vector<ScalingRun>* LlamaSweeps::sdpa_ = nullptr;
std::vector<ScalingRun>* LlamaSweeps::eager_ = nullptr;

TEST_F(LlamaSweeps, PassMemoryFromTraceEventsEqualsGroundTruthPeakActivation) {
  for (const auto* runs : {sdpa_, eager_})
    for (const auto& run : *runs) {
      const std::string name = run.file.substr(run.file.rfind('/') + 1, run.file.find(".pt.trace") - run.file.rfind('/') - 1);
      const auto truth = ground_truth(name);
      EXPECT_EQ(run.memory.peak_activation_bytes, truth["peak_activation"].get<int64_t>()) << name;
      EXPECT_EQ(run.memory.baseline_bytes, truth["mem_before"].get<int64_t>()) << name;
    }
}

TEST_F(LlamaSweeps, FittedPeakMemoryAtS4096IsWithinFivePercentOfGroundTruth) {
  for (const auto& [runs, name] : {std::pair{sdpa_, "llama7b4l_sdpa_bf16_b4_s4096"},
                                   std::pair{eager_, "llama7b4l_eager_bf16_b4_s4096"}}) {
    const double truth = ground_truth(name)["peak_activation"].get<double>();
    const double fitted = evaluate_fit(series_of(*runs).memory_fit, 4096);
    EXPECT_NEAR(fitted / truth, 1.0, 0.05) << name;
  }
}

TEST_F(LlamaSweeps, EagerMemoryIsQuadraticAndSdpaMemoryIsLinear) {
  const ScalingSeries eager = series_of(*eager_), sdpa = series_of(*sdpa_);
  EXPECT_EQ(eager.backend, "eager");
  EXPECT_EQ(eager.memory_fit.growth, "quadratic");
  EXPECT_EQ(sdpa.backend, "cudnn");  // SDPA on H200 + torch 2.11 dispatches to cuDNN
  EXPECT_EQ(sdpa.memory_fit.growth, "linear");
  // Attention time is quadratic for both: the FLOPs are S^2 whatever the kernel.
  EXPECT_EQ(sdpa.time_fit.growth, "quadratic");
}

// S_max from the ground truth alone: mem_before + activation(S) = 24 GiB, with activation(S)
// the curve through the measured points (SDPA: activation/S is constant, 395,778 B per token
// of S at B=4; eager: the parabola through S = 1024, 2048, 4096).
double sdpa_s_max_from_truth() {
  const auto t = ground_truth("llama7b4l_sdpa_bf16_b4_s4096");
  const double per_token = t["peak_activation"].get<double>() / 4096;
  return (kCap24GiB - t["mem_before"].get<double>()) / per_token;
}

double eager_s_max_from_truth() {
  double s[3] = {1024, 2048, 4096}, y[3];
  for (int i = 0; i < 3; ++i)
    y[i] = ground_truth("llama7b4l_eager_bf16_b4_s" + std::to_string(static_cast<int>(s[i])))["peak_activation"].get<double>();
  // Lagrange form -> a S^2 + b S + c.
  double a = 0, b = 0, c = 0;
  for (int i = 0; i < 3; ++i) {
    const double sj = s[(i + 1) % 3], sk = s[(i + 2) % 3];
    const double w = y[i] / ((s[i] - sj) * (s[i] - sk));
    a += w;
    b -= w * (sj + sk);
    c += w * sj * sk;
  }
  const double room = kCap24GiB - ground_truth("llama7b4l_eager_bf16_b4_s4096")["mem_before"].get<double>() - c;
  return (-b + std::sqrt(b * b + 4 * a * room)) / (2 * a);
}

// The allocated-bytes model put S_max at 60,272 (SDPA) and 4,224 (eager) under 24 GiB; runs on
// the H200 went out of memory well before both, because the cap counts reserved memory
// (segments). The simulated threshold must come out below these figures.
TEST_F(LlamaSweeps, OomThresholdFor24GiBComesFromTheAllocatorSimulationBelowTheAllocatedBytesFigure) {
  const double sdpa_allocated_only = sdpa_s_max_from_truth(), eager_allocated_only = eager_s_max_from_truth();
  EXPECT_NEAR(sdpa_allocated_only, 60272, 50);  // (25.77e9 - 1.915e9) / 395,778
  EXPECT_NEAR(eager_allocated_only, 4224, 10);
  for (const auto& [runs, allocated_only] : {std::pair{sdpa_, sdpa_allocated_only}, std::pair{eager_, eager_allocated_only}}) {
    const ScalingSeries s = series_of(*runs);
    EXPECT_EQ(s.oom_method, "caching-allocator simulation") << s.oom_note;
    EXPECT_GT(s.oom_threshold_tokens, 2048) << s.backend;
    EXPECT_LT(static_cast<double>(s.oom_threshold_tokens), allocated_only) << s.backend;
    EXPECT_LE(s.oom_threshold_low_tokens, s.oom_threshold_tokens) << s.backend;
    EXPECT_GE(s.oom_threshold_high_tokens, s.oom_threshold_tokens) << s.backend;
    std::printf("%s: S <= %lld (band %.2f%%: %lld..%lld), fails %s layer %lld %lld B at S=%lld, reserved %lld "
                "allocated %lld (fragmentation %.3f), holdout %lld vs %lld\n",
                s.backend.c_str(), static_cast<long long>(s.oom_threshold_tokens), 100 * s.oom_error_band,
                static_cast<long long>(s.oom_threshold_low_tokens), static_cast<long long>(s.oom_threshold_high_tokens),
                s.failing_allocation ? s.failing_allocation->op.c_str() : "-",
                static_cast<long long>(s.failing_allocation ? s.failing_allocation->layer : -9),
                static_cast<long long>(s.failing_allocation ? s.failing_allocation->bytes : 0),
                static_cast<long long>(s.failing_allocation ? s.failing_allocation->length : 0),
                static_cast<long long>(s.failing_allocation ? s.failing_allocation->reserved_bytes : 0),
                static_cast<long long>(s.failing_allocation ? s.failing_allocation->allocated_bytes : 0),
                s.fragmentation, static_cast<long long>(s.holdout_predicted_reserved_bytes),
                static_cast<long long>(s.holdout_recorded_reserved_bytes));
  }
}

TEST_F(LlamaSweeps, FailingAllocationIsNamedWithTheAllocatorStateWhenItFailed) {
  for (const auto* runs : {sdpa_, eager_}) {
    const ScalingSeries s = series_of(*runs);
    ASSERT_TRUE(s.failing_allocation.has_value()) << s.backend;
    const FailingAllocation& f = *s.failing_allocation;
    EXPECT_EQ(f.length, s.oom_threshold_tokens + 1);
    EXPECT_FALSE(f.op.empty());
    EXPECT_GT(f.bytes, 0);
    // It failed because its segment did not fit the cap after the cached segments were released.
    EXPECT_GT(f.reserved_bytes + allocator_segment_size(allocator_round_size({}, f.bytes)),
              static_cast<int64_t>(kCap24GiB));
    EXPECT_GE(f.reserved_bytes, f.allocated_bytes);
    EXPECT_GE(s.fragmentation, 0.0);
    EXPECT_LT(s.fragmentation, 1.0);
  }
}

TEST(BackendAdvice, ForcedRunsAgreeWithGroundTruthLatencies) {
  std::vector<ScalingRun> runs;
  std::vector<std::pair<std::string, double>> truth;  // backend -> median latency
  for (const char* forced : {"flash_attention", "efficient_attention", "cudnn_attention", "math"}) {
    const std::string name = std::string("llama7b4l_sdpa_bf16_b4_s2048_force_") + forced;
    runs.push_back(testing::load_run(name));
    EXPECT_TRUE(runs.back().forced) << name;
    truth.emplace_back(runs.back().backend, ground_truth(name)["latency_ms_median"].get<double>());
  }
  runs.push_back(testing::load_run("llama7b4l_sdpa_bf16_b4_s2048"));  // PyTorch's own pick
  EXPECT_FALSE(runs.back().forced);
  const AdviceSection advice = build_advice(runs);
  ASSERT_EQ(advice.rows.size(), 1u);
  const AdviceRow& row = advice.rows.front();
  EXPECT_EQ(row.shape, "B4 H32 S2048x2048 D128 bf16");  // as every output spells it (shape_text)
  std::sort(truth.begin(), truth.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  ASSERT_EQ(row.times_us.size(), truth.size());
  for (size_t i = 0; i < truth.size(); ++i) EXPECT_EQ(row.times_us[i].first, truth[i].first) << i;
  EXPECT_EQ(row.fastest_backend, "cudnn");
  EXPECT_EQ(row.heuristic_backend, "cudnn");
  EXPECT_TRUE(row.code.empty());  // PyTorch already picks the fastest: nothing to pin
  EXPECT_NEAR(row.gain, 1.0, 0.05);
}

TEST(BackendAdvice, PinsTheFastestWhenPyTorchPicksASlowerBackendBeyondNoise) {
  ScalingRun picked{"a.json", "efficient", false, 2048, "shape", 300, {}};
  ScalingRun forced{"b_force_flash.json", "flash", true, 2048, "shape", 100, {}};
  const AdviceSection advice = build_advice({picked, forced});
  ASSERT_EQ(advice.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(advice.rows[0].gain, 3.0);
  EXPECT_NE(advice.rows[0].code.find("sdpa_kernel(SDPBackend.FLASH_ATTENTION)"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
