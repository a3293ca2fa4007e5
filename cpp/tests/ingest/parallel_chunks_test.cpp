// traceEvents is parsed in chunks by several threads and the chunks are merged in file order
// (cpp/src/ingest/chunks.h). The Trace must not depend on the chunk size or the number of
// threads: every table, string, string pid, metadata entry, issue count and issue sample
// equals that of one chunk parsed by one thread.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "attnprof/ingest.h"

namespace attnprof {
namespace {

const std::string kFixtures = ATTNPROF_FIXTURES_DIR;

IngestOptions chunked(size_t chunk_bytes, size_t threads) {
  IngestOptions o;
  o.chunk_bytes = chunk_bytes;
  o.threads = threads;
  return o;
}

const IngestOptions kOneChunkOneThread = chunked(size_t{1} << 30, 1);

// Field-by-field equality with string ids compared as text (ids may be numbered differently).
void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.event_count, b.event_count);
  ASSERT_EQ(a.slices.size(), b.slices.size());
  for (size_t i = 0; i < a.slices.size(); ++i) {
    const Slice &x = a.slices[i], &y = b.slices[i];
    ASSERT_EQ(a.name_of(x), b.name_of(y)) << "slice " << i;
    ASSERT_EQ(x.cat, y.cat) << "slice " << i;
    ASSERT_EQ(a.pid_of(x), b.pid_of(y)) << "slice " << i;
    ASSERT_EQ(a.tid_of(x), b.tid_of(y)) << "slice " << i;
    ASSERT_EQ(x.ts_ns, y.ts_ns) << "slice " << i;
    ASSERT_EQ(x.dur_ns, y.dur_ns) << "slice " << i;
    ASSERT_EQ(a.external_id_of(x), b.external_id_of(y)) << "slice " << i;
    ASSERT_EQ(x.correlation(), y.correlation()) << "slice " << i;
    ASSERT_EQ(x.args, y.args) << "slice " << i;
  }
  ASSERT_EQ(a.op_args.size(), b.op_args.size());
  for (size_t i = 0; i < a.op_args.size(); ++i) {
    const OpArgs &x = a.op_args[i], &y = b.op_args[i];
    ASSERT_EQ(x.sequence_number, y.sequence_number);
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << "op_args " << i;
    for (size_t k = 0; k < x.inputs.size(); ++k) {
      ASSERT_EQ(x.inputs[k].dims, y.inputs[k].dims);
      ASSERT_EQ(a.strings.get(x.inputs[k].type), b.strings.get(y.inputs[k].type));
      ASSERT_EQ(a.strings.get(x.inputs[k].concrete), b.strings.get(y.inputs[k].concrete));
    }
  }
  ASSERT_EQ(a.python_args.size(), b.python_args.size());
  for (size_t i = 0; i < a.python_args.size(); ++i) {
    ASSERT_EQ(a.python_args[i].python_id, b.python_args[i].python_id);
    ASSERT_EQ(a.python_args[i].parent_id, b.python_args[i].parent_id);
    ASSERT_EQ(a.python_args[i].module_id, b.python_args[i].module_id);
  }
  ASSERT_EQ(a.gpu_args.size(), b.gpu_args.size());
  for (size_t i = 0; i < a.gpu_args.size(); ++i) {
    ASSERT_EQ(a.gpu_args[i].stream, b.gpu_args[i].stream);
    ASSERT_EQ(a.gpu_args[i].device, b.gpu_args[i].device);
  }
  ASSERT_EQ(a.memory.size(), b.memory.size());
  for (size_t i = 0; i < a.memory.size(); ++i) {
    ASSERT_EQ(a.memory[i].ts_ns, b.memory[i].ts_ns);
    ASSERT_EQ(a.pid_of(a.memory[i]), b.pid_of(b.memory[i]));
    ASSERT_EQ(a.tid_of(a.memory[i]), b.tid_of(b.memory[i]));
    ASSERT_EQ(a.memory[i].bytes, b.memory[i].bytes);
    ASSERT_EQ(a.memory[i].total_allocated, b.memory[i].total_allocated);
  }
  ASSERT_EQ(a.flows.size(), b.flows.size());
  for (size_t i = 0; i < a.flows.size(); ++i) {
    ASSERT_EQ(a.flows[i].id, b.flows[i].id);
    ASSERT_EQ(a.flows[i].phase, b.flows[i].phase);
    ASSERT_EQ(a.strings.get(a.flows[i].cat), b.strings.get(b.flows[i].cat));
    ASSERT_EQ(a.flows[i].pid, b.flows[i].pid);
    ASSERT_EQ(a.flows[i].ts_ns, b.flows[i].ts_ns);
  }
  EXPECT_EQ(a.meta.string_ids, b.meta.string_ids);
  EXPECT_EQ(a.meta.process_names, b.meta.process_names);
  EXPECT_EQ(a.meta.process_labels, b.meta.process_labels);
  EXPECT_EQ(a.meta.thread_names, b.meta.thread_names);
  EXPECT_EQ(a.meta.devices.size(), b.meta.devices.size());
  EXPECT_EQ(a.meta.versions, b.meta.versions);
  ASSERT_EQ(a.issues.size(), b.issues.size());
  for (const IngestIssue& x : a.issues) {
    const auto y = std::find_if(b.issues.begin(), b.issues.end(), [&](const IngestIssue& i) { return i.kind == x.kind; });
    ASSERT_NE(y, b.issues.end()) << x.kind;
    EXPECT_EQ(x.count, y->count) << x.kind;
    EXPECT_EQ(x.samples, y->samples) << x.kind;
  }
}

Trace parse_ok(const std::string& text, const IngestOptions& options) {
  auto r = parse_trace(text, "chunks.json", options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : Trace{};
}

TEST(ParallelChunks, FixturesGiveTheSameTraceForAnyChunkSizeAndThreadCount) {
  for (const char* rel : {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz",
                          "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b1_s2048_train.pt.trace.json.gz",
                          "hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                          "tracelens/b200_eager_trace.json.gz"}) {
    SCOPED_TRACE(rel);
    auto one = load_trace(kFixtures + "/" + rel, kOneChunkOneThread);
    ASSERT_TRUE(one.ok()) << one.error().message;
    for (const IngestOptions& o : {chunked(4096, 1), chunked(4096, 2), chunked(65536, 4), chunked(size_t{1} << 30, 4)}) {
      SCOPED_TRACE("chunk " + std::to_string(o.chunk_bytes) + " threads " + std::to_string(o.threads));
      auto many = load_trace(kFixtures + "/" + rel, o);
      ASSERT_TRUE(many.ok()) << many.error().message;
      expect_same_trace(*one, *many);
    }
  }
}

// Events with everything a chunk maps on merge: string pids/tids first seen in different
// chunks, thread/process names redefined later, flows, op rows with interned types, and one
// problem per event type so issue counts and the first three samples cross chunk borders.
std::string trace_exercising_the_merge(int copies) {
  std::string t = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int i = 0; i < copies; ++i) {
    const std::string n = std::to_string(i);
    const std::string pad(static_cast<size_t>(i % 7) * 13, ' ');
    if (i) t += ",";
    t += R"({"ph": "M", "name": "thread_name", "pid": "Spans)" + std::to_string(i % 5) + R"(", "tid": 3, "args": {"name": "t)" + n + R"("}},)";
    t += R"({"ph": "X", "cat": "cpu_op", "name": "aten::op)" + std::to_string(i % 11) + R"(", "pid": "Traces)" + std::to_string(i % 3) +
         R"(", "tid": 1, "ts": )" + n + R"(.5, "dur": 2, "args": {"External id": )" + n +
         R"(, "Input Dims": [[2, )" + n + R"(], [], [[1, 2], [3]]], "Input type": ["c10::BFloat16", "Scalar", "TensorList"], "Concrete Inputs": ["", ")" +
         n + R"(", ""], "Sequence number": )" + n + R"(}},)" + pad;
    t += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": )" + n +
         R"(, "dur": 1, "args": {"correlation": )" + std::to_string(i % 40) + R"(}},)";
    t += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 4) + R"(", "pid": 0, "tid": 7, "ts": )" + n +
         R"(, "dur": -1, "args": {"correlation": )" + n + R"(, "stream": 7, "grid": [1, 2, 3], "block": [4, 1, 1]}},)";
    t += R"({"ph": "s", "cat": "ac2g", "id": )" + n + R"(, "pid": 1, "tid": 1, "ts": )" + n + R"(},)";
    t += R"({"ph": "f", "cat": "ac2g", "id": )" + n + R"(, "pid": 0, "tid": 7, "ts": )" + n + R"(, "bp": "e"},)";
    t += R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" + n + R"(, "args": {"Bytes": 512, "Total Allocated": )" + n + R"(}},)";
    t += R"({"ph": "B", "name": "ignored)" + n + R"("},)";
    t += R"({"ph": "X", "cat": "python_function", "name": "f)" + n + R"(", "pid": 1, "tid": 1, "dur": 1})";
  }
  t += R"(], "traceName": "x"})";
  return t;
}

TEST(ParallelChunks, MergedChunksMapStringIdsMetadataAndIssuesLikeOneChunk) {
  const std::string text = trace_exercising_the_merge(400);
  const Trace one = parse_ok(text, kOneChunkOneThread);
  // The trace really exercises the merge: cross-chunk duplicates, string pids, issues.
  ASSERT_EQ(one.event_count, 400 * 9);
  EXPECT_EQ(one.meta.string_ids.size(), 8u);  // Spans0..4 and Traces0..2
  const IngestIssue* dup = nullptr;
  for (const IngestIssue& i : one.issues)
    if (i.kind == "duplicate_correlation") dup = &i;
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->count, 360);  // correlations 0..39 repeat from the 41st copy on
  EXPECT_EQ(dup->samples.front(), "event #362: cudaLaunchKernel correlation 0");
  for (size_t chunk : {size_t{256}, size_t{4096}, size_t{50000}})
    for (size_t threads : {size_t{1}, size_t{2}, size_t{3}}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " threads " + std::to_string(threads));
      expect_same_trace(one, parse_ok(text, chunked(chunk, threads)));
    }
}

TEST(ParallelChunks, NonUtf8TextInALaterChunkIsRepairedAndReportedOnce) {
  std::string text = trace_exercising_the_merge(200);
  const size_t at = text.find("aten::op5", text.size() / 2);
  ASSERT_NE(at, std::string::npos);
  text[at + 4] = '\xff';
  const Trace one = parse_ok(text, kOneChunkOneThread);
  const Trace many = parse_ok(text, chunked(4096, 2));
  expect_same_trace(one, many);
  const auto it = std::find_if(many.issues.begin(), many.issues.end(), [](const IngestIssue& i) { return i.kind == "non_utf8_text"; });
  ASSERT_NE(it, many.issues.end());
  EXPECT_EQ(it->count, 1);
}

// Breaks `text` at the first `key` in its last third ("tid"} 7 : a syntax error deep in the
// file) and checks that 4 KiB chunks on 1, 2 and 4 threads give one chunk's error.
void expect_the_error_of_one_chunk(std::string text, std::string_view key) {
  const size_t at = text.find(key, text.size() * 2 / 3);
  ASSERT_NE(at, std::string::npos);
  text[at + 5] = '}';
  auto one = parse_trace(text, "bad.json", kOneChunkOneThread);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error().code, ErrorCode::kMalformedJson);
  for (size_t threads : {size_t{1}, size_t{2}, size_t{4}}) {
    auto many = parse_trace(text, "bad.json", chunked(4096, threads));
    ASSERT_FALSE(many.ok());
    EXPECT_EQ(many.error().code, ErrorCode::kMalformedJson);
    EXPECT_EQ(many.error().message, one.error().message);
  }
}

// A structural error in chunk k stops the ingest with the same message (same byte offset) as
// when the whole array is one chunk, whichever chunks were parsed at the same time.
TEST(ParallelChunks, MalformedEventInALaterChunkGivesTheSameErrorAsOneChunk) {
  expect_the_error_of_one_chunk(trace_exercising_the_merge(300), "\"tid\": 7");
}

// One event per line, as Kineto writes them, so chunks are cut at line breaks; every fourth
// event holds an array of objects split over lines, where such a cut would be wrong (inside
// the event): the chunk's parse fails and the input is read again with the scanner.
std::string trace_one_event_per_line(int events, const std::string& tail = "\"traceName\": \"lines\"") {
  std::string t = "{\"schemaVersion\": 1,\n\"traceEvents\": [\n";
  for (int i = 0; i < events; ++i) {
    const std::string n = std::to_string(i);
    if (i) t += ",\n";
    t += R"({"ph": "X", "cat": "cpu_op", "name": "aten::op)" + std::to_string(i % 13) + R"(", "pid": 1, "tid": )" +
         std::to_string(i % 3) + R"(, "ts": )" + n + R"(.25, "dur": 1.5, "args": {"External id": )" + n;
    if (i % 4 == 3) t += R"(, "objects": [{"k": 1},)" "\n" R"({"k": 2}])";
    t += R"(, "Input type": ["float", "t)" + std::to_string(i % 17) + R"("]}})";
  }
  t += "\n],\n" + tail + "\n}";
  return t;
}

TEST(ParallelChunks, ChunksCutAtLineBreaksGiveTheSameTraceWhereAGuessIsWrong) {
  const std::string text = trace_one_event_per_line(3000);
  const Trace one = parse_ok(text, kOneChunkOneThread);
  ASSERT_EQ(one.event_count, 3000);
  ASSERT_EQ(one.slices.size(), 3000u);
  EXPECT_EQ(one.meta.trace_name, "lines");
  for (size_t chunk : {size_t{256}, size_t{4096}, size_t{50000}})
    for (size_t threads : {size_t{1}, size_t{2}, size_t{3}}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " threads " + std::to_string(threads));
      expect_same_trace(one, parse_ok(text, chunked(chunk, threads)));
    }
}

// Objects one per line after the array (here deviceProperties) look like events to the line
// cut: a chunk cut among them holds the array's end and trailing content, so it fails too.
TEST(ParallelChunks, LinesOfObjectsAfterTheArrayGiveTheSameTrace) {
  const std::string text = trace_one_event_per_line(
      1500, "\"deviceProperties\": [\n{\"id\": 0, \"name\": \"A\"},\n{\"id\": 1, \"name\": \"B\"},\n{\"id\": 2, \"name\": \"C\"}\n]");
  const Trace one = parse_ok(text, kOneChunkOneThread);
  ASSERT_EQ(one.event_count, 1500);
  ASSERT_EQ(one.meta.devices.size(), 3u);
  for (size_t chunk : {size_t{64}, size_t{256}, size_t{4096}})
    for (size_t threads : {size_t{1}, size_t{2}}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " threads " + std::to_string(threads));
      const Trace many = parse_ok(text, chunked(chunk, threads));
      expect_same_trace(one, many);
      EXPECT_EQ(many.meta.devices.size(), 3u);
    }
}

// A pipe cannot be read a second time, so its chunks are cut by the scanner only: a trace
// whose line breaks make wrong cuts (256-byte chunks: some cut inside an event) still reads
// whole from a pipe. Were it read again, the second open would wait for a writer: after 10 s
// one writes a broken trace, so the test fails instead of hanging.
TEST(ParallelChunks, TraceFromAPipeWithMisleadingLineBreaksReadsWhole) {
  const std::string text = trace_one_event_per_line(3000);
  const Trace one = parse_ok(text, kOneChunkOneThread);
  const std::filesystem::path fifo = std::filesystem::temp_directory_path() /
                                     ("attnprof_pipe_test_" + std::to_string(::getpid()) + ".json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::mutex mutex;
  std::condition_variable read_done;
  bool done = false;
  std::thread writer([&] {
    std::ofstream(fifo, std::ios::binary) << text;
    std::unique_lock lock(mutex);
    if (!read_done.wait_for(lock, std::chrono::seconds(10), [&] { return done; }))
      std::ofstream(fifo, std::ios::binary) << "[";
  });
  auto piped = load_trace(fifo.string(), chunked(256, 2));
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  read_done.notify_one();
  writer.join();
  std::filesystem::remove(fifo);
  ASSERT_TRUE(piped.ok()) << piped.error().message;
  expect_same_trace(one, *piped);
}

TEST(ParallelChunks, MalformedEventAmongLinesGivesTheSameErrorAsOneChunk) {
  expect_the_error_of_one_chunk(trace_one_event_per_line(2000), "\"tid\": 2");
}

TEST(ParallelChunks, BareArrayWhoseFirstElementIsNotAnEventIsNotATraceWithAnyThreads) {
  std::string text = "[1";
  for (int i = 0; i < 2000; ++i) text += R"(, {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1})";
  text += "]";
  for (size_t threads : {size_t{1}, size_t{4}}) {
    auto r = parse_trace(text, "array.json", chunked(4096, threads));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kNotATrace);
  }
}

}  // namespace
}  // namespace attnprof
