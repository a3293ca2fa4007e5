// Inputs of the ingest fuzzer (cpp/fuzz, docs/ingest.md "Fuzzing"), run the way the fuzzer
// runs them: parse_trace with 4 KiB chunks, then analyze_trace when the bytes are a trace.
// Every file of cpp/tests/ingest/fuzz_regressions/ is listed in kExpected with the outcome it
// must have; the same files seed every fuzz run (cpp/fuzz/run.sh).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/ingest.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressionsDir = fs::path(ATTNPROF_SOURCE_DIR) / "cpp/tests/ingest/fuzz_regressions";

// What one saved input must give: an Error with this code whose message contains `says`, or a
// trace with `slices` slices whose Trace::issues kinds are exactly `issues` (sorted, spaces).
struct Expected {
  std::string_view file;
  std::optional<ErrorCode> error;
  std::string_view says;
  std::string_view issues;
  size_t slices = 0;
};

constexpr auto kTrace = std::nullopt;

const Expected kExpected[] = {
    // The fuzzer's first crash (fixed in 3af2845), minimised: a ':' where the first event should
    // be, then the end of the file. Sampling the non-object event read past the buffer.
    {"non_object_event_truncated.json", ErrorCode::kMalformedJson, "near byte 16", ""},
    // The same branch on well-formed input: each non-object event is counted, the object kept.
    {"non_object_events.json", kTrace, "", "event_not_object", 1},
    // From the corpus of the 10-minute run (cpp/fuzz/run.sh), smallest input per outcome.
    {"empty_trace_events.json", kTrace, "", "", 0},
    {"top_level_number.json", ErrorCode::kNotATrace, "top level is not an object", ""},
    {"unclosed_string.json", ErrorCode::kMalformedJson, "A string is opened, but never closed", ""},
    {"control_chars_in_string.json", ErrorCode::kMalformedJson, "some characters must be escaped", ""},
    {"bad_escape_in_header_key.json", ErrorCode::kMalformedJson, "Problem while parsing a string", ""},
    {"version_key_without_trace_events.json", ErrorCode::kNotATrace, "no \"traceEvents\" array", ""},
    {"truncated_after_events_array.json", ErrorCode::kMalformedJson, "near byte 18 (JSON document ended early", ""},
    {"invalid_bytes_after_trace.json", ErrorCode::kMalformedJson, "near byte 127 (Unexpected trailing content", ""},
    // A number that is not one ("tid": 7_versionnts) is a bad value, not a fatal error.
    {"malformed_number_in_event.json", kTrace, "", "bad_value event_not_object", 1},
    // Reduced by hand from corpus inputs that were mutated fixtures (values made up): header keys,
    // ac2g flows, a flow without ts, string pids, M and instant events, a traceName after the array.
    {"flows_string_pids_and_tail_keys.json", kTrace, "", "missing_ts", 2},
    {"byte_order_mark_before_trace.json", kTrace, "", "", 1},
    // A misspelt literal where an event should be is malformed JSON (it loaded with an
    // event_not_object issue before: on-demand parsing checks a literal only when it reads it).
    {"misspelt_literal_event.json", ErrorCode::kMalformedJson, "near byte 16", ""},
    {"misspelt_null_after_event.json", ErrorCode::kMalformedJson, "near byte 101", ""},
};

struct Outcome {
  std::string label;
  Result<Trace> trace;
  std::optional<Report> report;  // analyze_trace's Report, when the input is a trace
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The fuzz target's steps (cpp/fuzz/fuzz_ingest.cpp): parse, then analyze_trace, which reads no
// sidecar and runs no git.
Outcome run_like_fuzzer(const fs::path& file) {
  IngestOptions options;
  options.chunk_bytes = 4096;
  std::string label = file.filename().string();
  Outcome out{label, parse_trace(read_bytes(file), label, options), std::nullopt};
  if (out.trace.ok()) out.report = analyze_trace(*out.trace);
  return out;
}

std::vector<fs::path> regression_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kRegressionsDir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

const IngestIssue* find_issue(const Trace& t, std::string_view kind) {
  for (const auto& i : t.issues)
    if (i.kind == kind) return &i;
  return nullptr;
}

TEST(FuzzRegressions, EverySavedInputIsAOneLineErrorOrAReport) {
  const std::vector<fs::path> files = regression_files();
  ASSERT_GE(files.size(), std::size(kExpected)) << kRegressionsDir;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const Outcome out = run_like_fuzzer(file);
    if (!out.trace.ok()) {
      const std::string& message = out.trace.error().message;
      EXPECT_FALSE(message.empty());
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.rfind(out.label, 0), 0u) << "an error names the input first: " << message;
      continue;
    }
    ASSERT_TRUE(out.report.has_value());
    // Each ingest issue reaches the Report as one line of source.missing ("N events ...").
    for (const IngestIssue& issue : out.trace->issues) {
      const std::string count = std::to_string(issue.count) + " ";
      EXPECT_TRUE(std::any_of(out.report->source.missing.begin(), out.report->source.missing.end(),
                              [&](const std::string& m) { return m.rfind(count, 0) == 0; }))
          << issue.kind << " is not in the report";
    }
    // Whatever the report holds survives its JSON form.
    auto back = report_from_json(report_to_json(*out.report));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->calls.size(), out.report->calls.size());
    EXPECT_EQ(back->source.missing, out.report->source.missing);
  }
}

TEST(FuzzRegressions, EverySavedInputHasItsStatedOutcome) {
  std::set<std::string> listed;
  for (const Expected& e : kExpected) listed.insert(std::string(e.file));
  std::set<std::string> present;
  for (const fs::path& file : regression_files()) present.insert(file.filename().string());
  EXPECT_EQ(present, listed) << "a file in " << kRegressionsDir << " and kExpected must go together";

  for (const Expected& e : kExpected) {
    SCOPED_TRACE(std::string(e.file));
    const Outcome out = run_like_fuzzer(kRegressionsDir / e.file);
    if (e.error) {
      ASSERT_FALSE(out.trace.ok()) << "expected an error, got a trace of " << out.trace->slices.size() << " slices";
      EXPECT_EQ(out.trace.error().code, *e.error) << out.trace.error().message;
      EXPECT_NE(out.trace.error().message.find(e.says), std::string::npos) << out.trace.error().message;
      continue;
    }
    ASSERT_TRUE(out.trace.ok()) << out.trace.error().message;
    EXPECT_EQ(out.trace->slices.size(), e.slices);
    std::vector<std::string> kinds;
    for (const IngestIssue& issue : out.trace->issues) kinds.push_back(issue.kind);
    std::sort(kinds.begin(), kinds.end());
    std::string joined;
    for (const std::string& k : kinds) joined += (joined.empty() ? "" : " ") + k;
    EXPECT_EQ(joined, e.issues);
  }
}

// The crash input itself: before 3af2845 sampling the ':' (raw_json_token() after a failed
// get_object()) read past the end of the buffer; now the document is malformed JSON, and the
// byte named is the ':' at 16 itself (the check of a non-object event's literal finds it; before
// that check the message named the ',' at 18, where on-demand parsing stopped).
TEST(FuzzRegressions, NonObjectEventCutOffByEndOfFileIsMalformedJson) {
  const Outcome out = run_like_fuzzer(kRegressionsDir / "non_object_event_truncated.json");
  ASSERT_FALSE(out.trace.ok());
  EXPECT_EQ(out.trace.error().code, ErrorCode::kMalformedJson);
  EXPECT_EQ(out.trace.error().message,
            out.label + ": malformed JSON near byte 16 (" + simdjson::error_message(simdjson::TAPE_ERROR) + ")");
}

// Well-formed non-object events: counted with the simdjson error as the sample (never the raw
// token), and the one object event is still a slice.
TEST(FuzzRegressions, NonObjectEventsAreCountedAndTheObjectEventKept) {
  const Outcome out = run_like_fuzzer(kRegressionsDir / "non_object_events.json");
  ASSERT_TRUE(out.trace.ok()) << out.trace.error().message;
  EXPECT_EQ(out.trace->event_count, 5);
  ASSERT_EQ(out.trace->slices.size(), 1u);
  EXPECT_EQ(out.trace->slices[0].ts_ns, 1500);
  const IngestIssue* issue = find_issue(*out.trace, "event_not_object");
  ASSERT_NE(issue, nullptr);
  EXPECT_EQ(issue->count, 4);
  ASSERT_FALSE(issue->samples.empty());
  EXPECT_EQ(issue->samples.front(), std::string("event #1: ") + simdjson::error_message(simdjson::INCORRECT_TYPE));
}

}  // namespace
}  // namespace attnprof
