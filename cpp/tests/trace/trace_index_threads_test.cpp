// build_trace_index builds the CPU trees and the GPU launch links side by side when given a
// second thread: the index must be the same, field by field, on every real fixture (the
// train traces have a backward thread, the stack traces Python trees, the MI300 trace HIP
// launches). Also in the thread-sanitizer run (Makefile, tsan-ci).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attnprof/ingest.h"
#include "attnprof/trace_index.h"
#include "fixture_traces.h"

namespace attnprof {
namespace {


using testing::fixture_traces;

bool same_links(const std::vector<TraceIndex::GpuLink>& a, const std::vector<TraceIndex::GpuLink>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.slice == y.slice && x.launch == y.launch && x.op == y.op;
  });
}

bool same_op_ranges(const std::vector<TraceIndex::OpGpuRange>& a, const std::vector<TraceIndex::OpGpuRange>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.op == y.op && x.begin == y.begin; });
}

bool same_thread_order(const std::vector<TraceIndex::Range>& a, const std::vector<TraceIndex::Range>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.begin == y.begin && x.end == y.end; });
}

bool same_steps(const std::vector<StepRange>& a, const std::vector<StepRange>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.number == y.number && x.ts_ns == y.ts_ns && x.end_ns == y.end_ns;
  });
}

TEST(TraceIndexThreads, EveryFixtureGetsTheSameIndexOnTwoThreadsAsOnOne) {
  const std::vector<std::string> paths = fixture_traces();
  ASSERT_GE(paths.size(), 40u) << "fixtures not found under " << ATTNPROF_FIXTURES_DIR;
  size_t with_gpu = 0, with_steps = 0;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const Result<Trace> trace = load_trace(path);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    const TraceIndex one = build_trace_index(*trace, 1);
    const TraceIndex two = build_trace_index(*trace, 2);
    EXPECT_EQ(one.parent, two.parent);
    EXPECT_EQ(one.cpu_order, two.cpu_order);
    EXPECT_TRUE(same_thread_order(one.thread_order, two.thread_order));
    EXPECT_EQ(one.roots, two.roots);
    EXPECT_EQ(one.gpu_slices, two.gpu_slices);
    EXPECT_EQ(one.orphan_gpu_slices, two.orphan_gpu_slices);
    EXPECT_TRUE(same_steps(one.steps, two.steps));
    EXPECT_EQ(one.has_python_tree, two.has_python_tree);
    EXPECT_TRUE(same_links(one.gpu_links, two.gpu_links));
    EXPECT_TRUE(same_op_ranges(one.op_ranges, two.op_ranges));
    EXPECT_EQ(one.gpu_items, two.gpu_items);
    with_gpu += !one.gpu_items.empty();
    with_steps += !one.steps.empty();
  }
  // The comparison covered linked GPU work and profiler steps, not only empty tables.
  EXPECT_GT(with_gpu, paths.size() / 2);
  EXPECT_GT(with_steps, 0u);
}

// The GPU slices come out in start order, and every linked one sits under its op's range.
TEST(TraceIndexThreads, GpuSlicesAreInStartOrderAndEachLinkedOneIsInItsOpsRange) {
  const Result<Trace> trace =
      load_trace(std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  const TraceIndex index = build_trace_index(*trace, 2);
  ASSERT_FALSE(index.gpu_slices.empty());
  EXPECT_TRUE(std::is_sorted(index.gpu_slices.begin(), index.gpu_slices.end(), [&](uint32_t a, uint32_t b) {
    return trace->slices[a].ts_ns < trace->slices[b].ts_ns;
  }));
  size_t linked = 0;
  for (const uint32_t g : index.gpu_slices) {
    const uint32_t op = index.op_of(g);
    if (op == kNoSlice) continue;
    ++linked;
    const auto range = index.gpu_of(op);
    EXPECT_NE(std::find(range.begin(), range.end(), g), range.end());
  }
  EXPECT_GT(linked, index.gpu_slices.size() / 2);
}

// GPU activity written out of time order (not Kineto's own order, but any writer's) still
// comes out in start order; equal starts keep their file order.
TEST(TraceIndexThreads, GpuSlicesWrittenOutOfOrderComeOutInStartOrder) {
  const char* json = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 30, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "b1", "pid": 0, "tid": 7, "ts": 20, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "b2", "pid": 0, "tid": 8, "ts": 20, "dur": 1}]})";
  const Result<Trace> trace = parse_trace(json, "out of order");
  ASSERT_TRUE(trace.ok());
  for (const size_t threads : {1, 2}) {
    const TraceIndex index = build_trace_index(*trace, threads);
    std::vector<std::string> names;
    for (const uint32_t g : index.gpu_slices) names.emplace_back(trace->name_of(trace->slices[g]));
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b1", "b2", "c"}));
  }
}

}  // namespace
}  // namespace attnprof
