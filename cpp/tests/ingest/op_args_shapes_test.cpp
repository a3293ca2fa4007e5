// The op_args paths the ingest hot loop takes: shapes gathered in scratch buffers and copied
// into each input once, keys read without unescaping unless they hold an escape, and the
// CPU-op tree built from events that arrive out of order.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attnprof/ingest.h"
#include "attnprof/trace_index.h"

namespace attnprof {
namespace {

using Dims = std::vector<int64_t>;

TEST(IngestOpArgs, ShapesTypesAndValuesLandOnTheirInputsPastATensorList) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {
      "Input type": ["TensorList", "Scalar", "c10::BFloat16", ""],
      "Input Dims": [[[2, 3], [4, 5, 6], []], [], [7, 8, 9, 10], []],
      "Input Strides": [[[3, 1], [30, 6, 1], []], [], [720, 90, 10, 1], []],
      "Concrete Inputs": ["", "1", "", ""]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {
      "Input Dims": [[11], [12, 13]], "Input type": ["float", "float", "Scalar"]}}]})",
                       "shapes.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 2u);
  const OpArgs* cat = r->op_args_of(r->slices[0]);
  ASSERT_NE(cat, nullptr);
  ASSERT_EQ(cat->inputs.size(), 4u);
  EXPECT_TRUE(cat->inputs[0].dims.empty());  // a TensorList's member shapes are not kept
  EXPECT_TRUE(cat->inputs[1].dims.empty());
  EXPECT_EQ(cat->inputs[2].dims, (Dims{7, 8, 9, 10}));  // not its strides
  EXPECT_EQ(r->strings.get(cat->inputs[2].type), "c10::BFloat16");
  EXPECT_EQ(r->strings.get(cat->inputs[1].concrete), "1");
  EXPECT_TRUE(cat->inputs[3].dims.empty());

  // A later list longer than the first one adds inputs; earlier fields stay where they were.
  const OpArgs* add = r->op_args_of(r->slices[1]);
  ASSERT_NE(add, nullptr);
  ASSERT_EQ(add->inputs.size(), 3u);
  EXPECT_EQ(add->inputs[0].dims, (Dims{11}));
  EXPECT_EQ(add->inputs[1].dims, (Dims{12, 13}));
  EXPECT_TRUE(add->inputs[2].dims.empty());
  EXPECT_EQ(r->strings.get(add->inputs[2].type), "Scalar");
  EXPECT_TRUE(r->issues.empty());
}

TEST(IngestOpArgs, ShapesLongerThanTheInlineStorageKeepEveryDim) {
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {
      "Input Dims": [[2, 3, 4, 5, 6, 7], [8]], "Input Strides": [[2520, 840, 210, 42, 7, 1], [1]]}}]})",
                       "rank6.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const OpArgs* a = r->op_args_of(r->slices[0]);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->inputs[0].dims, (Dims{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a->inputs[1].dims, (Dims{8}));
}

TEST(TensorDimsValue, CopiesMovesAndGrowsLikeAVector) {
  TensorDims small{1, 2, 3};
  TensorDims big{1, 2, 3, 4, 5};
  TensorDims small_copy = small;
  TensorDims big_copy = big;
  EXPECT_EQ(small_copy, small);
  EXPECT_EQ(big_copy, big);
  TensorDims moved = std::move(big_copy);
  EXPECT_EQ(moved, (Dims{1, 2, 3, 4, 5}));
  EXPECT_TRUE(big_copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  small_copy = moved;             // inline <- heap
  EXPECT_EQ(small_copy, (Dims{1, 2, 3, 4, 5}));
  moved = small;                  // heap storage reused for fewer values
  EXPECT_EQ(moved, (Dims{1, 2, 3}));
  small.push_back(4);
  small.push_back(5);  // crosses from inline to heap
  EXPECT_EQ(small, big);
  EXPECT_EQ(small.back(), 5);
  const std::vector<int64_t> as_vector = small;
  EXPECT_EQ(as_vector, (Dims{1, 2, 3, 4, 5}));
  EXPECT_FALSE(small == (Dims{1, 2, 3, 4}));
}

TEST(IngestOpArgs, EscapedKeysMatchTheKeysTheySpell) {
  // "p\u0068" is "ph", "\u0061rgs" is "args", "Input \u0044ims" is "Input Dims".
  auto r = parse_trace(R"({"traceEvents": [
    {"p\u0068": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
     "\u0061rgs": {"Input \u0044ims": [[4, 8]], "Sequence number": 3}}]})",
                       "escaped.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->slices.size(), 1u);
  const OpArgs* a = r->op_args_of(r->slices[0]);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->inputs.size(), 1u);
  EXPECT_EQ(a->inputs[0].dims, (Dims{4, 8}));
  EXPECT_EQ(a->sequence_number, 3);
}

TEST(TraceIndexCpuTrees, OutOfOrderEventsNestTheSameAsSortedOnes) {
  // Children written before their parent, two threads interleaved, a python frame and an
  // op starting together (the frame encloses the op).
  auto r = parse_trace(R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": 3, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "other_thread", "pid": 1, "tid": 2, "ts": 1, "dur": 9},
    {"ph": "X", "cat": "cpu_op", "name": "parent", "pid": 1, "tid": 1, "ts": 2, "dur": 8},
    {"ph": "X", "cat": "python_function", "name": "frame", "pid": 1, "tid": 1, "ts": 2, "dur": 8},
    {"ph": "X", "cat": "cpu_op", "name": "second_root", "pid": 1, "tid": 1, "ts": 20, "dur": 1}]})",
                       "order.json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const TraceIndex index = build_trace_index(*r);
  auto named = [&](std::string_view name) {
    for (uint32_t i = 0; i < r->slices.size(); ++i)
      if (r->name_of(r->slices[i]) == name) return i;
    return kNoSlice;
  };
  EXPECT_EQ(index.parent[named("child")], named("parent"));
  EXPECT_EQ(index.parent[named("parent")], named("frame"));
  EXPECT_EQ(index.parent[named("frame")], kNoSlice);
  EXPECT_EQ(index.parent[named("other_thread")], kNoSlice);
  EXPECT_EQ(index.parent[named("second_root")], kNoSlice);
  EXPECT_EQ(index.roots.size(), 3u);
  EXPECT_TRUE(index.has_python_tree);
}

TEST(TraceIndexCpuTrees, EachSubtreeIsTheRunAfterItsSliceInATraceWrittenInSeveralRuns) {
  auto r = load_trace(std::string(ATTNPROF_FIXTURES_DIR) +
                      "/h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Trace& t = *r;
  const TraceIndex index = build_trace_index(t);
  // Kineto writes the python frames apart from the ops they call: some thread's nesting order
  // is not its file order, so the sorted runs were merged.
  bool merged = false;
  for (const TraceIndex::Range& run : index.thread_order)
    merged = merged || !std::is_sorted(index.cpu_order.begin() + run.begin, index.cpu_order.begin() + run.end);
  EXPECT_TRUE(merged);
  // What the parent links say is below each slice, against what the walks visit.
  std::vector<std::vector<uint32_t>> below(t.slices.size()), children(t.slices.size());
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (index.parent[i] != kNoSlice) children[index.parent[i]].push_back(i);
    for (uint32_t p = index.parent[i]; p != kNoSlice; p = index.parent[p]) below[p].push_back(i);
  }
  size_t pairs = 0;
  for (uint32_t s = 0; s < t.slices.size(); ++s) {
    std::vector<uint32_t> visited, direct;
    for_each_descendant(t, index, s, [&](uint32_t d) { visited.push_back(d); });
    for_each_child(t, index, s, [&](uint32_t c) { direct.push_back(c); });
    EXPECT_TRUE(std::is_sorted(visited.begin(), visited.end(), [&](uint32_t a, uint32_t b) {
      return t.slices[a].ts_ns < t.slices[b].ts_ns;
    })) << "slice " << s;
    std::sort(visited.begin(), visited.end());
    std::sort(direct.begin(), direct.end());
    ASSERT_EQ(visited, below[s]) << "slice " << s;
    ASSERT_EQ(direct, children[s]) << "slice " << s;
    pairs += visited.size();
  }
  EXPECT_GT(pairs, t.slices.size());  // frames nest ops nest ops: most slices are below several
}

}  // namespace
}  // namespace attnprof
