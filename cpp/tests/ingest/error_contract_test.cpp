// The ingest error contract: unusable input is one Error naming the file; problems that
// leave the trace usable are counted in Trace::issues.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnprof/ingest.h"
#include "attnprof/overlay.h"
#include "attnprof/io.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("attnprof_ingest_" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// The project's own gzip writer (the annotated-trace output uses it).
std::string gzip(const std::string& text) { return gzip_compress(text).value(); }

// A small but complete Kineto-shaped trace: a cpu_op, its launch and its kernel.
const std::string kGoodTrace = R"({
  "schemaVersion": 1,
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 100.500, "dur": 20.250,
     "args": {"External id": 1, "Input Dims": [[2, 3], [3, 4]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 105.000, "dur": 4.000,
     "args": {"External id": 1, "correlation": 42}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 110.000, "dur": 3.000,
     "args": {"External id": 1, "correlation": 42, "device": 0, "stream": 7, "grid": [1, 2, 3], "block": [32, 1, 1]}}
  ],
  "traceName": "t.json"
})";

const IngestIssue* find_issue(const Trace& t, std::string_view kind) {
  for (const auto& i : t.issues)
    if (i.kind == kind) return &i;
  return nullptr;
}

void expect_error(const Result<Trace>& r, ErrorCode code, const std::string& must_mention) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, code) << r.error().message;
  EXPECT_NE(r.error().message.find(must_mention), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << "error must be one line";
}

TEST(IngestErrors, GoodSyntheticTraceLoadsFromPlainAndGzipBytes) {
  TempDir dir;
  for (const auto& p : {dir.write("good.json", kGoodTrace), dir.write("good.bin", gzip(kGoodTrace))}) {
    auto r = load_trace(p);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->slices.size(), 3u);
    EXPECT_EQ(r->slices[0].ts_ns, 100500);
    EXPECT_EQ(r->slices[0].dur_ns, 20250);
    EXPECT_TRUE(r->issues.empty());
  }
}

TEST(IngestErrors, MissingFileIsFileNotFound) {
  expect_error(load_trace("/nonexistent/dir/trace.json"), ErrorCode::kFileNotFound, "/nonexistent/dir/trace.json");
}

TEST(IngestErrors, DirectoryIsNotATraceFile) {
  TempDir dir;
  expect_error(load_trace(dir.path("")), ErrorCode::kFileNotFound, "directory");
}

TEST(IngestErrors, EmptyAndWhitespaceFilesAreEmptyInput) {
  TempDir dir;
  expect_error(load_trace(dir.write("empty.json", "")), ErrorCode::kEmptyInput, "empty.json");
  expect_error(load_trace(dir.write("blank.json", " \n\t\n")), ErrorCode::kEmptyInput, "blank.json");
  expect_error(load_trace(dir.write("empty.json.gz", gzip(""))), ErrorCode::kEmptyInput, "empty.json.gz");
}

TEST(IngestErrors, TruncatedJsonAtAnyOffsetIsMalformedNamingWhere) {
  TempDir dir;
  for (size_t cut : {size_t{1}, size_t{30}, kGoodTrace.size() / 2, kGoodTrace.size() - 20, kGoodTrace.size() - 2}) {
    SCOPED_TRACE(cut);
    const auto p = dir.write("cut.json", kGoodTrace.substr(0, cut));
    expect_error(load_trace(p), ErrorCode::kMalformedJson, "cut.json");
  }
  const auto p = dir.write("cut_mid.json", kGoodTrace.substr(0, kGoodTrace.size() / 2));
  expect_error(load_trace(p), ErrorCode::kMalformedJson, "byte");
}

TEST(IngestErrors, TruncatedRealFixtureIsMalformedNotPartial) {
  auto text = read_text_file(std::string(ATTNPROF_FIXTURES_DIR) +
                             "/h200-torch2.11/traces/bert_sdpa_fp16_b16_s512.pt.trace.json.gz");
  ASSERT_TRUE(text.ok());
  for (size_t cut : {text->size() / 10, text->size() / 2, text->size() - 3}) {
    SCOPED_TRACE(cut);
    expect_error(parse_trace(std::string_view(*text).substr(0, cut), "bert.json"), ErrorCode::kMalformedJson,
                 "bert.json");
  }
}

TEST(IngestErrors, SyntaxErrorsAreMalformed) {
  expect_error(parse_trace(R"({"traceEvents": [{"ph": "X",, }]})", "a.json"), ErrorCode::kMalformedJson, "a.json");
  expect_error(parse_trace(R"({"traceEvents": []} trailing)", "b.json"), ErrorCode::kMalformedJson, "b.json");
  expect_error(parse_trace(R"({"traceEvents": [})", "c.json"), ErrorCode::kMalformedJson, "c.json");
  expect_error(parse_trace("not json at all", "d.json"), ErrorCode::kMalformedJson, "d.json");
}

TEST(IngestErrors, InvalidJsonWithoutTraceEventsIsMalformedNotNotATrace) {
  // Found by the fuzzer: on-demand parsing stops before the bad bytes, so these were once
  // called "valid JSON but not a trace".
  expect_error(parse_trace("{}}", "extra_brace.json"), ErrorCode::kMalformedJson, "extra_brace.json");
  expect_error(parse_trace(R"({"t": [7z}})", "bad_number.json"), ErrorCode::kMalformedJson, "bad_number.json");
  // Also on the streaming path: a misspelt literal as the first element of a bare array, and
  // an array after junk at the top level, were called "not a trace".
  expect_error(parse_trace(" [tl]}", "bad_literal.json"), ErrorCode::kMalformedJson, "bad_literal.json");
  expect_error(parse_trace(R"("vent": [])", "junk_before_array.json"), ErrorCode::kMalformedJson, "junk_before_array.json");
  expect_error(parse_trace(R"({"traceEvents": [tru]})", "bad_event_literal.json"), ErrorCode::kMalformedJson,
               "bad_event_literal.json");
  // Well-formed literals stay what they are: not a trace, or an event_not_object issue.
  expect_error(parse_trace("[true]", "array_of_bool.json"), ErrorCode::kNotATrace, "not of trace events");
  expect_error(parse_trace(R"("just a string")", "string.json"), ErrorCode::kNotATrace, "string.json");
}

TEST(IngestErrors, CorruptAndTruncatedGzipAreCorruptGzip) {
  TempDir dir;
  std::string gz = gzip(kGoodTrace);
  expect_error(load_trace(dir.write("trunc.json.gz", gz.substr(0, gz.size() / 2))), ErrorCode::kCorruptGzip,
               "trunc.json.gz");
  std::string bad = gz;
  for (size_t i = 12; i < bad.size() - 8; i += 3) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  expect_error(load_trace(dir.write("bad.json.gz", bad)), ErrorCode::kCorruptGzip, "bad.json.gz");
  expect_error(load_trace(dir.write("magic_only.json.gz", "\x1f\x8b")), ErrorCode::kCorruptGzip, "magic_only");
}

TEST(IngestErrors, ValidJsonThatIsNotATraceIsNotATrace) {
  expect_error(parse_trace("[1,2]", "arr.json"), ErrorCode::kNotATrace, "arr.json");
  expect_error(parse_trace("[]", "empty_arr.json"), ErrorCode::kNotATrace, "empty_arr.json");
  expect_error(parse_trace("{}", "obj.json"), ErrorCode::kNotATrace, "obj.json");
  expect_error(parse_trace(R"({"schema_version": "1", "calls": []})", "report.json"), ErrorCode::kNotATrace,
               "traceEvents");
  expect_error(parse_trace(R"({"traceEvents": 5})", "num.json"), ErrorCode::kNotATrace, "num.json");
  expect_error(parse_trace("42", "scalar.json"), ErrorCode::kNotATrace, "scalar.json");
  expect_error(parse_trace(R"("text")", "str.json"), ErrorCode::kNotATrace, "str.json");
}

TEST(IngestErrors, EmptyTraceEventsIsAValidTraceWithNothingInIt) {
  auto r = parse_trace(R"({"schemaVersion": 1, "traceEvents": []})", "empty_events.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->event_count, 0);
  EXPECT_TRUE(r->slices.empty());
  EXPECT_EQ(r->meta.schema_version, 1);
}

TEST(IngestErrors, ChromeArrayFormatOfEventsLoads) {
  auto r = parse_trace(R"([{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}])", "a.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  EXPECT_EQ(r->slices[0].dur_ns, 2000);
}

TEST(IngestIssues, NegativeDurationIsCountedAndClampedToZero) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 10, "dur": -5},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 20, "dur": 5}]})", "neg.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 2u);
  EXPECT_EQ(r->slices[0].dur_ns, 0);
  const IngestIssue* i = find_issue(*r, "negative_duration");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->count, 1);
}

TEST(IngestIssues, EventWithoutTimestampIsSkippedAndCounted) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "no_ts", "pid": 1, "tid": 1, "dur": 5, "args": {"Input Dims": [[1]]}},
    {"ph": "X", "cat": "cpu_op", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"Input Dims": [[2]]}}]})",
                       "nots.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  EXPECT_EQ(r->name_of(r->slices[0]), "ok");
  ASSERT_EQ(r->op_args.size(), 1u);  // the skipped event's args row is gone too
  EXPECT_EQ(r->op_args_of(r->slices[0])->inputs[0].dims, std::vector<int64_t>{2});
  EXPECT_EQ(r->event_count, 2);
  ASSERT_NE(find_issue(*r, "missing_ts"), nullptr);
}

TEST(IngestIssues, DuplicateLaunchCorrelationIsCounted) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"correlation": 9}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "args": {"correlation": 9}}]})",
                       "dup.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->slices.size(), 2u);
  const IngestIssue* i = find_issue(*r, "duplicate_correlation");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->count, 1);
}

TEST(IngestIssues, NumbersOutOfRangeAreCountedNotFatal) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
     "args": {"correlation": 99999999999999999999999, "grid": [1e400, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "far", "pid": 0, "tid": 7, "ts": 99999999999999999999, "dur": 1}]})",
                       "range.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  EXPECT_EQ(r->slices[0].correlation(), kNoId);
  ASSERT_NE(find_issue(*r, "number_out_of_range"), nullptr);
}

TEST(IngestIssues, MemoryDeviceOutsideInt16IsCountedAndTheEventKept) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 5, "s": "t",
     "args": {"Device Type": 1, "Device Id": 70000, "Addr": 8, "Bytes": 16, "Total Allocated": 16, "Total Reserved": 32}}]})",
                       "memory_range.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->memory.size(), 1u);
  EXPECT_EQ(r->memory[0].device_type, 1);
  EXPECT_EQ(r->memory[0].device_id, -1);  // left unset
  EXPECT_EQ(r->memory[0].total_reserved, 32);
  const IngestIssue* range = find_issue(*r, "number_out_of_range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->samples.front(), "event #0: Device Id = 70000");
}

TEST(IngestIssues, LinkIdsOutside32BitsAreCountedAndLeftUnset) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 9,
     "args": {"External id": 4294967295}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 1,
     "args": {"External id": 4294967294, "correlation": -7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2,
     "args": {"External id": 4294967294, "correlation": 4294967294}}]})",
                       "link_range.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 3u);
  EXPECT_EQ(r->external_id_of(r->slices[0]), kNoId);  // 2^32 - 1 is one past the largest
  EXPECT_EQ(r->slices[1].correlation(), kNoId);       // negative
  EXPECT_EQ(r->slices[2].correlation(), Slice::kMaxLinkId);
  EXPECT_EQ(r->external_id_of(r->slices[2]), Slice::kMaxLinkId);
  const IngestIssue* range = find_issue(*r, "number_out_of_range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->count, 2);
  EXPECT_EQ(range->samples.front(), "event #0: External id = 4294967295");
  EXPECT_EQ(range->samples.back(), "event #1: correlation = -7");
}

TEST(IngestIssues, KernelStreamOutsideInt32IsCountedAndTheKernelKept) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 2,
     "args": {"device": 0, "stream": 5000000000, "correlation": 3}}]})",
                       "stream_range.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  const GpuArgs* gpu = r->gpu_args_of(r->slices[0]);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->device, 0);
  EXPECT_EQ(gpu->stream, kNoId);  // left unset
  EXPECT_EQ(r->slices[0].correlation(), 3);
  const IngestIssue* range = find_issue(*r, "number_out_of_range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->samples.front(), "event #0: stream = 5000000000");
}

TEST(IngestIssues, NonUtf8NameKeepsTheEventAndIsCounted) {
  std::string text = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "bad_)";
  text += "\xff\xfe";
  text += R"(_name", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]})";
  auto r = parse_trace(text, "utf8.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  EXPECT_TRUE(r->name_of(r->slices[0]).starts_with("bad_"));
  ASSERT_NE(find_issue(*r, "non_utf8_text"), nullptr);
}

TEST(IngestIssues, WrongTypesAreCountedAndTheRestOfTheEventIsKept) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": "soon", "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"External id": "x", "Input Dims": 3}},
    7,
    {"args": {"External id": 5}, "ts": 3, "dur": 1, "cat": "cpu_op", "ph": "X", "name": "args_first", "pid": 1, "tid": 1}]})",
                       "types.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 2u);
  EXPECT_EQ(r->name_of(r->slices[0]), "b");
  EXPECT_EQ(r->external_id_of(r->slices[0]), kNoId);
  EXPECT_EQ(r->name_of(r->slices[1]), "args_first");
  EXPECT_EQ(r->external_id_of(r->slices[1]), 5);  // args written before ph/cat are still read
  EXPECT_NE(find_issue(*r, "bad_value"), nullptr);
  EXPECT_NE(find_issue(*r, "event_not_object"), nullptr);
}

TEST(IngestIssues, KeysAfterTraceEventsAreRead) {
  auto r = parse_trace(R"({"traceEvents": [], "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 4},
                           "displayTimeUnit": "ns", "traceName": "x"})",
                       "tail.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->meta.distributed.has_value());
  EXPECT_EQ(r->meta.distributed->rank, 3);
  EXPECT_EQ(r->meta.distributed->world_size, 4);
  EXPECT_EQ(r->meta.display_time_unit, "ns");
}

}  // namespace
}  // namespace attnprof
