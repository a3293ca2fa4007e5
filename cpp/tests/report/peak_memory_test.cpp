// Peak memory during attention is defined once (peak_memory.h): on a real trace, and by a scan
// that finds no other reader of a call's peak in the sources.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "attnprof/analyze.h"
#include "attnprof/peak_memory.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& relative) { return std::string(ATTNPROF_FIXTURES_DIR) + "/" + relative; }

TEST(PeakMemory, RunPeakIsTheLargestCallPeakOnARealTrace) {
  // Llama-7B dims, 4 layers, cuDNN SDPA, profile_memory=True: each call's transient peak is the
  // [memory] events' Total Allocated inside its span less the value at its start.
  auto report = analyze_file(fixture("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz"), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  int64_t largest_call = -1;
  for (const Call& c : report->calls) largest_call = std::max(largest_call, call_peak_bytes(c));
  EXPECT_EQ(largest_call, 67110400);  // the same for each of the 4 calls: what the trace recorded
  EXPECT_EQ(report_peak_bytes(*report), largest_call);
  for (const Layer& l : report->layers) EXPECT_EQ(layer_peak_bytes(l), largest_call) << "layer " << l.index;
}

TEST(PeakMemory, UnknownWithoutMemoryEventsAndLayersCountWhenCallsCarryNone) {
  Report r;
  r.calls.emplace_back();
  r.layers.emplace_back();
  EXPECT_EQ(report_peak_bytes(r), -1);  // no cost sections: nothing measured
  r.calls.front().cost = CallCost{};    // a cost without memory events
  EXPECT_EQ(report_peak_bytes(r), -1);
  r.layers.front().cost = LayerCost{};
  r.layers.front().cost->peak_bytes = 4096;  // a Report whose calls lost their costs
  EXPECT_EQ(report_peak_bytes(r), 4096);
  r.calls.front().cost->peak_bytes_during = 8192;
  EXPECT_EQ(report_peak_bytes(r), 8192);
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The renderers and the diff once each summed their own peak; now a call's peak is read by the
// cost stage that measures it, the JSON that stores it and the one definition.
TEST(PeakMemory, OnlyTheDefinitionReadsACallsPeak) {
  const fs::path root = fs::path(ATTNPROF_SOURCE_DIR) / "cpp";
  const std::set<std::string> allowed = {"src/analysis/roofline_analysis.cpp", "src/report/report_json.cpp",
                                         "src/report/peak_memory.cpp"};
  std::set<std::string> readers;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(e.path(), root).string();
    if (!e.is_regular_file() || rel.starts_with("tests/") || rel.starts_with("include/")) continue;
    if (text_of(e.path()).find("peak_bytes_during") != std::string::npos) readers.insert(rel);
  }
  for (const std::string& r : readers) EXPECT_TRUE(allowed.count(r)) << r << " reads peak_bytes_during: use peak_memory.h";
  EXPECT_TRUE(readers.count("src/report/peak_memory.cpp"));
}

}  // namespace
}  // namespace attnprof
