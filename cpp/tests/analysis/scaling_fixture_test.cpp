// The llama7b4l H200 sweeps (S = 512..4096, B = 4, bf16) against ground_truth.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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
    const ScalingSection s = build_scaling(runs, MemoryBudget{static_cast<int64_t>(kCap24GiB), "--memory-cap 24GiB"});
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

TEST_F(LlamaSweeps, OomThresholdFor24GiBIsWithinTenPercentOfGroundTruthSmax) {
  const double sdpa_truth = sdpa_s_max_from_truth(), eager_truth = eager_s_max_from_truth();
  EXPECT_NEAR(sdpa_truth, 60272, 50);  // (25.77e9 - 1.915e9) / 395,778
  EXPECT_NEAR(eager_truth, 4224, 10);
  EXPECT_NEAR(static_cast<double>(series_of(*sdpa_).oom_threshold_tokens) / sdpa_truth, 1.0, 0.10);
  EXPECT_NEAR(static_cast<double>(series_of(*eager_).oom_threshold_tokens) / eager_truth, 1.0, 0.10);
}

TEST_F(LlamaSweeps, PessimisticThresholdUsesTheReservedOverAllocatedSeen) {
  const ScalingSection s = build_scaling(*sdpa_, MemoryBudget{static_cast<int64_t>(kCap24GiB), "cap"});
  EXPECT_GT(s.allocator_overhead, 1.0);  // Total Reserved > Total Allocated at the peak
  EXPECT_LT(s.series.front().oom_threshold_tokens_reserved, s.series.front().oom_threshold_tokens);
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
