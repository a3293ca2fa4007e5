// The error contract end to end: `attnprof analyze BAD --json OUT` prints one line on
// stderr, exits 2 and leaves no OUT; partial-data traces still succeed.
#include <filesystem>
#include <string>

#include "attnprof/overlay.h"
#include "cli_contract.h"

namespace {

namespace fs = std::filesystem;

class CliErrorContract : public attnprof::testing::CliContractTest {
 protected:
  std::string analyze(const std::string& input) { return "analyze '" + input + "' --json '" + out() + "'"; }
  void expect_bad_input(const std::string& input, const std::string& mention) {
    CliContractTest::expect_bad_input(analyze(input), {mention});
  }
};

// The project's own gzip writer (the annotated-trace output uses it).
std::string gzip(const std::string& text) { return attnprof::gzip_compress(text).value(); }

const std::string kTrace = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20.0, "dur": 5.0, "args": {"External id": 2}}
]})";

TEST_F(CliErrorContract, MissingFileEmptyFileAndDirectoryExitTwo) {
  expect_bad_input((dir_ / "missing.json").string(), "missing.json");
  expect_bad_input(write("empty.json", ""), "empty.json");
  fs::create_directories(dir_ / "no_traces");
  expect_bad_input((dir_ / "no_traces").string(), "no_traces");
}

TEST_F(CliErrorContract, TruncatedJsonAtSeveralOffsetsExitsTwo) {
  for (size_t cut : {size_t{5}, kTrace.size() / 3, kTrace.size() / 2, kTrace.size() - 3})
    expect_bad_input(write("cut" + std::to_string(cut) + ".json", kTrace.substr(0, cut)), "malformed JSON");
}

TEST_F(CliErrorContract, CorruptGzipAndNotATraceExitTwo) {
  const std::string gz = gzip(kTrace);
  expect_bad_input(write("trunc.json.gz", gz.substr(0, gz.size() / 2)), "gzip");
  expect_bad_input(write("list.json", "[1, 2]"), "not of trace events");
  expect_bad_input(write("object.json", R"({"calls": []})"), "traceEvents");
}

TEST_F(CliErrorContract, PartialDataTracesStillSucceed) {
  // Negative duration, duplicate correlation, out-of-range number, non-UTF-8 name: the
  // trace is usable, so analyze succeeds and writes its Report.
  std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "neg", "pid": 1, "tid": 1, "ts": 10, "dur": -4},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 11, "dur": 1, "args": {"correlation": 5}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 12, "dur": 1, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "k_)";
  text += "\xff";
  text += R"(", "pid": 0, "tid": 7, "ts": 13, "dur": 1, "args": {"correlation": 123456789012345678901234567890}}]})";
  const attnprof::testing::CliRun r = run(analyze(write("partial_trace.json", text)));
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(fs::exists(out()));
}

}  // namespace
