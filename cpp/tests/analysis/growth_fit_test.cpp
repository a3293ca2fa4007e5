#include <gtest/gtest.h>

#include <vector>

#include "attnprof/hw.h"
#include "attnprof/scaling.h"

namespace attnprof {
namespace {

TEST(GrowthFit, RecoversAnExactQuadraticAndWhereItsSquareTermDominates) {
  // y = 100 + 2 S + 0.01 S^2; c2 S^2 = c1 S + c0 at S = (2 + sqrt(4 + 4)) / 0.02 = 241.4 -> 242.
  const std::vector<double> s = {100, 200, 400, 800}, y = {400, 900, 2500, 8100};
  const FitTerm f = fit_growth(s, y);
  EXPECT_NEAR(f.c0, 100, 1e-6);
  EXPECT_NEAR(f.c1, 2, 1e-9);
  EXPECT_NEAR(f.c2, 0.01, 1e-12);
  EXPECT_EQ(f.growth, "quadratic");
  EXPECT_EQ(f.quadratic_dominates_from, 242);
  EXPECT_LT(f.rel_rms_error, 1e-9);
  ASSERT_EQ(f.residuals.size(), 4u);
}

TEST(GrowthFit, LinearDataWithNoiseNeverGetsANegativeSquareTerm) {
  // Slightly concave data: unconstrained least squares would give c2 < 0 (a curve that bends
  // down and never runs out of memory). NNLS drops the term instead.
  const std::vector<double> s = {512, 1024, 2048, 4096}, y = {1000, 2010, 4000, 7900};
  const FitTerm f = fit_growth(s, y);
  EXPECT_GE(f.c2, 0);
  EXPECT_GE(f.c0, 0);
  EXPECT_EQ(f.growth, "linear");
  EXPECT_EQ(f.quadratic_dominates_from, -1);
}

TEST(GrowthFit, FlatSeriesIsConstant) {
  const std::vector<double> s = {512, 1024, 2048}, y = {50, 50, 50};
  EXPECT_EQ(fit_growth(s, y).growth, "constant");
}

TEST(OomThreshold, SolvesBaselinePlusQuadraticAgainstTheBudget) {
  FitTerm f;
  f.c1 = 100;
  f.c2 = 1;  // S^2 + 100 S + 1000 (baseline) <= 1000 + 20000 -> S <= 100 (largest integer root)
  EXPECT_EQ(largest_length_within(f, 1000, 21000), 100);
  f.c2 = 0;  // linear: 100 S <= 20000 -> 200
  EXPECT_EQ(largest_length_within(f, 1000, 21000), 200);
  EXPECT_EQ(largest_length_within(f, 30000, 21000), 0);  // weights alone exceed the budget
  f.c1 = 0;
  EXPECT_EQ(largest_length_within(f, 0, 21000), -1);  // does not grow: no threshold
}

TEST(ByteSizes, ParseDecimalAndBinaryUnits) {
  EXPECT_EQ(*parse_byte_size("24GiB"), 24LL << 30);
  EXPECT_EQ(*parse_byte_size("80 GB"), 80'000'000'000LL);
  EXPECT_EQ(*parse_byte_size("1.5MiB"), 1572864);
  EXPECT_EQ(*parse_byte_size("4096"), 4096);
  EXPECT_FALSE(parse_byte_size("24XB").ok());
  EXPECT_FALSE(parse_byte_size("-1GB").ok());
  EXPECT_FALSE(parse_byte_size("").ok());
}

TEST(MemoryBudget, CapBeatsGpuNameBeatsDeviceProperties) {
  SourceInfo traced;
  traced.device_name = "NVIDIA H200";
  traced.device_memory_bytes = 150109880320;
  EXPECT_EQ(choose_memory_budget("24GiB", "", traced)->bytes, 24LL << 30);
  EXPECT_EQ(choose_memory_budget("", "A100-80GB", traced)->bytes, 80'000'000'000LL);
  EXPECT_EQ(choose_memory_budget("", "", traced)->bytes, 150109880320);
  EXPECT_EQ(choose_memory_budget("", "V100", traced)->bytes, 16'000'000'000LL);  // the SXM2 16 GB board
  const auto unknown = choose_memory_budget("", "P100", traced);
  ASSERT_FALSE(unknown.ok());
  // The names come from the GPU table (once a hand-copied list that lacked MI250 and others).
  EXPECT_EQ(unknown.error().message, "unknown GPU 'P100' (known: " + gpu_spec_names(true) + ")");
  EXPECT_NE(unknown.error().message.find("MI250X"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
