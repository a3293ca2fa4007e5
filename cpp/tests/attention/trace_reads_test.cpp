// What the analyses read (analysis_reads, trace_reads.cpp) is all ingest keeps of a trace:
// the Report of every fixture must not change when the rest is dropped, and what is dropped
// must really be gone (it is the memory the declaration saves).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/ingest.h"
#include "attnprof/report_json.h"
#include "fixture_traces.h"

namespace attnprof {
namespace {


using testing::fixture_traces;

IngestOptions with_reads(TraceReads reads) {
  IngestOptions options;
  options.reads = reads;
  return options;
}

TEST(TraceReads, EveryFixtureGivesTheSameReportAsWithEverythingKept) {
  const std::vector<std::string> paths = fixture_traces();
  ASSERT_GE(paths.size(), 40u) << "fixtures not found under " << ATTNPROF_FIXTURES_DIR;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    Result<Trace> everything = load_trace(path, with_reads({}));
    Result<Trace> read = load_trace(path, with_reads(analysis_reads()));
    ASSERT_TRUE(everything.ok() && read.ok());
    EXPECT_LE(read->op_args.size(), everything->op_args.size());
    EXPECT_TRUE(read->python_args.empty());
    EXPECT_TRUE(read->flows.empty());
    EXPECT_EQ(report_to_json(analyze_loaded_trace(*read)), report_to_json(analyze_loaded_trace(*everything)));
  }
}

// The matmuls, softmax and scale of eager attention and the SDPA ops keep their inputs; views,
// casts and the linear layers only their sequence numbers; Python ids and flows are not kept.
constexpr const char* kEvents = R"(
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Attn_0", "pid": 1, "tid": 1, "ts": 1, "dur": 90,
   "args": {"Python id": 7, "Python parent id": null, "Python module id": 0}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 2, "dur": 5,
   "args": {"Input Dims": [[4, 64], [64, 64], [64]], "Input type": ["float", "float", "float"], "Sequence number": 11}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 8, "dur": 1,
   "args": {"Input Dims": [[4, 64], []], "Input type": ["float", "ScalarList"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
   "args": {"Input Dims": [[1, 4, 4, 16], [1, 4, 16, 4]], "Input type": ["float", "float"], "Sequence number": 12}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::softmax", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
   "args": {"Input Dims": [[1, 4, 4, 4], [], []], "Input type": ["float", "Scalar", ""], "Concrete Inputs": ["", "-1", ""]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "pid": 1, "tid": 1, "ts": 30, "dur": 20,
   "args": {"Input Dims": [[1, 4, 4, 16], [1, 4, 4, 16], [1, 4, 4, 16]], "Input type": ["float", "float", "float"]}},
  {"ph": "s", "id": 5, "pid": 1, "tid": 1, "ts": 40, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 45, "cat": "ac2g", "name": "ac2g", "bp": "e"})";

void expect_only_what_analyses_read(const Trace& t) {
  auto args_of = [&](std::string_view name) -> const OpArgs* {
    for (const Slice& s : t.slices)
      if (t.name_of(s) == name) return t.op_args_of(s);
    ADD_FAILURE() << name << " missing";
    return nullptr;
  };
  ASSERT_NE(args_of("aten::linear"), nullptr);
  EXPECT_TRUE(args_of("aten::linear")->inputs.empty());
  EXPECT_EQ(args_of("aten::linear")->sequence_number, 11);
  EXPECT_EQ(args_of("aten::view"), nullptr);  // neither inputs read nor a sequence number
  ASSERT_NE(args_of("aten::matmul"), nullptr);
  EXPECT_EQ(args_of("aten::matmul")->inputs[1].dims, (std::vector<int64_t>{1, 4, 16, 4}));
  EXPECT_EQ(args_of("aten::matmul")->sequence_number, 12);
  ASSERT_NE(args_of("aten::softmax"), nullptr);
  EXPECT_EQ(t.strings.get(args_of("aten::softmax")->inputs[1].concrete), "-1");
  ASSERT_NE(args_of("aten::scaled_dot_product_attention"), nullptr);
  EXPECT_EQ(args_of("aten::scaled_dot_product_attention")->inputs.size(), 3u);
  EXPECT_EQ(t.python_args_of(t.slices.front()), nullptr);
  EXPECT_TRUE(t.python_args.empty());
  EXPECT_TRUE(t.flows.empty());
  EXPECT_EQ(t.slices.size(), 6u);  // every slice is still there
}

TEST(TraceReads, IngestKeepsOnlyTheInputsAnAnalysisReads) {
  auto r = parse_trace(std::string(R"({"traceEvents": [)") + kEvents + "]}", "reads.json", with_reads(analysis_reads()));
  ASSERT_TRUE(r.ok()) << r.error().message;
  expect_only_what_analyses_read(*r);
  EXPECT_TRUE(r->issues.empty());
}

// Chunks parsed on worker threads keep everything; appending them applies the reads.
TEST(TraceReads, ChunksParsedInParallelKeepTheSameAsOneThread) {
  std::string events;
  constexpr int kCopies = 300;
  for (int i = 0; i < kCopies; ++i) events += (i ? "," : "") + std::string(kEvents);
  const std::string text = R"({"traceEvents": [)" + events + "]}";
  IngestOptions parallel = with_reads(analysis_reads());
  parallel.chunk_bytes = 4096;
  parallel.threads = 2;
  auto r = parse_trace(text, "reads_chunks.json", parallel);
  IngestOptions one_thread = parallel;
  one_thread.threads = 1;
  auto one = parse_trace(text, "reads_chunks.json", one_thread);
  ASSERT_TRUE(r.ok() && one.ok());
  ASSERT_EQ(r->slices.size(), 6u * kCopies);
  ASSERT_EQ(one->slices.size(), r->slices.size());
  EXPECT_EQ(one->op_args.size(), r->op_args.size());
  EXPECT_EQ(one->strings.size(), r->strings.size());  // the pool is numbered alike
  for (size_t i = 0; i < r->slices.size(); ++i) {
    ASSERT_EQ(one->slices[i].name, r->slices[i].name) << "slice " << i;
    ASSERT_EQ(one->slices[i].args, r->slices[i].args) << "slice " << i;
  }
  EXPECT_TRUE(r->python_args.empty());
  EXPECT_TRUE(r->flows.empty());
  // Per copy: linear (sequence number only), matmul, softmax, SDPA.
  EXPECT_EQ(r->op_args.size(), 4u * kCopies);
  for (const Slice& s : r->slices) {
    if (r->name_of(s) == "aten::view") {
      EXPECT_EQ(r->op_args_of(s), nullptr);
    }
  }
}

TEST(TraceReads, TheDeclarationNamesTheOpsWhoseInputsAreRead) {
  EXPECT_TRUE(op_inputs_read("aten::_scaled_dot_product_flash_attention"));
  EXPECT_TRUE(op_inputs_read("vllm::unified_attention_with_output"));  // a catalog prefix
  EXPECT_TRUE(op_inputs_read("aten::bmm"));
  EXPECT_TRUE(op_inputs_read("aten::_softmax"));
  EXPECT_TRUE(op_inputs_read("aten::masked_fill"));
  EXPECT_TRUE(op_inputs_read("aten::native_dropout"));
  EXPECT_TRUE(op_inputs_read("aten::le"));  // a mask-building compare
  EXPECT_FALSE(op_inputs_read("aten::view"));
  EXPECT_FALSE(op_inputs_read("aten::_to_copy"));
  EXPECT_FALSE(op_inputs_read("aten::linear"));
  EXPECT_FALSE(op_inputs_read("aten::empty_strided"));
}

}  // namespace
}  // namespace attnprof
