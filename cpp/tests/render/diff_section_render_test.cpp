// The diff section in every format, from the renderers every section goes through: the real
// cuDNN run against a copy edited to take 1.5x the time with head_dim 96, so the regression and
// its cause are known before the comparison runs.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "attnprof/analyze.h"
#include "attnprof/compare.h"
#include "attnprof/dashboard.h"
#include "attnprof/render.h"
#include "attnprof/text_format.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

using nlohmann::json;

struct Pair {
  Report base, cand;
  double before_us = 0;  // the baseline's attention time per step (median over its steps)
};

// The median over steps of the calls' summed device time, as docs/diff.md defines a side's value.
double median_step_time(const Report& r) {
  std::map<int64_t, double> per_step;
  for (const Call& c : r.calls) per_step[c.step] += c.device_time_us;
  std::vector<double> sums;
  for (const auto& [step, us] : per_step) sums.push_back(us);
  std::sort(sums.begin(), sums.end());
  const size_t n = sums.size();
  return n % 2 ? sums[n / 2] : (sums[n / 2 - 1] + sums[n / 2]) / 2;
}

Pair edited_pair() {
  auto base = analyze_file(testing::fixture(testing::kCudnnTrace), {});
  EXPECT_TRUE(base.ok()) << base.error().message;
  Pair p{*base, *base};
  for (Call& c : p.cand.calls) {
    c.device_time_us *= 1.5;
    c.shape.D = c.shape.Dv = 96;
  }
  p.before_us = median_step_time(p.base);
  return p;
}

// "attention device time 1.12 ms -> 1.68 ms (+50.0%, limit +10.0%": the gate's reason up to
// the noise, which depends on the spread of the steps.
std::string time_reason(const Pair& p) {
  return fmt::format("attention device time {} -> {} (+50.0%, limit +10.0%", time_text(p.before_us),
                     time_text(1.5 * p.before_us));
}

const std::string kCause = "head_dim 128 -> 96 (layers 0-3)";  // Llama-7B's head_dim, 4 layers

Report verdict_of(const Pair& p) {
  Report verdict;  // as `attnprof diff` writes it: the diff section alone
  DiffSection& diff = verdict.diff.emplace();
  diff.pairs.push_back(compare_reports(DiffSide{"base.json", {p.base}}, DiffSide{"cand.json", {p.cand}}, diff.thresholds));
  return verdict;
}

TEST(DiffSectionRender, TextNamesTheRegressionAndItsCause) {
  const Pair p = edited_pair();
  ASSERT_EQ(p.base.layers.size(), 4u);
  ASSERT_EQ(p.base.calls.front().shape.D, 128);
  const std::string text = render_text(verdict_of(p));
  EXPECT_NE(text.find("attention: REGRESSION\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  regression: " + time_reason(p)), std::string::npos) << text;
  EXPECT_NE(text.find("  inputs: " + kCause + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find("verdict: REGRESSION\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("device:"), std::string::npos) << "a diff alone has no run of its own to describe";
}

TEST(DiffSectionRender, MarkdownNamesTheRegressionAndItsCauseEscaped) {
  const Pair p = edited_pair();
  const std::string md = render_markdown(verdict_of(p));
  EXPECT_EQ(md.rfind("## attnprof diff: REGRESSION\n", 0), 0u) << md;
  EXPECT_NE(md.find("- **Regression:** " + time_reason(p)), std::string::npos) << md;
  EXPECT_NE(md.find("- Inputs: head\\_dim 128 -> 96 (layers 0-3)\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| Attention device time | " + time_text(p.before_us) + " -> " + time_text(1.5 * p.before_us) +
                    " (+50.0%) | REGRESSION |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("# attnprof report"), std::string::npos);
}

TEST(DiffSectionRender, TheDashboardCarriesTheSectionInTheRunsData) {
  const Pair p = edited_pair();
  const std::string page = render_html({verdict_of(p)}, DashboardOptions{.labels = {}, .sections = {"diff"}});
  const std::string open = "<script type=\"application/json\" id=\"attnprof-data\">";
  const size_t from = page.find(open) + open.size();
  const json data = json::parse(page.substr(from, page.find("</script>", from) - from));
  const json& pair = data["runs"][0]["diff"]["pairs"][0];
  EXPECT_EQ(pair["regression"], true);
  ASSERT_EQ(pair["reasons"].size(), 1u);
  EXPECT_EQ(pair["reasons"][0].get<std::string>().rfind(time_reason(p), 0), 0u) << pair["reasons"];
  EXPECT_EQ(pair["causes"]["inputs"], json::array({kCause}));
  EXPECT_DOUBLE_EQ(pair["attention_device_time_us"]["before"].get<double>(), p.before_us);
}

// Several runs together: the later run's own report, then its comparison with the first.
TEST(DiffSectionRender, ALaterRunShowsItsSectionsThenItsComparisonWithTheFirst) {
  const Pair p = edited_pair();
  std::vector<Report> runs{p.base, p.cand};
  compare_with_first(runs);
  EXPECT_FALSE(runs[0].diff.has_value());
  ASSERT_TRUE(runs[1].diff.has_value());
  const std::string text = render_text(runs[1]);
  const size_t own = text.find("attention: " + std::to_string(p.cand.calls.size()) + " call"), diff = text.find("  regression: " + time_reason(p));
  ASSERT_NE(own, std::string::npos) << text;
  ASSERT_NE(diff, std::string::npos) << text;
  EXPECT_LT(own, diff);
  EXPECT_NE(text.find("against the first run: REGRESSION\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  baseline  " + p.base.source.files.front()), std::string::npos) << text;
  const std::string md = render_markdown(runs[1]);
  EXPECT_LT(md.find("# attnprof report"), md.find("## attnprof diff: REGRESSION"));
  EXPECT_EQ(render_text(runs[0]).find("verdict:"), std::string::npos) << "the first run is the baseline";
}

}  // namespace
}  // namespace attnprof
