// The fleet merge on hand-made rank summaries: numbering, stragglers, disagreements, groups,
// failed ranks, and a result that does not depend on the order summaries arrive in.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "attnprof/fleet.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

RankLayer layer(int64_t index, double us, const std::string& backend = "flash") {
  RankLayer l;
  l.index = index;
  l.time_us = us;
  l.backend = backend;
  l.kernel = backend + "_kernel";
  l.shape = "B4 H32 S2048x2048 D128";
  l.mask = "causal_flag";
  l.dtype = "bf16";
  return l;
}

// A rank of `layers` layers of `us` each, in file rank<N>.pt.trace.json.
RankSummary rank(int64_t n, double us, size_t layers = 4) {
  RankSummary s;
  s.file = "run/rank" + std::to_string(n) + ".pt.trace.json";
  s.trace_rank = n;
  for (size_t i = 0; i < layers; ++i) {
    s.layers.push_back(layer(static_cast<int64_t>(i), us));
    s.layer_time_us.push_back(us);
    s.attention_device_time_us += us;
  }
  s.groups = {{"0", "default_pg", 8}, {n < 4 ? "1" : "2", "tp", 4}};
  return s;
}

Report merged(std::vector<RankSummary> summaries) {
  Result<std::vector<FleetStage>> stages = plan_fleet(std::move(summaries), "run");
  EXPECT_TRUE(stages) << (stages ? "" : stages.error().message);
  return fleet_report(Report{}, std::move(stages->front()));
}

// Eight ranks within 2% of each other, rank 6 slow in layer 2, rank 3 on math in layer 1.
std::vector<RankSummary> fleet_of_eight() {
  std::vector<RankSummary> ranks;
  for (int64_t n = 0; n < 8; ++n) ranks.push_back(rank(n, 100.0 + static_cast<double>(n % 3)));
  ranks[6].layers[2].time_us = ranks[6].layer_time_us[2] = 300;
  ranks[6].attention_device_time_us += 200;
  RankLayer& math = ranks[3].layers[1];
  math.backend = "math";
  math.kernel = "gemm";
  math.mask = "bool padding";
  math.rejections = {{"flash", "flash.attn_mask", "Flash attention does not support non-null attn_mask"}};
  return ranks;
}

TEST(FleetMerge, ReportIsTheSameForAnyOrderTheSummariesArriveIn) {
  const std::string expected = report_to_json(merged(fleet_of_eight()));
  std::mt19937 shuffle(7);
  for (int i = 0; i < 5; ++i) {
    std::vector<RankSummary> ranks = fleet_of_eight();
    std::shuffle(ranks.begin(), ranks.end(), shuffle);
    EXPECT_EQ(report_to_json(merged(std::move(ranks))), expected);
  }
}

TEST(FleetMerge, SlowRankStragglesOverallAndInItsSlowLayerOnly) {
  const RanksSection s = *merged(fleet_of_eight()).ranks;
  ASSERT_GE(s.stragglers.size(), 2u);
  EXPECT_EQ(s.stragglers[0].rank, 6);
  EXPECT_EQ(s.stragglers[0].layer, -1);
  EXPECT_EQ(s.stragglers[0].worst_layer, 2);
  EXPECT_EQ(s.stragglers[1].rank, 6);
  EXPECT_EQ(s.stragglers[1].layer, 2);
  EXPECT_NEAR(s.stragglers[1].over_median, 300.0 / 101.0, 1e-9);
  EXPECT_EQ(s.stragglers.size(), 2u);  // 2% noise is no straggler
  EXPECT_EQ(s.slowest_rank, 6);
}

TEST(FleetMerge, RanksWithinFivePercentNeverStraggleEvenWithoutSpread) {
  std::vector<RankSummary> ranks;
  for (int64_t n = 0; n < 8; ++n) ranks.push_back(rank(n, 100.0));
  ranks[5] = rank(5, 104.0);  // MAD 0: only the 5% floor holds it back
  const RanksSection s = *merged(std::move(ranks)).ranks;
  EXPECT_TRUE(s.stragglers.empty());
  EXPECT_DOUBLE_EQ(s.straggler_threshold, 1.05);
}

TEST(FleetMerge, OtherBackendIsNamedWithTheRuleAndTheMaskThatDiffer) {
  const RanksSection s = *merged(fleet_of_eight()).ranks;
  std::vector<Disagreement> backend, kernel, mask;
  for (const Disagreement& d : s.disagreements)
    (d.facet == "backend" ? backend : d.facet == "kernel" ? kernel : mask).push_back(d);
  ASSERT_EQ(backend.size(), 1u);
  EXPECT_EQ(backend[0].rank, 3);
  EXPECT_EQ(backend[0].layer, 1);
  EXPECT_EQ(backend[0].value, "math");
  EXPECT_EQ(backend[0].majority, "flash");
  EXPECT_EQ(backend[0].majority_ranks, 7);
  EXPECT_NE(backend[0].cause.find("flash rejected: Flash attention does not support non-null attn_mask [flash.attn_mask]"),
            std::string::npos);
  EXPECT_NE(backend[0].cause.find("its mask is bool padding where most ranks have causal_flag"), std::string::npos);
  EXPECT_EQ(backend[0].cause.find("kernel"), std::string::npos);
  EXPECT_TRUE(kernel.empty());  // another backend's kernel is not a second finding
  ASSERT_EQ(mask.size(), 1u);
  EXPECT_EQ(mask[0].value, "bool padding");
}

TEST(FleetMerge, TwoRanksThatDifferHaveNoMajorityToDisagreeWith) {
  std::vector<RankSummary> ranks{rank(0, 100), rank(1, 100)};
  ranks[1].layers[0].backend = "math";
  EXPECT_TRUE(merged(std::move(ranks)).ranks->disagreements.empty());
}

TEST(FleetMerge, EachProcessGroupNamesItsSlowestMember) {
  const RanksSection s = *merged(fleet_of_eight()).ranks;
  ASSERT_EQ(s.groups.size(), 3u);
  for (const RankGroup& g : s.groups) {
    if (g.desc == "default_pg") {
      EXPECT_EQ(g.ranks.size(), 8u);
    } else if (g.name == "1") {
      EXPECT_EQ(g.ranks, (std::vector<int64_t>{0, 1, 2, 3}));
    } else {
      EXPECT_EQ(g.slowest_rank, 6);
    }
  }
}

TEST(FleetMerge, FailedRankIsListedAndTheRestMerged) {
  std::vector<RankSummary> ranks = fleet_of_eight();
  ranks.push_back(failed_rank("run/rank8.pt.trace.json", "run/rank8.pt.trace.json: malformed JSON near byte 28"));
  const Report report = merged(std::move(ranks));
  ASSERT_EQ(report.ranks->failed.size(), 1u);
  EXPECT_EQ(report.ranks->ranks.size(), 8u);
  EXPECT_EQ(report.source.files.size(), 9u);
  EXPECT_EQ(report.findings.front().rule, "ranks.failed");
  EXPECT_NE(report.findings.front().detail.find("malformed JSON"), std::string::npos);
}

TEST(FleetMerge, EveryRankFailedIsAnErrorNamingTheFirst) {
  auto stages = plan_fleet({failed_rank("b.json", "b: gzip"), failed_rank("a.json", "a: truncated")}, "run");
  ASSERT_FALSE(stages);
  EXPECT_EQ(stages.error().message, "run: every rank failed; first: a: truncated");
}

TEST(FleetMerge, RanksFromTracesUnlessTheyCollideThenFromFileNames) {
  std::vector<RankSummary> ranks{rank(0, 100), rank(1, 100), rank(2, 100)};
  for (RankSummary& r : ranks) r.trace_rank = 0;  // single-process runs all say rank 0
  ranks[0].file = "run/x_rank2.json";
  ranks[1].file = "run/y_rank0.json";
  ranks[2].file = "run/z_rank1.json";
  const RanksSection s = *merged(std::move(ranks)).ranks;
  EXPECT_EQ(s.ranks[0].file, "run/y_rank0.json");
  EXPECT_EQ(s.ranks[2].file, "run/x_rank2.json");

  std::vector<RankSummary> same{rank(0, 100), rank(0, 100)};
  same[1].file = "run/again_rank0.pt.trace.json";
  auto stages = plan_fleet(std::move(same), "run");
  ASSERT_FALSE(stages);
  EXPECT_NE(stages.error().message.find("are both rank 0"), std::string::npos);
}

TEST(FleetMerge, SummaryTravelsAsJsonUnchanged) {
  RankSummary s = fleet_of_eight()[3];
  s.backend_time_us = {{"flash", 300}, {"math", 101}};
  Result<RankSummary> back = rank_summary_from_json(rank_summary_to_json(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(rank_summary_to_json(*back), rank_summary_to_json(s));
  EXPECT_FALSE(rank_summary_from_json("{\"rank\": \"x\"}"));
}

TEST(FleetFileNames, RankReportStemDropsTheDirectoryAndTheTraceSuffixes) {
  EXPECT_EQ(rank_report_stem("run/rank3.pt.trace.json.gz"), "rank3");
  EXPECT_EQ(rank_report_stem("s3://b/run/x-TP-1.trace.json.gz"), "x-TP-1");
  EXPECT_EQ(rank_report_stem("profile_2.json"), "profile_2");
}

TEST(FleetMerge, RanksLinkTheirOwnReportWhereTheFleetWroteThem) {
  Result<std::vector<FleetStage>> stages = plan_fleet(fleet_of_eight(), "run");
  ASSERT_TRUE(stages);
  stages->front().reports_dir = "s3://bucket/reports/";
  const Report report = fleet_report(Report{}, std::move(stages->front()));
  EXPECT_EQ(report.ranks->ranks[3].report_html, "s3://bucket/reports/rank3.html");
  EXPECT_TRUE(merged(fleet_of_eight()).ranks->ranks[3].report_html.empty());
}

TEST(FleetFileNames, HostOfTensorboardTraceHandlerNames) {
  EXPECT_EQ(host_of_file_name("node-17_4242.1733000000000.pt.trace.json.gz"), "node-17");
  EXPECT_EQ(host_of_file_name("rank3.pt.trace.json"), "");
  EXPECT_EQ(host_of_file_name("a_b.pt.trace.json"), "");
}

TEST(FleetMemory, DeclaredMemoryGrowsWithTheFileAndCountsGzipUncompressed) {
  const size_t gib = size_t{1} << 30;
  EXPECT_GT(rank_task_memory_bytes(2 * gib, false), rank_task_memory_bytes(gib, false));
  EXPECT_GT(rank_task_memory_bytes(gib, true), rank_task_memory_bytes(gib, false));
  EXPECT_GE(rank_task_memory_bytes(0, false), size_t{256} << 20);  // a worker is never free
}

}  // namespace
}  // namespace attnprof
