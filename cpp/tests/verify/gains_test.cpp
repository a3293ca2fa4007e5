// Saved gains (attnprof.verify(gains=FILE), `attnprof analyze --gains FILE`): the rules prefer
// the user's own measurement where fix, backend, dtype and device match and the length is near.
#include <gtest/gtest.h>

#include "attnprof/analyze.h"
#include "attnprof/rules.h"

namespace attnprof {
namespace {

rules::MeasuredGain eager_gain(int64_t seq_len, double speedup) {
  return {fix::kUseSdpa, "eager", "bf16", "sm90", seq_len, speedup, {speedup - 0.2, speedup + 0.2}, 3.0, "LlamaForCausalLM"};
}

TEST(UserGain, MatchesFixBackendDtypeDeviceAndTheNearestLengthWithinAFactorOfTwo) {
  const std::vector<rules::MeasuredGain> gains{eager_gain(512, 2.0), eager_gain(2048, 4.0)};
  auto g = rules::user_gain(gains, fix::kUseSdpa, "eager", 1800, "bf16", "sm90");
  ASSERT_TRUE(g);
  EXPECT_DOUBLE_EQ(g->speedup, 4.0);
  EXPECT_DOUBLE_EQ(g->memory_ratio, 3.0);
  EXPECT_NE(g->basis.find("measured on this model by attnprof.verify (LlamaForCausalLM on sm90, S=2048"),
            std::string::npos) << g->basis;
  EXPECT_FALSE(rules::user_gain(gains, fix::kUseSdpa, "eager", 8192, "bf16", "sm90"));  // 4x away
  EXPECT_FALSE(rules::user_gain(gains, fix::kUseSdpa, "eager", 2048, "fp16", "sm90"));
  EXPECT_FALSE(rules::user_gain(gains, fix::kUseSdpa, "eager", 2048, "bf16", "gfx942"));
  EXPECT_FALSE(rules::user_gain(gains, fix::kUnforceBackend, "eager", 2048, "bf16", "sm90"));
}

TEST(UserGain, ReplacesTheFixtureEstimateOfAnEagerCallsFinding) {
  Report r;
  r.source.arch = "sm90";
  r.source.versions = {{"torch", "2.11"}, {"cudnn", "9.19"}};
  Call c;
  c.backend = "eager";
  c.direction = "forward";
  c.layer = 0;
  c.shape = {2, 8, 8, 2048, 2048, 64, 64, "bf16"};
  r.calls.push_back(c);
  const auto table = rules::explain_calls(r.calls, r.source, false, {});
  ASSERT_FALSE(table.findings.empty());
  EXPECT_NE(table.findings[0].expected_gain, 4.0);  // the H200 fixture's estimate
  const auto mine = rules::explain_calls(r.calls, r.source, false, {"", "", "", {eager_gain(2048, 4.0)}});
  EXPECT_DOUBLE_EQ(mine.findings[0].expected_gain, 4.0);
  EXPECT_NE(mine.findings[0].detail.find("measured on this model by attnprof.verify"), std::string::npos);
}

TEST(GainsFile, BadDocumentsGiveOneLineNamingTheEntry) {
  EXPECT_NE(parse_measured_gains("[]", "g.json").error().message.find("a gains file is a JSON object"),
            std::string::npos);
  const auto unknown = parse_measured_gains(R"({"gains": [{"fix": "faster", "speedup": 2, "seq_len": 8}]})", "g.json");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "g.json: gains[0]: unknown fix \"faster\"");
  const auto zero = parse_measured_gains(R"({"gains": [{"fix": "use_sdpa", "speedup": 0, "seq_len": 8}]})", "g.json");
  EXPECT_NE(zero.error().message.find("must be positive"), std::string::npos);
  const auto good = parse_measured_gains(
      R"({"gains": [{"fix": "use_sdpa", "from_backend": "eager", "dtype": "fp32", "device": "cpu", "seq_len": 512, "speedup": 3.1}]})",
      "g.json");
  ASSERT_TRUE(good);
  EXPECT_EQ(good->at(0).device, "cpu");
}

}  // namespace
}  // namespace attnprof
