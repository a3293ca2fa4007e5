// Ingest parses only the args values some analysis reads (docs/ingest.md, "What is checked"):
// a bad value in a field nothing reads is stepped over without an issue, a bad value in a
// field that is read is still one, and which op inputs are read follows TraceReads whether
// "args" comes after the event's name (Kineto) or before it (sorted keys).
#include <gtest/gtest.h>

#include <string>

#include "attnprof/attention.h"
#include "attnprof/ingest.h"

namespace attnprof {
namespace {

const IngestIssue* find_issue(const Trace& t, std::string_view kind) {
  for (const IngestIssue& i : t.issues)
    if (i.kind == kind) return &i;
  return nullptr;
}

int64_t issue_count(const Trace& t) {
  int64_t n = 0;
  for (const IngestIssue& i : t.issues) n += i.count;
  return n;
}

IngestOptions with_reads(TraceReads reads) {
  IngestOptions o;
  o.reads = reads;
  return o;
}

bool reads_only_matmul(std::string_view op) { return op == "aten::matmul"; }

TEST(UnreadValues, BadValuesInFieldsNoAnalysisReadsAreNoIssue) {
  // Strides, the forward thread, a kernel's grid/block/bytes and unknown keys are not parsed.
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
     "args": {"External id": 7, "Input Dims": [[2, 3], [3, 4]], "Input Strides": [["x"], [1e400]],
              "Fwd thread id": "main", "Record function id": [{"Sequence number": 12}]}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
     "args": {"correlation": 3, "device": 0, "stream": 7, "grid": [1e400, "a", 1], "block": "wide", "bytes": -1.5e999}}]})",
                       "unread.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(issue_count(*r), 0);
  ASSERT_EQ(r->slices.size(), 2u);
  EXPECT_EQ(r->external_id_of(r->slices[0]), 7);
  const OpArgs* op = r->op_args_of(r->slices[0]);
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->inputs.size(), 2u);
  EXPECT_EQ(op->inputs[1].dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(op->sequence_number, kNoId);  // a nested "Sequence number" is not the op's
  const GpuArgs* gpu = r->gpu_args_of(r->slices[1]);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->stream, 7);
  EXPECT_EQ(r->slices[1].correlation(), 3);
}

TEST(UnreadValues, BadValuesInFieldsThatAreReadAreStillIssues) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1,
     "args": {"correlation": 99999999999999999999999, "device": "gpu0", "stream": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
     "args": {"Input Dims": [[2, "three"]], "Sequence number": "first"}}]})",
                       "read.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const IngestIssue* range = find_issue(*r, "number_out_of_range");
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->count, 1);  // correlation
  const IngestIssue* bad = find_issue(*r, "bad_value");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->count, 3);  // device, the dim "three", Sequence number
  EXPECT_EQ(r->gpu_args_of(r->slices[0])->stream, 7);
}

TEST(UnreadValues, InputsOfOpsNoAnalysisReadsAreNotParsed) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
     "args": {"Input Dims": [["x"]], "Input type": [7], "Sequence number": 4}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 1, "ts": 2, "dur": 5,
     "args": {"Input Dims": [[2, 3], [3, "y"]], "Input type": ["float", "float"]}}]})";
  TraceReads reads;
  reads.op_inputs = reads_only_matmul;
  auto r = parse_trace(text, "ops.json", with_reads(reads));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const IngestIssue* bad = find_issue(*r, "bad_value");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->count, 1);  // only the matmul's "y"
  EXPECT_EQ(bad->samples[0], "event #1: Input Dims = \"y\"");
  const OpArgs* view = r->op_args_of(r->slices[0]);
  ASSERT_NE(view, nullptr);  // kept for its sequence number, without inputs
  EXPECT_TRUE(view->inputs.empty());
  EXPECT_EQ(view->sequence_number, 4);
  ASSERT_EQ(r->op_args_of(r->slices[1])->inputs.size(), 2u);

  auto all = parse_trace(text, "ops.json");  // every op's inputs read: the view's "x" is an issue too
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(find_issue(*all, "bad_value")->count, 2);
}

TEST(UnreadValues, ArgsBeforeTheNameAreReadForTheOpTheyBelongTo) {
  // Sorted keys put "args" first: they are read once the name is known, as in Kineto order.
  auto r = parse_trace(R"({"traceEvents": [
    {"args": {"Input Dims": [[4, 8]], "Sequence number": 2}, "cat": "cpu_op", "dur": 5, "name": "aten::matmul",
     "ph": "X", "pid": 1, "tid": 1, "ts": 1},
    {"args": {"Input Dims": [["z"]], "Sequence number": 3}, "cat": "cpu_op", "dur": 5, "name": "aten::view",
     "ph": "X", "pid": 1, "tid": 1, "ts": 2},
    {"ph": "X", "cat": "cpu_op", "args": {"Input Dims": [[5]]}, "name": "aten::matmul", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]})",
                       "sorted.json", with_reads([] {
                         TraceReads reads;
                         reads.op_inputs = reads_only_matmul;
                         return reads;
                       }()));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(issue_count(*r), 0);
  ASSERT_EQ(r->slices.size(), 3u);
  EXPECT_EQ(r->op_args_of(r->slices[0])->inputs[0].dims, (std::vector<int64_t>{4, 8}));
  EXPECT_TRUE(r->op_args_of(r->slices[1])->inputs.empty());
  EXPECT_EQ(r->op_args_of(r->slices[1])->sequence_number, 3);
  EXPECT_EQ(r->op_args_of(r->slices[2])->inputs[0].dims, (std::vector<int64_t>{5}));
}

TEST(UnreadValues, PythonFrameIdsAreParsedOnlyWhenKept) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "model.py(3): forward", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
     "args": {"Python parent id": null, "Python id": "one", "Python module id": 4}}]})";
  auto kept = parse_trace(text, "py.json");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  ASSERT_NE(find_issue(*kept, "bad_value"), nullptr);
  EXPECT_EQ(kept->python_args_of(kept->slices[0])->module_id, 4);

  auto analysed = parse_trace(text, "py.json", with_reads(analysis_reads()));
  ASSERT_TRUE(analysed.ok()) << analysed.error().message;
  EXPECT_EQ(issue_count(*analysed), 0);
  EXPECT_TRUE(analysed->python_args.empty());
  // Not an nn.Module frame: no slice, only its source file and time.
  EXPECT_TRUE(analysed->slices.empty());
  ASSERT_EQ(analysed->source_frames.size(), 1u);
  EXPECT_EQ(analysed->strings.get(analysed->source_frames[0].name), "model.py(3): forward");
  EXPECT_EQ(analysed->python_frames, 1);
}

}  // namespace
}  // namespace attnprof
