// Partial data reaches the user: ingest issues (Trace::issues) become SourceInfo::missing lines.
#include <gtest/gtest.h>

#include "attnprof/analyze.h"
#include "attnprof/ingest.h"

namespace attnprof {
namespace {

TEST(PartialData, NegativeDurationIsReportedInSourceMissing) {
  const char* json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": -5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 20, "dur": 3}
  ]})";
  Result<Trace> trace = parse_trace(json, "negative.json");
  ASSERT_TRUE(trace) << trace.error().message;
  const Report report = analyze_trace(*trace);
  bool found = false;
  for (const std::string& line : report.source.missing)
    found |= line.rfind("1 events with negative duration were kept with duration 0", 0) == 0;
  EXPECT_TRUE(found) << ::testing::PrintToString(report.source.missing);
}

}  // namespace
}  // namespace attnprof
