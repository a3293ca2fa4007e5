// `attnprof scale | predict | whatif` as a user runs them.
#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/fixture_support.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

int run(const std::string& args, std::string* err = nullptr) {
  // One file per process: ctest -j runs this file's tests in parallel processes.
  const std::string err_path = (fs::temp_directory_path() / ("attnprof_cost_cli." + std::to_string(getpid()) + ".err")).string();
  const int status = std::system((std::string(ATTNPROF_CLI_PATH) + " " + args + " >/dev/null 2>" + err_path).c_str());
  if (err != nullptr) {
    std::ifstream in(err_path);
    std::stringstream s;
    s << in.rdbuf();
    *err = s.str();
  }
  fs::remove(err_path);
  return WEXITSTATUS(status);
}

std::string sweep(const std::string& prefix) {
  std::string args;
  for (int s : {512, 1024, 2048, 4096}) args += " " + testing::h200_trace(prefix + std::to_string(s));
  return args;
}

TEST(ScaleCommand, WritesSimulatedOomThresholdWithFailingAllocationAndFragmentation) {
  const fs::path out = fs::temp_directory_path() / "attnprof_scale_test.json";
  fs::remove(out);
  ASSERT_EQ(run("scale" + sweep("llama7b4l_sdpa_bf16_b4_s") + sweep("llama7b4l_eager_bf16_b4_s") +
                " --memory-cap 24GiB --json " + out.string()),
            0);
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  const auto& scaling = j["scaling"];
  EXPECT_EQ(scaling["memory_budget_bytes"].get<int64_t>(), 24LL << 30);
  ASSERT_EQ(scaling["series"].size(), 2u);
  EXPECT_EQ(scaling["allocator_limit_bytes"].get<int64_t>(), 24LL << 30);  // a cap on the allocator itself
  EXPECT_EQ(scaling["replays"].size(), 8u);
  for (const auto& series : scaling["series"]) {
    // The eager run at S = 4096 reserved 27.9 GiB, above the cap: the threshold lies below it.
    const int64_t limit = series["backend"] == "eager" ? 4096 : 65536;
    EXPECT_GT(series["oom_threshold_tokens"].get<int64_t>(), 2048) << series["backend"];
    EXPECT_LT(series["oom_threshold_tokens"].get<int64_t>(), limit) << series["backend"];
    EXPECT_EQ(series["oom_method"], "caching-allocator simulation");
    EXPECT_FALSE(series["failing_allocation"]["op"].get<std::string>().empty());
    EXPECT_EQ(series["failing_allocation"]["length"].get<int64_t>(), series["oom_threshold_tokens"].get<int64_t>() + 1);
    EXPECT_GT(series["failing_allocation"]["bytes"].get<int64_t>(), 0);
    EXPECT_GT(series["fragmentation"].get<double>(), 0.0);
    EXPECT_EQ(series["memory_fit"]["residuals"].size(), 4u);
    EXPECT_EQ(series["time_fit"]["residuals"].size(), 4u);
  }
  fs::remove(out);
}

TEST(ScaleCommand, BadMemoryCapIsOneLineExitTwoAndNoOutputFile) {
  const fs::path out = fs::temp_directory_path() / "attnprof_scale_bad.json";
  fs::remove(out);
  std::string err;
  EXPECT_EQ(run("scale " + testing::h200_trace("llama7b4l_sdpa_bf16_b4_s512") + " --memory-cap lots --json " +
                    out.string(), &err),
            2);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(PredictCommand, KnownModelRunsAndUnknownModelFails) {
  const fs::path out = fs::temp_directory_path() / "attnprof_predict.json";
  EXPECT_EQ(run("predict --model llama-2-7b --batch 16 --dtype bf16 --gpu A100-80GB --attn eager --json " +
                out.string()),
            0);
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  EXPECT_GT(j["scaling"]["series"][0]["oom_threshold_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(j["scaling"]["series"][0]["memory_fit"]["growth"], "quadratic");
  fs::remove(out);
  EXPECT_EQ(run("predict --model no-such-model"), 2);
}

TEST(WhatIfCommand, ReadsALengthFileAndRejectsAMissingOne) {
  const fs::path lengths = fs::temp_directory_path() / "attnprof_lengths.csv";
  std::ofstream(lengths) << "tokens\n100\n5000\n";
  EXPECT_EQ(run("whatif --lengths " + lengths.string() + " --model mistral-7b --window 4096"), 0);
  EXPECT_EQ(run("whatif --lengths /nonexistent.csv --model mistral-7b --window 4096"), 2);
  fs::remove(lengths);
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

TEST(ScaleCommand, ASingleTraceHasNothingToFitAndSaysSo) {
  std::string err;
  EXPECT_EQ(run("scale " + testing::h200_trace("llama7b4l_sdpa_bf16_b4_s512"), &err), 2);
  EXPECT_NE(err.find("two or more sequence lengths"), std::string::npos) << err;
}

}  // namespace
}  // namespace attnprof
