// Multi-rank analysis: a directory of per-rank traces built from real H200 fixtures
// (s2048 as ranks 0 and 1, s4096 as rank 2), through the API and through `attnprof analyze DIR`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attnprof/analyze.h"
#include "attnprof/io.h"
#include "attnprof/ranks.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/" + name + ".pt.trace.json.gz";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes the fixture, decompressed, as DIR/file_name carrying distributedInfo for `rank`.
void write_rank_trace(const fs::path& dir, const std::string& file_name, const std::string& fixture_name, int rank) {
  Result<std::string> text = read_text_file(fixture(fixture_name));
  ASSERT_TRUE(text) << text.error().message;
  const size_t brace = text->find('{');
  ASSERT_NE(brace, std::string::npos);
  text->insert(brace + 1, "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
                              ", \"world_size\": 3},");
  std::ofstream(dir / file_name, std::ios::binary) << *text;
}

// One directory for the whole suite: decompressing the fixtures is the slow part.
class Ranks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("attnprof_ranks_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "ranks");
    // File names disagree with distributedInfo on purpose: the trace's own rank wins.
    write_rank_trace(dir_ / "ranks", "a.pt.trace.json", "llama7b4l_sdpa_bf16_b4_s2048", 0);
    write_rank_trace(dir_ / "ranks", "b_rank7_trace.json", "llama7b4l_sdpa_bf16_b4_s4096", 2);
    write_rank_trace(dir_ / "ranks", "c.pt.trace.json", "llama7b4l_sdpa_bf16_b4_s2048", 1);
    std::ofstream(dir_ / "ranks" / "notes.txt") << "not a trace";
    fs::create_directories(dir_ / "empty");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static int run_cli(const std::string& args, std::string& err) {
    const fs::path err_path = dir_ / "stderr";
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " analyze " + args + " >/dev/null 2>" + err_path.string();
    const int status = std::system(cmd.c_str());
    err = slurp(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  static fs::path dir_;
};
fs::path Ranks::dir_;

TEST(RankFileNames, MatchTorchProfilerAndRankNamedTraces) {
  EXPECT_TRUE(is_trace_file_name("host_123.1700000000.pt.trace.json"));
  EXPECT_TRUE(is_trace_file_name("host_123.pt.trace.json.gz"));
  EXPECT_TRUE(is_trace_file_name("rank0_trace.json.gz"));
  EXPECT_FALSE(is_trace_file_name("report.json"));
  EXPECT_FALSE(is_trace_file_name("trace.txt"));
}

TEST_F(Ranks, EachRankMatchesItsSingleFileAnalysisAndTheSlowestIsNamed) {
  Result<Report> report = analyze_directory((dir_ / "ranks").string());
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->ranks);
  const RanksSection& s = *report->ranks;
  ASSERT_EQ(s.ranks.size(), 3u);

  Result<Report> s2048 = analyze_file(fixture("llama7b4l_sdpa_bf16_b4_s2048"));
  Result<Report> s4096 = analyze_file(fixture("llama7b4l_sdpa_bf16_b4_s4096"));
  ASSERT_TRUE(s2048 && s4096);
  const double t2048 = s2048->summary.attention_device_time_us, t4096 = s4096->summary.attention_device_time_us;
  ASSERT_GT(t4096, t2048);  // the premise: a 2x longer sequence costs more attention time

  // Ranks come from distributedInfo (not from "rank7" in a file name), in rank order.
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_EQ(s.ranks[2].rank, 2);
  EXPECT_NE(s.ranks[2].file.find("b_rank7_trace.json"), std::string::npos);
  EXPECT_DOUBLE_EQ(s.ranks[0].attention_device_time_us, t2048);
  EXPECT_DOUBLE_EQ(s.ranks[1].attention_device_time_us, t2048);
  EXPECT_DOUBLE_EQ(s.ranks[2].attention_device_time_us, t4096);
  EXPECT_DOUBLE_EQ(s.ranks[2].fused_time_fraction, s4096->summary.fused_time_fraction);
  ASSERT_EQ(s.ranks[2].layer_time_us.size(), s4096->layers.size());
  EXPECT_DOUBLE_EQ(s.ranks[2].layer_time_us[0], s4096->layers[0].device_time_us);

  EXPECT_EQ(s.slowest_rank, 2);
  EXPECT_DOUBLE_EQ(s.slowest_over_median, t4096 / t2048);  // median of {a, a, b} is a

  // Main body is the slowest rank's Report; every rank's file is listed.
  EXPECT_DOUBLE_EQ(report->summary.attention_device_time_us, t4096);
  EXPECT_EQ(report->source.files.size(), 3u);
  ASSERT_FALSE(report->findings.empty());
  EXPECT_EQ(report->findings.front().rule, "ranks.slowest");
  EXPECT_NE(report->findings.front().title.find("rank 2 spends"), std::string::npos);
  EXPECT_NE(report->findings.front().title.find("layer "), std::string::npos);
}

TEST_F(Ranks, DirectoryProgressCoversEveryFileAndEveryByte) {
  std::vector<DirectoryProgress> calls;
  Result<Report> report = analyze_directory((dir_ / "ranks").string(), {},
                                            [&](const DirectoryProgress& p) { calls.push_back(p); });
  ASSERT_TRUE(report) << report.error().message;
  size_t bytes = 0;
  for (const char* name : {"a.pt.trace.json", "b_rank7_trace.json", "c.pt.trace.json"})
    bytes += fs::file_size(dir_ / "ranks" / name);  // notes.txt is not a trace and not counted
  ASSERT_FALSE(calls.empty());
  EXPECT_GT(calls.size(), 3u);  // byte counts while reading, not only the three file ends
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_GE(calls[i].bytes_done, calls[i - 1].bytes_done);
    EXPECT_GE(calls[i].files_done, calls[i - 1].files_done);
  }
  EXPECT_EQ(calls.back().files_total, 3u);
  EXPECT_EQ(calls.back().files_done, 3u);
  EXPECT_EQ(calls.back().bytes_total, bytes);
  EXPECT_EQ(calls.back().bytes_done, bytes);
}

TEST_F(Ranks, DirectoryWithoutTracesIsAnEmptyInputError) {
  Result<Report> report = analyze_directory((dir_ / "empty").string());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, ErrorCode::kEmptyInput);
}

TEST_F(Ranks, CliAnalyzeDirectoryWritesOneReportWithRanks) {
  const fs::path out = dir_ / "out.json";
  std::string err;
  ASSERT_EQ(run_cli((dir_ / "ranks").string() + " --json " + out.string(), err), 0) << err;
  const auto json = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(json.is_object());
  ASSERT_EQ(json["ranks"]["ranks"].size(), 3u);
  EXPECT_EQ(json["ranks"]["slowest_rank"], 2);
  EXPECT_GT(json["ranks"]["slowest_over_median"].get<double>(), 1.0);
}

TEST_F(Ranks, CliEmptyDirectoryExitsTwoWithOneLineAndNoOutput) {
  const fs::path out = dir_ / "empty_out.json";
  std::string err;
  EXPECT_EQ(run_cli((dir_ / "empty").string() + " --json " + out.string(), err), 2);
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_NE(err.find("no trace files"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace attnprof
