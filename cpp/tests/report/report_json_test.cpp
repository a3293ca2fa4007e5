#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/report_json.h"
#include "fixture_traces.h"

namespace attnprof {
namespace {

TEST(ReportJson, RoundTripKeepsCallsAndOptionalSections) {
  Report r;
  r.source.files = {"a.json"};
  Call c;
  c.id = 0;
  c.layer = 3;
  c.backend = backend::kCudnn;
  c.fused = true;
  c.shape = Shape{4, 32, 8, 2048, 2048, 128, 128, "bf16"};
  c.kernels.push_back(KernelRef{"k<int>", component::kFused, 10, 12.5, 7, 99});
  Explanation e;
  e.predicted_backend = "cudnn";
  e.backends.push_back(BackendVerdict{"flash", false, {RuleCheck{"flash.x", "msg", "v", "fix"}}});
  c.explanation = e;
  r.calls.push_back(c);
  r.scaling = ScalingSection{};
  r.scaling->memory_budget_bytes = 24;

  auto back = report_from_json(report_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->calls.size(), 1u);
  EXPECT_EQ(back->calls[0].layer, 3);
  EXPECT_EQ(back->calls[0].shape.Hkv, 8);
  EXPECT_EQ(back->calls[0].kernels[0].name, "k<int>");
  ASSERT_TRUE(back->calls[0].explanation.has_value());
  EXPECT_EQ(back->calls[0].explanation->backends[0].failed[0].rule, "flash.x");
  EXPECT_FALSE(back->calls[0].cost.has_value());
  ASSERT_TRUE(back->scaling.has_value());
  EXPECT_EQ(back->scaling->memory_budget_bytes, 24);
  EXPECT_FALSE(back->heads.has_value());
}

TEST(ReportCall, BoxedSectionsCopyWithTheCallAndEmptyAsOptionalDoes) {
  Call a;
  EXPECT_FALSE(a.explanation.has_value());
  EXPECT_THROW(a.cost.value(), std::bad_optional_access);
  a.explanation = Explanation{};
  a.explanation->predicted_backend = "flash";
  Call b = a;
  b.explanation->predicted_backend = "math";
  EXPECT_EQ(a.explanation->predicted_backend, "flash");  // a copy, not a shared section
  b.explanation = std::nullopt;
  EXPECT_FALSE(b.explanation);
  std::optional<CallCost> cost = CallCost{};
  cost->bytes_moved = 64;
  b.cost = std::move(cost);
  EXPECT_EQ(b.cost->bytes_moved, 64);
  EXPECT_LT(sizeof(Call), sizeof(Call) - sizeof(a.explanation) + sizeof(std::optional<Explanation>));
}

TEST(ReportJson, RejectsTextThatIsNotAReport) {
  EXPECT_FALSE(report_from_json("{\"traceEvents\": []}").ok());
  EXPECT_FALSE(report_from_json("{nope").ok());
  EXPECT_EQ(report_from_json("{nope").error().code, ErrorCode::kMalformedJson);
}

TEST(ReportJson, RejectsAnotherMajorSchemaVersion) {
  auto r = report_from_json("{\"schema_version\": \"9.0\", \"calls\": []}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
}

TEST(ReportJson, InvalidUtf8InKernelNamesIsReplacedNotThrown) {
  Report r;
  Call c;
  c.kernels.push_back(KernelRef{std::string("bad\xff\xfe name"), component::kFused});
  r.calls.push_back(c);
  const std::string text = report_to_json(r);
  EXPECT_NE(text.find("bad"), std::string::npos);
  EXPECT_TRUE(report_from_json(text).ok());
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

TEST(ReportJson, WrittenReportsAreRecognisedAndTracesAreNot) {
  Report r;
  r.calls.push_back(Call{});
  EXPECT_TRUE(looks_like_report(report_to_json(r)));
  EXPECT_TRUE(looks_like_report(report_to_json(r, /*pretty=*/false)));
  EXPECT_FALSE(looks_like_report("{\"schemaVersion\": 1, \"traceEvents\": []}"));
  EXPECT_FALSE(looks_like_report("{\"schema_version\": \"1.0\", \"traceEvents\": []}"));
}

using testing::fixture_traces;

// What nlohmann's dump() writes for the document `text` holds: keys sorted, its indentation,
// its number forms. The calls are written one tree at a time; the text must still be that.
std::string one_dump_of(const std::string& text, bool pretty) {
  return nlohmann::json::parse(text).dump(pretty ? 2 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(ReportJson, CallsWrittenOneAtATimeGiveTheTextOfOneDump) {
  const Result<Report> report =
      analyze_file(std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz");
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_GT(report->calls.size(), 1u);
  for (const bool pretty : {true, false}) {
    SCOPED_TRACE(pretty);
    const std::string text = report_to_json(*report, pretty);
    EXPECT_EQ(text, one_dump_of(text, pretty));
    const Result<Report> back = report_from_json(text);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->calls.size(), report->calls.size());
  }
}

TEST(ReportJson, AReportWithoutCallsWritesAnEmptyCallsArray) {
  Report r;
  r.source.files = {"a.json"};
  const std::string pretty = report_to_json(r), compact = report_to_json(r, false);
  EXPECT_NE(pretty.find("\"calls\": []"), std::string::npos);
  EXPECT_NE(compact.find("\"calls\":[]"), std::string::npos);
  EXPECT_EQ(pretty, one_dump_of(pretty, true));
  EXPECT_EQ(compact, one_dump_of(compact, false));
}

// More runs than calls, runs of one call, two runs: the joined text is the one-thread text.
TEST(ReportJson, AnyNumberOfThreadsWritesTheSameText) {
  const Result<Report> report =
      analyze_file(std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz");
  ASSERT_TRUE(report.ok()) << report.error().message;
  for (const bool pretty : {true, false}) {
    const std::string one = report_to_json(*report, pretty, 1);
    for (const size_t threads : {size_t{2}, report->calls.size(), report->calls.size() + 5})
      EXPECT_EQ(report_to_json(*report, pretty, threads), one) << threads << " threads";
  }
}

// analyze_file with a second core (tail_threads from FreeCoresProbe, here asked for) and
// without: the same Report on every fixture.
TEST(ReportJson, EveryFixtureGivesTheSameReportWithTheTailOnTwoThreads) {
  const std::vector<std::string> paths = fixture_traces();
  ASSERT_GE(paths.size(), 40u) << "fixtures not found under " << ATTNPROF_FIXTURES_DIR;
  AnalyzeOptions one, two;
  one.ingest_threads = 1;
  two.ingest_threads = 2;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const Result<Report> a = analyze_file(path, one), b = analyze_file(path, two);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(report_to_json(*a), report_to_json(*b, true, 2));
  }
}

TEST(ThreadsAfterIngest, AQuietTwoCoreMachineGetsBothCoresWhateverTheParseUsed) {
  // A parse that ended on one thread used ~1.2 cores while the other stayed ~0.8 idle.
  EXPECT_EQ(threads_after_ingest(0, 1.2, 0.8, 2), 2u);
  EXPECT_EQ(threads_after_ingest(0, 1.0, 0.9, 2), 2u);
  EXPECT_EQ(threads_after_ingest(0, 1.9, 0.1, 2), 2u);
}

TEST(ThreadsAfterIngest, ABusyMachineKeepsOneThread) {
  EXPECT_EQ(threads_after_ingest(0, 1.0, 0.0, 2), 1u);
  EXPECT_EQ(threads_after_ingest(0, 0.6, 0.2, 2), 1u);  // a core shared with another session
  EXPECT_EQ(threads_after_ingest(0, 0.0, 0.0, 2), 1u);  // never none
}

TEST(ThreadsAfterIngest, NeverMoreThanTheUsableCoresAndAnExplicitCountIsKept) {
  EXPECT_EQ(threads_after_ingest(0, 1.0, 15.0, 4), 4u);  // a taskset of 4 on a 16-core machine
  EXPECT_EQ(threads_after_ingest(0, 1.0, 2.0, 16), 3u);
  EXPECT_EQ(threads_after_ingest(1, 1.0, 15.0, 16), 1u);
  EXPECT_EQ(threads_after_ingest(3, 0.5, 0.0, 2), 3u);
}

TEST(FreeCoresProbe, OneThreadAskedIsOneAndAnAutomaticCountIsWithinTheCores) {
  const FreeCoresProbe probe;
  EXPECT_EQ(probe.threads_for(1), 1u);
  EXPECT_EQ(probe.threads_for(3), 3u);
  const size_t automatic = probe.threads_for(0);
  EXPECT_GE(automatic, 1u);
  EXPECT_LE(automatic, usable_cores());
}

}  // namespace
}  // namespace attnprof
