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

// The names serving engines and accelerate give their traces (docs/cli.md, "Directories").
TEST(RankFileNames, MatchServingEngineAndAccelerateTracesButNotFilesDerivedFromTraces) {
  EXPECT_TRUE(is_trace_file_name("9f3c-rank-1.1764581234567890123.pt.trace.json.gz"));  // vLLM
  EXPECT_TRUE(is_trace_file_name("1764581234.56-TP-3.trace.json.gz"));                 // SGLang
  EXPECT_TRUE(is_trace_file_name("profile_0.json"));                                    // accelerate
  EXPECT_FALSE(is_trace_file_name("profile_notes.json"));
  EXPECT_FALSE(is_trace_file_name("1764581234.56-TP-3-memory.pickle"));
  EXPECT_FALSE(is_trace_file_name("profiler_out_0.txt"));
  EXPECT_FALSE(is_trace_file_name("host_1.123.pt.trace.json.attnprof-capture.json"));  // capture sidecar
  EXPECT_FALSE(is_trace_file_name("host_1.123.pt.trace.json.report.json"));            // trace_handler Report
}

TEST(RankFileNames, RankOfVllmAndSglangNames) {
  EXPECT_EQ(rank_of_file_name("9f3c-rank-12.1764581234567890123.pt.trace.json.gz").rank, 12);
  const NameRank sglang = rank_of_file_name("1764581234.56-TP-10-DP-1-PP-2-EP-3-decode.trace.json.gz");
  EXPECT_EQ(sglang.rank, -1);
  EXPECT_EQ(sglang.tp, 10);
  EXPECT_EQ(sglang.pp, 2);
  EXPECT_EQ(rank_of_file_name("1764581234.56-TP-0.trace.json.gz").pp, 0);
  const NameRank none = rank_of_file_name("host_123.1700000000.pt.trace.json");
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(none.tp, -1);
}

// Serving-engine profiler directories built from the real vLLM / SGLang traces (MI300X), laid
// out as the engines write them. Every fixture was a single-process run (distributedInfo rank
// 0, world_size 1), so the ranks must come from the file names.
class ServingDirs : public ::testing::Test {
 protected:
  static std::string serving(const std::string& name) {
    return std::string(ATTNPROF_FIXTURES_DIR) + "/tracelens-inference/" + name;
  }
  static void copy(const std::string& fixture_name, const fs::path& to) {
    fs::create_directories(to.parent_path());
    fs::copy_file(serving(fixture_name), to, fs::copy_options::overwrite_existing);
  }
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("attnprof_serving_" + std::to_string(::getpid()));
    // vLLM: VLLM_TORCH_PROFILER_DIR/<instance_id>-rank-<rank>.<time_ns>.pt.trace.json.gz
    copy("vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz", dir_ / "vllm" / "9f3c-rank-1.1764581234567890999.pt.trace.json.gz");
    copy("vllm_gptoss_decode_full_graph_capture.pt.trace.json.gz", dir_ / "vllm" / "9f3c-rank-0.1764581234567890123.pt.trace.json.gz");
    std::ofstream(dir_ / "vllm" / "profiler_out_0.txt") << "key_averages table";
    // SGLang: SGLANG_TORCH_PROFILER_DIR/<profile_id>-TP-<tp rank>.trace.json.gz
    copy("sglang_qwen3_8b_decode_graph_capture.json.gz", dir_ / "sglang" / "1764581234.56-TP-1.trace.json.gz");
    copy("sglang_qwen3_8b_decode_graph_capture.json.gz", dir_ / "sglang" / "1764581234.56-TP-0.trace.json.gz");
    std::ofstream(dir_ / "sglang" / "1764581234.57-TP-0-memory.pickle") << "not a trace";
    fs::create_directories(dir_ / "sglang" / "graph_capture_profile");
    // SGLang with profile_by_stage: one file per stage and rank, the stage spelt as the
    // scheduler mixin's ForwardMode names. The 8192-token vLLM capture stands in for a prefill.
    for (const char* tp : {"0", "1"}) {
      copy("vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz",
           dir_ / "stages" / (std::string("1764581234.56-TP-") + tp + "-EXTEND.trace.json.gz"));
      copy("sglang_qwen3_8b_decode_graph_capture.json.gz",
           dir_ / "stages" / (std::string("1764581234.56-TP-") + tp + "-DECODE.trace.json.gz"));
    }
    // Two start/stop cycles of one rank and stage: two runs that one ranks section cannot hold.
    copy("sglang_qwen3_8b_decode_graph_capture.json.gz", dir_ / "cycles" / "1764581234.56-TP-0-decode.trace.json.gz");
    copy("sglang_qwen3_8b_decode_graph_capture.json.gz", dir_ / "cycles" / "1764589999.01-TP-0-decode.trace.json.gz");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path dir_;
};
fs::path ServingDirs::dir_;

TEST_F(ServingDirs, VllmProfilerDirectoryGivesOneRankPerWorkerFile) {
  Result<Report> report = analyze_directory((dir_ / "vllm").string());
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->ranks);
  const RanksSection& s = *report->ranks;
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_NE(s.ranks[0].file.find("9f3c-rank-0."), std::string::npos);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_NE(s.ranks[1].file.find("9f3c-rank-1."), std::string::npos);
  for (const RankSummary& r : s.ranks) {
    Result<Report> alone = analyze_file(r.file);
    ASSERT_TRUE(alone) << alone.error().message;
    EXPECT_DOUBLE_EQ(r.attention_device_time_us, alone->summary.attention_device_time_us);
    EXPECT_DOUBLE_EQ(r.fused_time_fraction, alone->summary.fused_time_fraction);
  }
  // 24 vllm::unified_attention_with_output calls per forward on each rank (fixtures README).
  size_t unified = 0;
  for (const Call& c : report->calls) unified += c.op == "vllm::unified_attention_with_output";
  EXPECT_GT(unified, 0u);
  EXPECT_EQ(unified % 24, 0u);
  EXPECT_EQ(report->source.files.size(), 2u);
}

TEST_F(ServingDirs, SglangProfilerDirectoryTakesRanksFromTpInTheFileName) {
  Result<Report> report = analyze_directory((dir_ / "sglang").string());
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->ranks);
  const RanksSection& s = *report->ranks;
  ASSERT_EQ(s.ranks.size(), 2u);  // the memory snapshot and the graph-capture folder are not ranks
  EXPECT_EQ(s.ranks[0].rank, 0);
  EXPECT_NE(s.ranks[0].file.find("-TP-0.trace.json.gz"), std::string::npos);
  EXPECT_EQ(s.ranks[1].rank, 1);
  EXPECT_NE(s.ranks[1].file.find("-TP-1.trace.json.gz"), std::string::npos);
  // Both ranks hold the same trace: each rank's numbers and the body are its own analysis.
  Result<Report> alone = analyze_file(s.ranks[0].file);
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_EQ(report->calls.size(), alone->calls.size());
  for (const RankSummary& r : s.ranks) EXPECT_DOUBLE_EQ(r.attention_device_time_us, alone->summary.attention_device_time_us);
  // Both ranks are graph captures: their attention time is unknown, so no rank is the slowest
  // and no "ranks.slowest" finding compares them.
  EXPECT_EQ(s.slowest_rank, -1);
  EXPECT_DOUBLE_EQ(s.slowest_over_median, 0);
  for (const Finding& f : report->findings) EXPECT_NE(f.rule, "ranks.slowest");
}

TEST(StageOfFileName, ReadsEverySpellingSglangWritesAndNothingElse) {
  EXPECT_EQ(stage_of_file_name("1764581234.56-TP-0-prefill.trace.json.gz"), "prefill");
  EXPECT_EQ(stage_of_file_name("1764581234.56-TP-3-DP-1-decode.trace.json.gz"), "decode");
  EXPECT_EQ(stage_of_file_name("1764581234.56-TP-0-EXTEND.trace.json.gz"), "prefill");
  EXPECT_EQ(stage_of_file_name("1764581234.56-TP-0-ForwardMode.DECODE.trace.json.gz"), "decode");
  EXPECT_EQ(stage_of_file_name("1764581234.56-TP-0.trace.json.gz"), "");
  EXPECT_EQ(stage_of_file_name("5e1d-rank-0.1764581234567890123.pt.trace.json.gz"), "");
  EXPECT_EQ(stage_of_file_name("decode.trace.json"), "");  // no "-<stage>" after a name
}

TEST_F(ServingDirs, StageFilesGiveOneReportPerStageEachWithItsRanks) {
  Result<std::vector<Report>> stages = analyze_directory_stages((dir_ / "stages").string());
  ASSERT_TRUE(stages) << stages.error().message;
  ASSERT_EQ(stages->size(), 2u);
  const Report& prefill = (*stages)[0];
  const Report& decode = (*stages)[1];
  for (const Report* r : {&prefill, &decode}) {
    ASSERT_TRUE(r->ranks);
    ASSERT_EQ(r->ranks->ranks.size(), 2u);
    EXPECT_EQ(r->ranks->ranks[0].rank, 0);
    EXPECT_EQ(r->ranks->ranks[1].rank, 1);
  }
  EXPECT_NE(prefill.ranks->ranks[0].file.find("-TP-0-EXTEND.trace.json.gz"), std::string::npos);
  EXPECT_NE(decode.ranks->ranks[1].file.find("-TP-1-DECODE.trace.json.gz"), std::string::npos);
  // Each stage's body is its own file's analysis: 24 vLLM ops per forward for the prefill,
  // the 36 SGLang attention ops of the decode capture (fixtures README).
  Result<Report> decode_alone = analyze_file(decode.ranks->ranks[0].file);
  ASSERT_TRUE(decode_alone);
  EXPECT_EQ(decode.calls.size(), decode_alone->calls.size());
  EXPECT_EQ(decode.calls.size(), 36u);
  size_t unified = 0;
  for (const Call& c : prefill.calls) unified += c.op == "vllm::unified_attention_with_output";
  EXPECT_GT(unified, 0u);
  EXPECT_EQ(unified % 24, 0u);
  for (const Call& c : prefill.calls) EXPECT_EQ(c.phase, "prefill");
  for (const Call& c : decode.calls) EXPECT_EQ(c.phase, "decode");
  // The single-Report entry point says it cannot hold two stages.
  Result<Report> one = analyze_directory((dir_ / "stages").string());
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().code, ErrorCode::kUnsupported);
}

TEST_F(ServingDirs, TwoRunsOfOneRankAndStageAreAnErrorNamingBothFiles) {
  Result<std::vector<Report>> report = analyze_directory_stages((dir_ / "cycles").string());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, ErrorCode::kUnsupported);
  EXPECT_NE(report.error().message.find("1764581234.56-TP-0-decode.trace.json.gz"), std::string::npos);
  EXPECT_NE(report.error().message.find("1764589999.01-TP-0-decode.trace.json.gz"), std::string::npos);
  EXPECT_EQ(report.error().message.find('\n'), std::string::npos);
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
  auto finding_of = [&](std::string_view rule) {
    auto it = std::find_if(report->findings.begin(), report->findings.end(), [&](const Finding& f) { return f.rule == rule; });
    return it == report->findings.end() ? nullptr : &*it;
  };
  const Finding* slowest = finding_of("ranks.slowest");
  ASSERT_NE(slowest, nullptr);
  EXPECT_NE(slowest->title.find("rank 2 spends"), std::string::npos);
  EXPECT_NE(slowest->title.find("layer "), std::string::npos);

  // Two identical ranks make the spread zero: rank 2 straggles overall and in every layer.
  ASSERT_FALSE(s.stragglers.empty());
  EXPECT_EQ(s.stragglers.front().rank, 2);
  EXPECT_EQ(s.stragglers.front().layer, -1);
  EXPECT_NE(finding_of("ranks.stragglers"), nullptr);
  // Its layers ran a longer sequence than most ranks' (2 of 3): a shape disagreement per layer.
  const auto shape = std::find_if(s.disagreements.begin(), s.disagreements.end(),
                                  [](const Disagreement& d) { return d.facet == "shape"; });
  ASSERT_NE(shape, s.disagreements.end());
  EXPECT_EQ(shape->rank, 2);
  EXPECT_EQ(shape->layer, 0);
  EXPECT_EQ(shape->majority_ranks, 2);
  EXPECT_NE(shape->value.find("S4096x4096"), std::string::npos);
  EXPECT_NE(shape->majority.find("S2048x2048"), std::string::npos);
  for (const Disagreement& d : s.disagreements) EXPECT_NE(d.facet, "backend");  // all three ran flash
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
