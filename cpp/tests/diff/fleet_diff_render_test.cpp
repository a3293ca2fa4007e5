// `attnprof diff` of two fleet Reports: the diff section's text, Markdown and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/diff.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "render/fleet_test_reports.h"

namespace attnprof {
namespace {

// Eight even ranks against the same fleet where rank 5 ran layer 3 on math (1.40x).
Report rank_five_regressed() {
  RanksSection before;
  for (int64_t rank = 0; rank < 8; ++rank) before.ranks.push_back(testing::flash_rank(rank, 4, 250));
  before.median_attention_us = 1000;
  before.slowest_rank = 0;
  before.slowest_over_median = 1;
  DiffSection diff;
  diff.pairs.push_back(compare_reports(DiffSide{"base.json", {testing::fleet_report(before)}},
                                       DiffSide{"cand.json", {testing::fleet_report(testing::eight_rank_section())}},
                                       diff.thresholds));
  return diff_report(std::move(diff));
}

TEST(FleetDiffRender, TextNamesTheRegressedRankItsLayerAndItsBackendChange) {
  const std::string text = render_text(rank_five_regressed());
  EXPECT_NE(text.find("  regression: rank 5 attention device time 1.00 ms -> 1.40 ms (+40.0%, limit +10.0%), most in "
                      "layer 3 (250.0 us -> 650.0 us; backend flash -> math)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  ranks: 8 -> 8 ranks analysed (failed 0 -> 1); fleet median 1.00 ms  [ok]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    rank 5: 1.00 ms -> 1.40 ms (+40.0%)  [REGRESSION], most grown: layer 3 250.0 us -> 650.0 us\n"),
            std::string::npos);
  EXPECT_NE(text.find("    rank 5 layer 3: flash -> math\n"), std::string::npos);
  EXPECT_NE(text.find("    new straggler: rank 5 overall at 1.40x the median (most in layer 3)\n"), std::string::npos);
  EXPECT_NE(text.find("verdict: REGRESSION\n"), std::string::npos);
}

TEST(FleetDiffRender, MarkdownHasARowPerNotableRank) {
  const std::string md = render_markdown(rank_five_regressed());
  EXPECT_NE(md.find("**Ranks**: 8 -> 8 ranks analysed (failed 0 -> 1); fleet median attention time 1.00 ms (ok)\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| 5 | 1.00 ms -> 1.40 ms (+40.0%) | REGRESSION | layer 3 250.0 us -> 650.0 us | layer 3: flash -> math |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("| 4 | 1.00 ms"), std::string::npos);  // unchanged ranks are not listed
  EXPECT_NE(md.find("- New straggler: rank 5 in layer 3 at 2.60x the median\n"), std::string::npos);
}

TEST(FleetDiffRender, JsonCarriesEveryRankAndLayer) {
  const nlohmann::json j = nlohmann::json::parse(report_to_json(rank_five_regressed()))["diff"];
  EXPECT_EQ(j["exit_code"], 1);
  const nlohmann::json& k = j["pairs"][0]["ranks"];
  ASSERT_EQ(k["ranks"].size(), 8u);
  const nlohmann::json& five = k["ranks"][5];
  EXPECT_EQ(five["rank"], 5);
  EXPECT_TRUE(five["device_time_us"]["regression"].get<bool>());
  EXPECT_EQ(five["worst_layer"], 3);
  EXPECT_EQ(five["layers"][3]["backend_before"], "flash");
  EXPECT_EQ(five["layers"][3]["backend_after"], "math");
  EXPECT_TRUE(five["layers"][3]["backend_changed"].get<bool>());
  EXPECT_EQ(k["backend_changes"][0]["layers_text"], "layer 3");
  EXPECT_EQ(k["new_stragglers"].size(), 2u);
  EXPECT_FALSE(k["median_us"]["regression"].get<bool>());
  // A pair of single-trace Reports has no ranks comparison.
  DiffSection plain;
  plain.pairs.push_back(compare_reports(DiffSide{"a", {Report{}}}, DiffSide{"b", {Report{}}}, plain.thresholds));
  EXPECT_TRUE(nlohmann::json::parse(diff_section_to_json(plain))["pairs"][0]["ranks"].is_null());
}

}  // namespace
}  // namespace attnprof
