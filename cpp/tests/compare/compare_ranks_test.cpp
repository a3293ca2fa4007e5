// Two fleet Reports compared rank by rank: the gate names the rank and the layer.
#include <gtest/gtest.h>

#include <algorithm>

#include "attnprof/compare.h"
#include "render/fleet_test_reports.h"

namespace attnprof {
namespace {

using testing::eight_rank_section;
using testing::flash_rank;
using testing::fleet_report;

// `n` ranks of four flash layers of `layer_us` each: the median is 4 x layer_us, nobody straggles.
RanksSection even_section(int64_t n, double layer_us) {
  RanksSection k;
  for (int64_t rank = 0; rank < n; ++rank) k.ranks.push_back(flash_rank(rank, 4, layer_us));
  k.median_attention_us = 4 * layer_us;
  k.slowest_rank = 0;
  k.slowest_over_median = 1;
  k.straggler_threshold = 1.05;
  return k;
}

DiffVerdict compare(const RanksSection& before, const RanksSection& after) {
  const std::vector<Report> b{fleet_report(before)}, a{fleet_report(after)};
  return compare_runs(b, a, DiffThresholds{});
}

bool has_reason(const DiffVerdict& v, const std::string& text) {
  return std::find(v.reasons.begin(), v.reasons.end(), text) != v.reasons.end();
}

TEST(CompareRanks, ARankSlowerBeyondTheThresholdIsARegressionNamingTheRankAndTheLayer) {
  const DiffVerdict v = compare(even_section(8, 250), eight_rank_section());
  ASSERT_TRUE(v.ranks);
  EXPECT_FALSE(v.attention_time_us.regression);  // the bodies are the same: only rank 5 grew
  EXPECT_TRUE(v.regression);
  EXPECT_EQ(v.reasons, std::vector<std::string>{"rank 5 attention device time 1.00 ms -> 1.40 ms (+40.0%, limit +10.0%), "
                                                "most in layer 3 (250.0 us -> 650.0 us; backend flash -> math)"});
  const RankDelta& five = v.ranks->ranks[5];
  EXPECT_EQ(five.rank, 5);
  EXPECT_TRUE(five.time_us.regression);
  EXPECT_EQ(five.worst_layer, 3);
  ASSERT_EQ(five.layers.size(), 4u);
  EXPECT_DOUBLE_EQ(five.layers[3].after_us, 650);
  EXPECT_FALSE(v.ranks->ranks[4].time_us.regression);
  EXPECT_FALSE(v.ranks->median_us.regression);
}

TEST(CompareRanks, ABackendChangeInARankLayerAndNewStragglersAreListed) {
  const DiffVerdict v = compare(even_section(8, 250), eight_rank_section());
  ASSERT_EQ(v.ranks->backend_changes.size(), 1u);
  const RankBackendChange& c = v.ranks->backend_changes[0];
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.layers, std::vector<int64_t>{3});
  EXPECT_EQ(c.before, "flash");
  EXPECT_EQ(c.after, "math");
  ASSERT_EQ(v.ranks->new_stragglers.size(), 2u);
  EXPECT_EQ(v.ranks->new_stragglers[0].layer, -1);
  EXPECT_EQ(v.ranks->new_stragglers[1].layer, 3);
  // The same straggler on both sides is not new.
  EXPECT_TRUE(compare(eight_rank_section(), eight_rank_section()).ranks->new_stragglers.empty());
}

TEST(CompareRanks, TheFleetMedianBeyondTheThresholdIsARegression) {
  const DiffVerdict v = compare(even_section(8, 250), even_section(8, 300));
  EXPECT_TRUE(v.ranks->median_us.regression);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_TRUE(has_reason(v, "fleet median attention device time 1.00 ms -> 1.20 ms (+20.0%, limit +10.0%)"));
  EXPECT_EQ(v.reasons.size(), 1u + 8u);  // the median and each of the eight ranks
}

TEST(CompareRanks, AGrowthWithinTheThresholdIsNoRegression) {
  RanksSection after = even_section(8, 250);
  testing::run_layer_as(after.ranks[5], 3, backend::kFlash, 290);  // +40 us of 1 ms: +4%
  const DiffVerdict v = compare(even_section(8, 250), after);
  EXPECT_FALSE(v.regression);
  EXPECT_TRUE(v.ranks->ranks[5].time_us.known);
  EXPECT_NEAR(v.ranks->ranks[5].time_us.relative(), 0.04, 1e-12);
  EXPECT_EQ(v.ranks->ranks[5].worst_layer, 3);
}

TEST(CompareRanks, ARankWhoseTimeIsUnknownIsNotCompared) {
  RanksSection after = even_section(8, 250);
  after.ranks[2] = flash_rank(2, 4, 900);
  after.ranks[2].attention_time_unknown = true;  // graph-captured: its 3.6 ms is not a time
  const DiffVerdict v = compare(even_section(8, 250), after);
  EXPECT_FALSE(v.ranks->ranks[2].time_us.known);
  EXPECT_EQ(v.ranks->ranks[2].time_us.after_unknown, 1);
  EXPECT_FALSE(v.ranks->ranks[2].time_us.regression);
  EXPECT_FALSE(v.regression);
}

TEST(CompareRanks, ManySlowRanksNameTheTenWorstAndCountTheRest) {
  RanksSection after = even_section(16, 250);
  for (RankSummary& r : after.ranks) testing::run_layer_as(r, 0, backend::kFlash, 250 + 10.0 * (r.rank + 20));
  after.median_attention_us = 1000;  // keep the fleet median out of the reasons
  const DiffVerdict v = compare(even_section(16, 250), after);
  ASSERT_EQ(v.reasons.size(), 11u);
  EXPECT_TRUE(v.reasons[0].starts_with("rank 15 attention device time 1.00 ms -> 1.35 ms (+35.0%")) << v.reasons[0];
  EXPECT_TRUE(v.reasons[9].starts_with("rank 6 ")) << v.reasons[9];
  EXPECT_EQ(v.reasons[10], "6 more ranks beyond the limit (listed in the ranks comparison)");
}

TEST(CompareRanks, RanksAreMatchedByNumberAndThoseOnOneSideAreListed) {
  RanksSection after = even_section(7, 250);
  after.ranks.push_back(flash_rank(9, 4, 250));
  const DiffVerdict v = compare(even_section(8, 250), after);
  EXPECT_EQ(v.ranks->only_baseline, std::vector<int64_t>{7});
  EXPECT_EQ(v.ranks->only_candidate, std::vector<int64_t>{9});
  EXPECT_EQ(v.ranks->ranks.size(), 7u);
  EXPECT_EQ(v.ranks->ranks_before, 8);
  EXPECT_EQ(v.ranks->ranks_after, 8);
}

TEST(CompareRanks, BodiesOfDifferentRanksAreNoted) {
  RanksSection after = even_section(8, 250);
  after.slowest_rank = 3;
  const DiffVerdict v = compare(even_section(8, 250), after);
  const bool noted = std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) {
    return n.find("sets rank 0 (baseline) against rank 3 (candidate)") != std::string::npos;
  });
  EXPECT_TRUE(noted);
}

TEST(CompareRanks, OnlyOneSideWithRanksIsANoteAndNoRankComparison) {
  Report single = fleet_report(even_section(8, 250));
  single.ranks.reset();
  const std::vector<Report> b{single}, a{fleet_report(even_section(8, 250))};
  const DiffVerdict v = compare_runs(b, a, DiffThresholds{});
  EXPECT_FALSE(v.ranks);
  EXPECT_NE(std::find(v.notes.begin(), v.notes.end(), "only the candidate has a ranks section: ranks not compared"),
            v.notes.end());
}

}  // namespace
}  // namespace attnprof
