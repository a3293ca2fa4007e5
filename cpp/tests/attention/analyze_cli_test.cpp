// `attnprof analyze` end to end: output files, exit codes, one-line errors, no partial files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixture_util.h"

namespace attnprof::test {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string out, err;
};

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnprof_analyze_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " analyze " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  fs::path dir_;
};

// --threads sets how many threads parse the file; the Report does not depend on it
// (chunk-level equality: cpp/tests/ingest/parallel_chunks_test.cpp).
TEST_F(AnalyzeCli, ThreadsOptionGivesTheSameReportAndRejectsNonNumbers) {
  const fs::path one = dir_ / "one.json", four = dir_ / "four.json";
  const std::string trace = h200("llama7b4l_sdpa_bf16_b1_s2048_train");
  ASSERT_EQ(run(trace + " --threads 1 --json " + one.string()).code, 0);
  ASSERT_EQ(run(trace + " --threads 4 --json " + four.string()).code, 0);
  EXPECT_EQ(slurp(one), slurp(four));
  const CliRun bad = run(trace + " --threads many --json " + (dir_ / "bad.json").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad.json"));
}

TEST_F(AnalyzeCli, WritesJsonAndMarkdownAndPrintsTheActivationMap) {
  const fs::path json = dir_ / "r.json", md = dir_ / "r.md";
  const CliRun r = run(h200("llama7b4l_sdpa_bf16_b4_s1024") + " --json " + json.string() + " --md " + md.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Activation map"), std::string::npos);
  EXPECT_NE(r.out.find("cudnn"), std::string::npos);
  const auto report = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(report["schema_version"], "1.8");
  EXPECT_EQ(report["calls"].size(), 4u);
  EXPECT_NE(slurp(md).find("## Activation map"), std::string::npos);
}

TEST_F(AnalyzeCli, ListsUnfusedCallsBeforeTheActivationMap) {
  const CliRun r = run(h200("gpt2_eager_fp16_b8_s1024"));
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t unfused = r.out.find("Unfused attention calls (4)");
  ASSERT_NE(unfused, std::string::npos) << r.out;
  EXPECT_LT(unfused, r.out.find("Activation map"));
}

TEST_F(AnalyzeCli, SeveralTracesGiveOneReportEachInAJsonArray) {
  const fs::path json = dir_ / "all.json";
  const CliRun r = run(h200("llama7b4l_sdpa_bf16_b4_s512") + " " + h200("llama7b4l_eager_bf16_b4_s512") +
                    " --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto reports = nlohmann::json::parse(slurp(json));
  ASSERT_TRUE(reports.is_array());
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0]["calls"][0]["backend"], "cudnn");
  EXPECT_EQ(reports[1]["calls"][0]["backend"], "eager");
}

TEST_F(AnalyzeCli, TraceWithoutAttentionSaysSoAndSucceeds) {
  const fs::path json = dir_ / "none.json";
  const CliRun r = run(fixture("hta/trace_filter_sampled_rank-0.json.gz") + " --json " + json.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no attention found"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(slurp(json))["calls"].size(), 0u);
}

TEST_F(AnalyzeCli, BadInputIsOneLineOnStderrExitTwoAndNoOutputFile) {
  const std::string gz_magic_then_garbage = std::string("\x1f\x8b\x08\x00", 4) + "not deflate data at all";
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"missing", (dir_ / "does_not_exist.json").string()},
      {"truncated", write("truncated.json", R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1)").string()},
      {"not a trace", write("other.json", R"({"hello": [1, 2, 3]})").string()},
      {"corrupt gzip", write("corrupt.json.gz", gz_magic_then_garbage).string()},
      {"empty", write("empty.json", "").string()},
      {"one good one bad", h200("llama7b4l_sdpa_bf16_b4_s512") + " " + (dir_ / "missing.json").string()},
  };
  for (const auto& [what, args] : inputs) {
    SCOPED_TRACE(what);
    const fs::path json = dir_ / "out.json";
    const CliRun r = run(args + " --json " + json.string());
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("attnprof analyze: error: ")) << r.err;
    EXPECT_FALSE(fs::exists(json));
  }
}

}  // namespace
}  // namespace attnprof::test
