// Golden snapshots: the text, Markdown and JSON outputs of one fixture per vendor and backend
// class, checked in under cpp/tests/golden/expected. Any change to an output shows in review as
// a diff of those files. When a change is meant, regenerate them with `make update-golden`
// (docs/architecture.md) and commit the diff with the change that caused it.
//
// The outputs are made machine-independent before comparing: the trace path becomes
// "fixtures/<path below the fixtures dir>" (the checkout's location varies), and the git
// provenance of the traced project is dropped (it depends on where the fixtures live).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

struct GoldenCase {
  std::string name;     // file stem under expected/
  std::string fixture;  // path below ATTNPROF_FIXTURES_DIR
};

// One per vendor and backend class: cuDNN SDPA, SDPA math fallback and eager on H200,
// flash on H100, AOTriton flash on MI300X, an external (TensorRT-LLM) kernel under vLLM on B200,
// and an HTA training trace with no attention at all.
const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = {
      {"h200_cudnn_sdpa", "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz"},
      {"h200_math_fallback", "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz"},
      {"h200_eager", "h200-torch2.11/traces/gpt2_eager_fp16_b8_s1024.pt.trace.json.gz"},
      {"h100_flash", "tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"},
      {"mi300x_aotriton", "tracelens/mi300_gaunernst_bert-small-uncased__1016001.json.gz"},
      {"b200_vllm_trtllm", "tracelens/b200_eager_trace.json.gz"},
      {"hta_no_attention", "hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"},
  };
  return cases;
}

std::filesystem::path expected_dir() {
  return std::filesystem::path(ATTNPROF_SOURCE_DIR) / "cpp" / "tests" / "golden" / "expected";
}

bool updating() {
  const char* v = std::getenv("ATTNPROF_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The Report of a fixture with the machine-dependent facts normalised (see the file comment).
Report normalised_report(const GoldenCase& c) {
  const std::string fixtures = ATTNPROF_FIXTURES_DIR;
  Result<Report> report = analyze_file(fixtures + "/" + c.fixture);
  if (!report) {
    ADD_FAILURE() << c.fixture << ": " << report.error().message;
    return {};
  }
  for (std::string& file : report->source.files)
    if (file.starts_with(fixtures + "/")) file = "fixtures/" + file.substr(fixtures.size() + 1);
  report->source.code.reset();
  return std::move(*report);
}

// The first line where two texts differ, for a readable failure.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (size_t line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, le));
    const bool more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "texts differ only in their final newline";
    if (le != la || more_e != more_a)
      return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") +
             "\n  actual:   " + (more_a ? la : "<end>");
  }
}

void expect_matches_golden(const std::string& file, const std::string& actual) {
  const std::filesystem::path path = expected_dir() / file;
  if (updating()) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing: run `make update-golden`";
  const std::string expected = read_text(path);
  EXPECT_TRUE(expected == actual) << file << " changed at " << first_difference(expected, actual)
                                  << "\nIf the change is meant: `make update-golden` and commit the diff.";
}

class GoldenSnapshot : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenSnapshot, TextMarkdownAndJsonOutputsMatchTheCheckedInSnapshots) {
  const Report report = normalised_report(GetParam());
  expect_matches_golden(GetParam().name + ".txt", render_text(report));
  expect_matches_golden(GetParam().name + ".md", render_markdown(report));
  expect_matches_golden(GetParam().name + ".json", report_to_json(report));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenSnapshot, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& param) { return param.param.name; });

// Every checked-in snapshot belongs to a case: a case dropped from the list leaves no stale file
// that nobody compares.
TEST(GoldenSnapshotFiles, EverySnapshotFileBelongsToACase) {
  for (const auto& entry : std::filesystem::directory_iterator(expected_dir())) {
    const std::string stem = entry.path().stem().string();
    bool known = false;
    for (const GoldenCase& c : golden_cases()) known = known || c.name == stem;
    EXPECT_TRUE(known) << entry.path() << " belongs to no golden case";
  }
}

}  // namespace
}  // namespace attnprof
