// The diff section through the Report's JSON: every field written is read back, the values
// derived for the JSON's readers are written and recomputed, and a Report of the schema before
// the section reads without one.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <gtest/gtest.h>

#include <string>

#include "attnprof/report_json.h"

namespace attnprof {
namespace {

MetricDelta metric(double before, double after, bool regression) {
  MetricDelta d;
  d.known = true;
  d.before = before;
  d.after = after;
  d.before_samples = 3;
  d.after_samples = 2;
  d.noise = 4;
  d.worsening = after - before;
  d.limit = 0.1 * before;
  d.gated = true;
  d.regression = regression;
  return d;
}

// One pair with a field of every kind filled: layers, a backend change, causes with a commit,
// and two fleets rank by rank.
DiffVerdict filled_verdict() {
  DiffVerdict v;
  v.name = "llama";
  v.baseline = "base.json";
  v.candidate = "cand.json";
  v.baseline_runs = 2;
  v.candidate_runs = 1;
  v.regression = true;
  v.reasons = {"attention device time 1.00 ms -> 2.00 ms (+100.0%, limit +10.0%)"};
  v.calls_before = 8;
  v.calls_after = 8;
  v.attention_time_us = metric(1000, 2000, true);
  v.fused_time_pct = metric(100, 0, false);
  v.peak_bytes = metric(1 << 20, 1 << 21, false);
  LayerDelta l;
  l.layer = 3;
  l.module = "model.layers.3.self_attn";
  l.backend_before = "cudnn";
  l.backend_after = "math";
  l.class_before = "fused";
  l.class_after = "eager";
  l.time_us = metric(250, 500, false);
  l.input_changes = {"head_dim 128 -> 96"};
  l.fallback_explanation = "cudnn: head_dim 96 not supported";
  v.layers.push_back(l);
  v.backend_changes.push_back(BackendChange{{2, 3}, "cudnn", "math", "head_dim 96"});
  v.causes.inputs = {"head_dim 128 -> 96 (layers 2-3)"};
  v.causes.environment = {"torch 2.11 -> 2.13"};
  CodeChange code;
  code.before_commit = "aaaa";
  code.after_commit = "bbbb";
  code.history_available = true;
  code.commits.push_back(CodeCommit{"bbbb", "halve head_dim", {"model.py"}});
  v.causes.code = code;
  RanksDelta k;
  k.ranks_before = k.ranks_after = 2;
  RankDelta r;
  r.rank = 1;
  r.time_us = metric(500, 700, true);
  r.worst_layer = 0;
  r.layers.push_back(RankLayerDelta{0, true, true, 250, 450, "flash", "math"});
  k.ranks.push_back(r);
  k.backend_changes.push_back(RankBackendChange{1, {0}, "flash", "math"});
  k.new_stragglers.push_back(Straggler{1, -1, 700, 600, 1.1667, 0});
  v.ranks = k;
  v.notes = {"peak memory not compared"};
  return v;
}

Report report_with_diff() {
  Report report;
  DiffSection& diff = report.diff.emplace();
  diff.thresholds = DiffThresholds{2, 0.05, 0.25};
  diff.noise_rule = "the rule";
  diff.pairs.push_back(filled_verdict());
  diff.unmatched = {"vit.json"};
  return report;
}

TEST(DiffSectionJson, EveryFieldOfTheSectionRoundTripsThroughTheReport) {
  const Report report = report_with_diff();
  const std::string text = report_to_json(report);
  auto back = report_from_json(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->diff.has_value());
  EXPECT_EQ(report_to_json(*back), text);  // nothing lost, nothing added
  const DiffSection& d = *back->diff;
  EXPECT_DOUBLE_EQ(d.thresholds.max_memory_increase, 0.25);
  EXPECT_EQ(d.noise_rule, "the rule");
  ASSERT_EQ(d.pairs.size(), 1u);
  const DiffVerdict& v = d.pairs[0];
  EXPECT_DOUBLE_EQ(v.attention_time_us.after, 2000);  // written as attention_device_time_us
  EXPECT_EQ(v.attention_time_us.before_samples, 3);
  ASSERT_EQ(v.layers.size(), 1u);
  EXPECT_DOUBLE_EQ(v.layers[0].time_us.after, 500);  // written as device_time_us
  EXPECT_EQ(v.layers[0].class_after, "eager");
  EXPECT_EQ(v.backend_changes[0].layers, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(v.causes.code.has_value());
  EXPECT_EQ(v.causes.code->commits[0].files, std::vector<std::string>{"model.py"});
  ASSERT_TRUE(v.ranks.has_value());
  EXPECT_TRUE(v.ranks->ranks[0].time_us.regression);
  EXPECT_DOUBLE_EQ(v.ranks->ranks[0].layers[0].after_us, 450);
  EXPECT_DOUBLE_EQ(v.ranks->new_stragglers[0].over_median, 1.1667);
  EXPECT_EQ(d.unmatched, std::vector<std::string>{"vit.json"});
}

TEST(DiffSectionJson, DerivedValuesAreWrittenForReadersOfTheJson) {
  const nlohmann::json j = nlohmann::json::parse(report_to_json(report_with_diff()))["diff"];
  EXPECT_EQ(j["regression"], true);  // the pair regressed
  EXPECT_EQ(j["exit_code"], 1);
  const nlohmann::json& pair = j["pairs"][0];
  EXPECT_DOUBLE_EQ(pair["attention_device_time_us"]["relative"].get<double>(), (2000.0 - 1000.0) / 1000.0);
  EXPECT_EQ(pair["layers"][0]["backend_changed"], true);  // cudnn -> math
  EXPECT_EQ(pair["backend_changes"][0]["layers_text"], "layers 2-3");
  EXPECT_EQ(pair["ranks"]["ranks"][0]["layers"][0]["backend_changed"], true);
  EXPECT_EQ(pair["ranks"]["backend_changes"][0]["layers_text"], "layer 0");
  // The section alone (attnprof.compare's data) is the same object.
  EXPECT_EQ(nlohmann::json::parse(diff_section_to_json(*report_with_diff().diff)), j);
}

TEST(DiffSectionJson, ADerivedValueInTheJsonIsRecomputedNotRead) {
  nlohmann::json j = nlohmann::json::parse(report_to_json(report_with_diff()));
  j["diff"]["exit_code"] = 0;
  j["diff"]["regression"] = false;
  j["diff"]["pairs"][0]["backend_changes"][0]["layers_text"] = "layer 9";
  auto back = report_from_json(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message;
  const nlohmann::json again = nlohmann::json::parse(report_to_json(*back))["diff"];
  EXPECT_EQ(again["exit_code"], 1);
  EXPECT_EQ(again["pairs"][0]["backend_changes"][0]["layers_text"], "layers 2-3");
}

TEST(DiffSectionJson, AReportOfTheSchemaBeforeTheSectionReadsWithoutOne) {
  auto old = report_from_json(R"({"schema_version": "1.7", "calls": [], "layers": []})");
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_FALSE(old->diff.has_value());
  EXPECT_TRUE(nlohmann::json::parse(report_to_json(Report{}))["diff"].is_null());
}

TEST(DiffSectionJson, ABadFieldOfTheSectionIsNamed) {
  auto bad = diff_section_from_json(R"({"pairs": [{"layers": [{"device_time_us": {"before": "fast"}}]}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("diff section"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("before"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace attnprof
