// The ranks section of a fleet Report in the text and Markdown reports and the dashboard's view.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/dashboard.h"
#include "attnprof/render.h"
#include "render/fleet_test_reports.h"
#include "render/html_view.h"

namespace attnprof {
namespace {

using nlohmann::json;
using testing::eight_rank_section;
using testing::fleet_report;

const std::string kRank5Math =
    "layer 3: rank 5 ran math (most ranks: flash, 7 of 8): flash rejected: flash attention does not support an "
    "attn_mask tensor (bool [4, 1, 2048, 2048]) [flash.attn_mask]; its mask is bool padding where most ranks have none";

json embedded_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"attnprof-data\">";
  const size_t begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

TEST(RanksRows, OneLineSaysRanksFailuresMedianSlowestAndTheStragglerThreshold) {
  EXPECT_EQ(ranks_line(eight_rank_section()),
            "8 ranks analysed, 1 failed; median attention device time 1.00 ms; slowest rank 5 at 1.40x the median; "
            "1 straggling beyond 1.05x");
  RanksSection two;
  two.ranks = {testing::flash_rank(0, 2, 100), testing::flash_rank(1, 2, 100)};
  two.ranks[1].attention_time_unknown = true;
  EXPECT_EQ(ranks_line(two),
            "2 ranks analysed; median attention device time unknown; no slowest rank (fewer than 2 ranks with a known "
            "attention time); no straggler threshold (fewer than 3 ranks with a known attention time)");
}

TEST(RanksRows, DisagreementsOfSeveralRanksInTheSameLayersShareOneLine) {
  const std::vector<std::string> lines = disagreement_lines(eight_rank_section());
  ASSERT_EQ(lines.size(), 3u);
  // Eight shape differences (ranks 6 and 7, layers 0-3) are one line.
  EXPECT_EQ(lines[0], "layers 0-3: ranks 6-7 had shape B4 H32/8 S4096x4096 D128 (most ranks: B4 H32/8 S2048x2048 D128, 6 of 8)");
  EXPECT_EQ(lines[1], kRank5Math);
  EXPECT_EQ(lines[2], "layer 3: rank 5 had mask bool padding (most ranks: none, 7 of 8): " + std::string(testing::kFlashRejectedMask));
}

TEST(RanksRows, TheSameDifferenceInOtherLayersOfOtherRanksStaysApart) {
  RanksSection k = eight_rank_section();
  k.disagreements.erase(k.disagreements.begin() + 1, k.disagreements.end());  // rank 6, layer 0 only
  k.disagreements.push_back({2, "shape", "B4 H32/8 S2048x2048 D128", 6, 7, "B4 H32/8 S4096x4096 D128", ""});
  const std::vector<std::string> lines = disagreement_lines(k);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].starts_with("layer 0: rank 6 had shape")) << lines[0];
  EXPECT_TRUE(lines[1].starts_with("layer 2: rank 7 had shape")) << lines[1];
}

TEST(RanksRows, AKernelDisagreementNamesBothKernelsAsTheActivationMapShortensThem) {
  RanksSection k = eight_rank_section();
  k.disagreements = {{1, "kernel", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128>>(Flash_fwd_params)",
                      7, 4, "void flash::flash_fwd_kernel<Kernel_traits<128>>(Flash_fwd_params)", ""}};
  EXPECT_EQ(disagreement_lines(k), std::vector<std::string>{"layer 1: rank 4 ran kernel flash::flash_fwd_kernel (most "
                                                            "ranks: pytorch_flash::flash_fwd_kernel, 7 of 8)"});
}

TEST(RanksRows, StragglersGroupsAndFailuresAsTheirCells) {
  const RanksSection k = eight_rank_section();
  const auto stragglers = straggler_rows(k, kMaxRankLines);
  ASSERT_EQ(stragglers.size(), 2u);
  EXPECT_EQ(stragglers[0], (std::vector<std::string>{"5", "all layers", "1.40 ms", "1.00 ms", "1.40x", "3"}));
  EXPECT_EQ(stragglers[1], (std::vector<std::string>{"5", "layer 3", "650.0 us", "250.0 us", "2.60x", "-"}));
  EXPECT_EQ(straggler_rows(k, 1).size(), 1u);
  EXPECT_EQ(group_rows(k)[1], (std::vector<std::string>{"tp (1)", "ranks 4-7", "5", "1.40x"}));
  EXPECT_EQ(failed_rank_rows(k)[0],
            (std::vector<std::string>{"/runs/job/rank8.pt.trace.json.gz",
                                      "truncated gzip stream: the file ends inside a deflate block"}));
}

TEST(RanksText, NamesTheRankThatRanAnotherBackendItsStragglingGroupsAndFailures) {
  const std::string text = render_text(fleet_report(eight_rank_section()));
  EXPECT_NE(text.find("\nRanks: 8 ranks analysed, 1 failed; median attention device time 1.00 ms; slowest rank 5 at "
                      "1.40x the median"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  " + kRank5Math + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Stragglers (overall first):\n  rank where      time     median   x median worst layer\n"
                      "  5    all layers 1.40 ms  1.00 ms  1.40x    3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Process groups:\n"), std::string::npos);
  EXPECT_NE(text.find("  default_pg (0) ranks 0-7 5            1.40x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Failed ranks:\n  /runs/job/rank8.pt.trace.json.gz: truncated gzip stream"), std::string::npos);
  // Before the per-call sections: a fleet's first question is which rank differs.
  EXPECT_LT(text.find("\nRanks: "), text.find("Activation map"));
}

TEST(RanksText, ShowsTenDisagreementLinesAndCountsTheRest) {
  RanksSection k = eight_rank_section();
  for (RankSummary& r : k.ranks) r = testing::flash_rank(r.rank, 15, 250);
  k.disagreements.clear();
  for (int64_t layer = 0; layer < 15; ++layer)  // a different value per layer: 15 lines
    k.disagreements.push_back({layer, "dtype", "bf16", 7, 2, "fp32 v" + std::to_string(layer), ""});
  const std::string text = render_text(fleet_report(k));
  EXPECT_NE(text.find("  layer 9: rank 2 ran in fp32 v9 (most ranks: bf16, 7 of 8)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("layer 10: rank 2"), std::string::npos);
  EXPECT_NE(text.find("  ... 5 more (JSON Report: ranks.disagreements)\n"), std::string::npos);
}

TEST(RanksText, AReportWithoutRanksHasNoRanksSection) {
  Report r = fleet_report(eight_rank_section());
  r.ranks.reset();
  EXPECT_EQ(render_text(r).find("Ranks:"), std::string::npos);
  EXPECT_EQ(render_markdown(r).find("## Ranks"), std::string::npos);
}

TEST(RanksMarkdown, TablesOfStragglersGroupsAndFailuresAndEscapedDisagreements) {
  const std::string md = render_markdown(fleet_report(eight_rank_section()));
  EXPECT_NE(md.find("\n## Ranks\n\n8 ranks analysed, 1 failed; median attention device time 1.00 ms;"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| rank | where | time | median | x median | worst layer |\n|---|---|---|---|---|---|\n"
                    "| 5 | all layers | 1.40 ms | 1.00 ms | 1.40x | 3 |\n| 5 | layer 3 | 650.0 us | 250.0 us | 2.60x | - |\n"),
            std::string::npos)
      << md;
  // Brackets and underscores of the rule id are escaped, so the cause cannot become a link.
  EXPECT_NE(md.find("- layer 3: rank 5 ran math (most ranks: flash, 7 of 8): flash rejected: flash attention does not "
                    "support an attn\\_mask tensor (bool \\[4, 1, 2048, 2048\\]) \\[flash.attn\\_mask\\];"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| tp (1) | ranks 4-7 | 5 | 1.40x |\n"), std::string::npos);
  EXPECT_NE(md.find("### Failed ranks\n\n| file | error |\n|---|---|\n| /runs/job/rank8.pt.trace.json.gz | truncated "),
            std::string::npos);
}

TEST(RanksView, HeatMapHasARowPerRankAndACellPerLayerWithItsRatioToTheLayerMedian) {
  const json k = render::run_view(fleet_report(eight_rank_section()), "fleet")["ranks"];
  ASSERT_TRUE(k.is_object());
  EXPECT_EQ(k["heat"]["layers"], json({0, 1, 2, 3}));
  EXPECT_EQ(k["heat"]["medians"], json({250.0, 250.0, 250.0, 250.0}));
  ASSERT_EQ(k["heat"]["rows"].size(), 8u);
  for (const json& row : k["heat"]["rows"]) ASSERT_EQ(row["cells"].size(), 4u);
  const json& cell = k["heat"]["rows"][5]["cells"][3];
  EXPECT_EQ(cell["layer"], 3);
  EXPECT_DOUBLE_EQ(cell["us"].get<double>(), 650);
  EXPECT_DOUBLE_EQ(cell["ratio"].get<double>(), 2.6);
  EXPECT_EQ(cell["backend"], "math");
  EXPECT_EQ(cell["disagree"], json({"backend", "mask"}));
  const json& plain = k["heat"]["rows"][0]["cells"][3];
  EXPECT_DOUBLE_EQ(plain["ratio"].get<double>(), 1.0);
  EXPECT_FALSE(plain.contains("disagree"));
  EXPECT_EQ(k["heat"]["rows"][6]["cells"][0]["disagree"], json({"shape"}));
}

TEST(RanksView, TablesAreTheTextReportsRowsAndARankWithUnknownTimeHasNoRatio) {
  RanksSection section = eight_rank_section();
  section.ranks[2].attention_time_unknown = true;
  const json k = render::run_view(fleet_report(section), "fleet")["ranks"];
  EXPECT_EQ(k["disagreements"][1], kRank5Math);
  EXPECT_EQ(k["stragglers"]["rows"][0], json({"5", "all layers", "1.40 ms", "1.00 ms", "1.40x", "3"}));
  EXPECT_EQ(k["stragglers"]["ranks"], json({5, 5}));
  EXPECT_EQ(k["failed"][0][0], "/runs/job/rank8.pt.trace.json.gz");
  EXPECT_EQ(k["groups"]["rows"][0][0], "default_pg (0)");
  EXPECT_TRUE(k["heat"]["rows"][2]["cells"][0]["ratio"].is_null());
  EXPECT_TRUE(k["rows"][2]["over_median"].is_null());
  EXPECT_DOUBLE_EQ(k["rows"][5]["over_median"].get<double>(), 1.4);
  EXPECT_EQ(k["rows"][5]["backends"], "flash 53.6%, math 46.4%");  // 750 and 650 of 1400 us
}

TEST(RanksView, RanksLinkToTheirOwnDashboardsWhereTheFleetWroteThemAndOnlyToPathsABrowserOpens) {
  RanksSection k = eight_rank_section();
  k.ranks[0].report_html = "/shared/reports/rank0.html";
  k.ranks[1].report_html = "reports/rank1.html";
  k.ranks[2].report_html = "https://ci.example/run-17/rank2.html";
  k.ranks[3].report_html = "s3://bucket/run-17-reports/rank3.html";
  k.ranks[4].report_html = "javascript:alert(1)";
  const json rows = render::run_view(fleet_report(k), "fleet")["ranks"]["rows"];
  EXPECT_EQ(rows[0]["report_href"], "/shared/reports/rank0.html");
  EXPECT_EQ(rows[1]["report_href"], "reports/rank1.html");
  EXPECT_EQ(rows[2]["report_href"], "https://ci.example/run-17/rank2.html");
  EXPECT_TRUE(rows[3]["report_href"].is_null());  // shown as text: a browser cannot open s3://
  EXPECT_EQ(rows[3]["report_html"], "s3://bucket/run-17-reports/rank3.html");
  EXPECT_TRUE(rows[4]["report_href"].is_null());
  EXPECT_TRUE(rows[5]["report_href"].is_null());  // no --out-dir: no link
  // The page takes the target from the view only.
  const std::string page = render_html({fleet_report(k)});
  EXPECT_EQ(embedded_data(page)["runs"][0]["ranks"]["rows"][0]["report_href"], "/shared/reports/rank0.html");
}

}  // namespace
}  // namespace attnprof
