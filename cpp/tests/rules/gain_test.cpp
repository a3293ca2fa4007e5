// The measured-gain table is the fixture's numbers, and the gain picks the matching pair.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnprof/rules.h"

namespace {

using namespace attnprof::rules;

const nlohmann::json& ground_truth_runs() {
  static const nlohmann::json runs = [] {
    std::ifstream f(std::filesystem::path(ATTNPROF_FIXTURES_DIR) / "h200-torch2.11/ground_truth.json");
    return nlohmann::json::parse(f)["runs"];
  }();
  return runs;
}

const nlohmann::json* run_named(const std::string& name) {
  for (const auto& r : ground_truth_runs())
    if (r["name"] == name) return &r;
  return nullptr;
}

TEST(MeasuredGain, EveryPairIsTheFixturesLatencyAndPeakActivation) {
  for (const MeasuredPair& p : measured_pairs()) {
    const auto* from = run_named(p.from_run);
    const auto* to = run_named(p.to_run);
    ASSERT_TRUE(from && to) << p.from_run << " / " << p.to_run;
    EXPECT_DOUBLE_EQ(p.from_latency_ms, (*from)["latency_ms_median"].get<double>()) << p.from_run;
    EXPECT_DOUBLE_EQ(p.to_latency_ms, (*to)["latency_ms_median"].get<double>()) << p.to_run;
    EXPECT_EQ(p.from_peak_activation, (*from)["peak_activation"].get<int64_t>()) << p.from_run;
    EXPECT_EQ(p.to_peak_activation, (*to)["peak_activation"].get<int64_t>()) << p.to_run;
    EXPECT_EQ(p.seq_len, (*from)["S"].get<int64_t>()) << p.from_run;
  }
}

TEST(MeasuredGain, EagerToSdpaUsesTheNearestMeasuredSequenceLength) {
  const Gain g = expected_gain("eager", "cudnn", 3500, "bf16");
  EXPECT_NEAR(g.speedup, 166.96456909179688 / 58.12739181518555, 1e-9);  // S=4096 is nearest
  EXPECT_NEAR(g.memory_ratio, 22416490496.0 / 1621131264.0, 1e-9);
  EXPECT_NE(g.basis.find("llama7b4l_eager_bf16_b4_s4096"), std::string::npos) << g.basis;
}

TEST(MeasuredGain, MathFallbackGainIsTheForcedMathPair) {
  const Gain g = expected_gain("math", "flash", 2048, "bf16");
  EXPECT_NEAR(g.speedup, 79.43807983398438 / 28.24665641784668, 1e-9);
  EXPECT_NE(g.basis.find("force_math"), std::string::npos);
}

TEST(MeasuredGain, Fp32UsesTheDtypePairAndUnmatchedPairsAreNotEstimated) {
  EXPECT_NEAR(expected_gain("efficient", "cudnn", 2048, "fp32").speedup, 281.22735595703125 / 28.24665641784668, 1e-9);
  const Gain none = expected_gain("math", "efficient", 2048, "bf16");
  EXPECT_EQ(none.speedup, 0);
  EXPECT_NE(none.basis.find("not estimated"), std::string::npos);
}

TEST(RulesDocs, EveryRuleIdAndFixIsDocumented) {
  std::ifstream f(std::filesystem::path(ATTNPROF_SOURCE_DIR) / "docs/rules.md");
  const std::string docs((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(docs.empty());
  for (const Rule& r : all_rules()) {
    EXPECT_NE(docs.find(std::string("`") + r.id + "`"), std::string::npos) << r.id << " missing from docs/rules.md";
  }
}

}  // namespace
