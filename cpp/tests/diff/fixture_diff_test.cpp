// `attnprof diff` on the real H200 trace pairs (fixtures/h200-torch2.11), through the library
// and through the CLI binary: verdicts, exit codes, named causes, Markdown and JSON outputs.
// Expected device times are ground_truth.json's sums of aten::scaled_dot_product_attention.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attnprof/diff.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/render.h"
#include "attnprof/report.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

std::string trace(const std::string& name) {
  return std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/" + name + ".pt.trace.json.gz";
}

const std::string kBase = "llama7b4l_sdpa_bf16_b4_s2048";

DiffVerdict diff_one(const std::string& base, const std::string& cand) {
  Result<DiffSection> r = diff_paths(trace(base), trace(cand), {});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  EXPECT_EQ(r->pairs.size(), 1u);
  return r->pairs.front();
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(FixtureDiff, ForcedMathTurnsEveryLayerUnfusedAndIsARegression) {
  const DiffVerdict v = diff_one(kBase, kBase + "_force_math");
  EXPECT_TRUE(v.regression);
  ASSERT_EQ(v.backend_changes.size(), 1u);
  EXPECT_EQ(format_layer_ranges(v.backend_changes[0].layers), "layers 0-3");
  EXPECT_EQ(v.backend_changes[0].before, "cudnn");
  EXPECT_EQ(v.backend_changes[0].after, "math");
  EXPECT_DOUBLE_EQ(v.fused_time_pct.before, 100);
  EXPECT_DOUBLE_EQ(v.fused_time_pct.after, 0);
  EXPECT_DOUBLE_EQ(v.fused_calls_pct.after, 0);
  EXPECT_NEAR(v.attention_time_us.before, 1118.2, 1.0);   // 4 cuDNN calls
  EXPECT_NEAR(v.attention_time_us.after, 52471.5, 1.0);   // 4 math calls
  EXPECT_TRUE(v.causes.inputs.empty());  // same inputs: the backend was forced
}

TEST(FixtureDiff, PaddingMaskIsNamedAsWhatChanged) {
  const DiffVerdict v = diff_one(kBase, kBase + "_padmask");
  EXPECT_TRUE(contains(v.causes.inputs, "mask appeared (bool [4,1,2048,2048]) (layers 0-3)"));
  EXPECT_TRUE(v.backend_changes.empty());  // cuDNN takes the mask on H200 (ground truth)
  EXPECT_NEAR(v.attention_time_us.after, 3565.6, 1.0);
  EXPECT_TRUE(v.attention_time_us.regression);
}

TEST(FixtureDiff, Fp32IsNamedAsTheCauseOfLeavingCudnn) {
  const DiffVerdict v = diff_one(kBase, "llama7b4l_sdpa_fp32_b4_s2048");
  EXPECT_TRUE(contains(v.causes.inputs, "dtype bf16 -> fp32 (layers 0-3)"));
  ASSERT_EQ(v.backend_changes.size(), 1u);
  EXPECT_EQ(v.backend_changes[0].after, "efficient");
  EXPECT_NEAR(v.attention_time_us.after, 12933.6, 1.0);
  EXPECT_TRUE(v.regression);
}

TEST(FixtureDiff, GqaPaddingMaskNamesTheMaskAndTheExpandedKvHeads) {
  const DiffVerdict v = diff_one("llama_hd96_gqa_sdpa_bf16_b4_s2048", "llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask");
  EXPECT_TRUE(contains(v.causes.inputs, "mask appeared (bool [4,1,2048,2048]) (layers 0-3)"));
  EXPECT_TRUE(contains(v.causes.inputs, "GQA on -> off (layers 0-3)"));
  EXPECT_NEAR(v.attention_time_us.before, 1075.6, 1.0);
  EXPECT_NEAR(v.attention_time_us.after, 3455.6, 1.0);
}

TEST(FixtureDiff, ATraceAgainstItselfIsNoRegression) {
  const DiffVerdict v = diff_one(kBase, kBase);
  EXPECT_FALSE(v.regression);
  EXPECT_TRUE(v.backend_changes.empty());
  EXPECT_TRUE(v.causes.inputs.empty());
  EXPECT_DOUBLE_EQ(v.attention_time_us.worsening, 0);
}

// SGLang's decode graph capture (MI300X): 36 attention ops recorded, their kernels captured
// into the graph and not run, so every call's device time is unknown.
TEST(FixtureDiff, GraphCaptureAgainstAMeasuredTraceComparesNoDeviceTime) {
  const std::string capture =
      std::string(ATTNPROF_FIXTURES_DIR) + "/tracelens-inference/sglang_qwen3_8b_decode_graph_capture.json.gz";
  Result<DiffSection> r = diff_paths(trace(kBase), capture, {});
  ASSERT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  const DiffVerdict& v = r->pairs.front();
  EXPECT_EQ(v.calls_after, 36);
  EXPECT_GE(v.attention_time_us.after_unknown, 1);
  EXPECT_EQ(v.attention_time_us.after_samples, 0);
  EXPECT_FALSE(v.attention_time_us.known);
  EXPECT_FALSE(v.fused_time_pct.regression);
  EXPECT_FALSE(v.regression);
  EXPECT_NE(render_text(diff_report(*r)).find("-> unknown  [not compared (device time unknown)]"), std::string::npos);
}

// ---- the CLI -------------------------------------------------------------------------

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " " + args + " 2>&1";
  CliRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `attnprof diff --json` writes a Report; its verdict is the diff section.
nlohmann::json diff_section_in(const fs::path& report_file) {
  const nlohmann::json report = nlohmann::json::parse(read_file(report_file));
  EXPECT_EQ(report["schema_version"], kReportSchemaVersion);
  return report["diff"];
}

class CliDiff : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnprof_cli_diff_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CliDiff, RegressionExitsOneAndWritesTheMarkdownTable) {
  const fs::path md = dir_ / "pr.md", js = dir_ / "verdict.json";
  const CliRun r = run_cli("diff " + trace(kBase) + " " + trace(kBase + "_force_math") + " --md " + md.string() +
                           " --json " + js.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("layers 0-3: cudnn -> math"), std::string::npos) << r.out;
  const std::string text = read_file(md);
  EXPECT_NE(text.find("## attnprof diff: REGRESSION"), std::string::npos);
  EXPECT_NE(text.find("| Layer | Module | Backend | Fused (time) | Fused (calls) | Device time | FLOP/s | Peak memory |"),
            std::string::npos);
  for (int layer = 0; layer < 4; ++layer) {
    EXPECT_NE(text.find("| " + std::to_string(layer) + " |  | cudnn -> math | 100.0% -> 0.0% (-100.0 pp) | "
                        "100.0% -> 0.0% (-100.0 pp) |"),
              std::string::npos)
        << text;
  }
  EXPECT_NE(text.find("| Attention device time | 1.12 ms -> 52.47 ms"), std::string::npos) << text;
  const auto j = diff_section_in(js);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["noise_rule"], kNoiseRule);
  EXPECT_EQ(j["pairs"][0]["backend_changes"][0]["layers_text"], "layers 0-3");
}

TEST_F(CliDiff, SameTraceExitsZero) {
  const CliRun r = run_cli("diff " + trace(kBase) + " " + trace(kBase));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verdict: no regression"), std::string::npos);
}

TEST_F(CliDiff, LooserTimeLimitFromConfigFileClearsATimeOnlyRegression) {
  const fs::path cfg = dir_ / "limits.json";
  std::ofstream(cfg) << R"({"max_time_increase": "400%", "max_memory_increase": 100})";
  const std::string args = "diff " + trace(kBase) + " " + trace(kBase + "_padmask");
  EXPECT_EQ(run_cli(args).code, 1);  // +219% time, +50% memory
  EXPECT_EQ(run_cli(args + " --thresholds " + cfg.string()).code, 0);
  EXPECT_EQ(run_cli(args + " --thresholds " + cfg.string() + " --max-time-increase 10%").code, 1);  // flag wins
}

TEST_F(CliDiff, ReportsAndDirectoriesAreMatchedByName) {
  fs::create_directories(dir_ / "base");
  fs::create_directories(dir_ / "cand");
  ASSERT_EQ(run_cli("analyze " + trace(kBase) + " --json " + (dir_ / "base" / "llama.json").string()).code, 0);
  ASSERT_EQ(run_cli("analyze " + trace(kBase + "_force_math") + " --json " + (dir_ / "cand" / "llama.json").string()).code, 0);
  fs::copy_file(trace("gpt2_sdpa_fp16_b8_s1024"), dir_ / "base" / "gpt2.pt.trace.json.gz");
  fs::copy_file(trace("gpt2_sdpa_fp16_b8_s1024"), dir_ / "cand" / "gpt2.pt.trace.json.gz");
  fs::copy_file(trace("vit_sdpa_bf16_b16_384"), dir_ / "cand" / "vit.pt.trace.json.gz");
  const fs::path js = dir_ / "v.json";
  const CliRun r = run_cli("diff " + (dir_ / "base").string() + " " + (dir_ / "cand").string() + " --json " + js.string());
  EXPECT_EQ(r.code, 1) << r.out;
  const auto j = diff_section_in(js);
  ASSERT_EQ(j["pairs"].size(), 2u);
  EXPECT_EQ(j["pairs"][0]["name"], "gpt2");
  EXPECT_EQ(j["pairs"][0]["regression"], false);
  EXPECT_EQ(j["pairs"][1]["name"], "llama");
  EXPECT_EQ(j["pairs"][1]["regression"], true);
  ASSERT_EQ(j["unmatched"].size(), 1u);
  EXPECT_NE(j["unmatched"][0].get<std::string>().find("vit.pt.trace.json.gz"), std::string::npos);
}

TEST_F(CliDiff, ExtraRunsGiveTheSpreadThatAbsorbsASmallerChange) {
  // S=2048 against S=512 alone is a regression. With S=2048 also as a second baseline run,
  // the baseline median sits halfway and its spread (S=512 .. S=2048) is twice the change.
  const std::string s512 = trace("llama7b4l_sdpa_bf16_b4_s512"), s2048 = trace(kBase);
  EXPECT_EQ(run_cli("diff " + s512 + " " + s2048).code, 1);
  const fs::path js = dir_ / "v.json";
  const CliRun r = run_cli("diff --baseline-run " + s2048 + " " + s512 + " " + s2048 + " --json " + js.string());
  EXPECT_EQ(r.code, 0) << r.out;
  const auto time = diff_section_in(js)["pairs"][0]["attention_device_time_us"];
  EXPECT_EQ(time["before_samples"], 2);
  EXPECT_GT(time["worsening"].get<double>(), time["limit"].get<double>());
  EXPECT_LT(time["worsening"].get<double>(), time["noise"].get<double>());
}

TEST_F(CliDiff, AnArrayOfReportsIsSeveralRunsOfOneSide) {
  const fs::path runs = dir_ / "runs.json", js = dir_ / "v.json";
  ASSERT_EQ(run_cli("analyze " + trace(kBase) + " " + trace(kBase) + " --json " + runs.string()).code, 0);
  EXPECT_EQ(run_cli("diff " + runs.string() + " " + trace(kBase) + " --json " + js.string()).code, 0);
  const auto pair = diff_section_in(js)["pairs"][0];
  EXPECT_EQ(pair["baseline_runs"], 2);
  EXPECT_EQ(pair["attention_device_time_us"]["before_samples"], 2);
}

TEST_F(CliDiff, BadInputExitsTwoWithOneLineAndNoOutputFile) {
  const fs::path md = dir_ / "out.md";
  std::ofstream(dir_ / "broken.json") << "{\"traceEvents\": [";
  const CliRun r = run_cli("diff " + trace(kBase) + " " + (dir_ / "broken.json").string() + " --md " + md.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_FALSE(fs::exists(md));
  EXPECT_EQ(run_cli("diff " + trace(kBase) + " " + trace(kBase) + " --max-time-increase lots").code, 2);
  EXPECT_EQ(run_cli("diff " + trace(kBase) + " " + dir_.string()).code, 2);  // file vs directory
}

}  // namespace
}  // namespace attnprof
