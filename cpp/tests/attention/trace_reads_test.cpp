// What the analyses read (analysis_reads, trace_reads.cpp) is all ingest keeps of a trace:
// the Report of every fixture must not change when the rest is dropped, and what is dropped
// must really be gone (it is the memory the declaration saves).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/ingest.h"
#include "attnprof/report_json.h"
#include "attnprof/trace_index.h"
#include "attnprof/vocabulary.h"
#include "fixture_traces.h"

namespace attnprof {
namespace {


using testing::fixture_traces;

IngestOptions with_reads(TraceReads reads) {
  IngestOptions options;
  options.reads = reads;
  return options;
}

// A trace of `copies` copies of `events`, copy k with every "ts" later by k x `shift_us`, and
// the analyses' reads over 4 KiB chunks on `threads`.
std::string trace_of_copies(const char* events, int copies, int64_t shift_us = 0) {
  static const std::regex ts(R"("ts": ([0-9]+))");
  std::string text = R"({"traceEvents": [)";
  for (int i = 0; i < copies; ++i) {
    std::string copy;
    const std::string one(events);
    auto at = one.cbegin();
    for (std::sregex_iterator m(one.begin(), one.end(), ts), end; m != end; ++m) {
      copy.append(at, (*m)[0].first);
      copy += "\"ts\": " + std::to_string(std::stoll((*m)[1].str()) + i * shift_us);
      at = (*m)[0].second;
    }
    copy.append(at, one.cend());
    text += (i ? "," : "") + copy;
  }
  return text + "]}";
}

IngestOptions chunked_reads(size_t threads) {
  IngestOptions options = with_reads(analysis_reads());
  options.chunk_bytes = 4096;
  options.threads = threads;
  return options;
}

// The same copies parsed with the analyses' reads in 4 KiB chunks on two threads and on one.
struct ChunkedParses {
  Result<Trace> two_threads;
  Result<Trace> one_thread;
};

ChunkedParses parse_chunked(const char* events, int copies, const std::string& name, int64_t shift_us = 0) {
  const std::string text = trace_of_copies(events, copies, shift_us);
  return {parse_trace(text, name, chunked_reads(2)), parse_trace(text, name, chunked_reads(1))};
}

// One copy of `events` parsed keeping everything and with the analyses' reads.
struct BothReads {
  Result<Trace> everything;
  Result<Trace> read;
};

BothReads parse_both(const char* events, const std::string& name) {
  const std::string text = trace_of_copies(events, 1);
  return {parse_trace(text, name, with_reads({})), parse_trace(text, name, with_reads(analysis_reads()))};
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
  constexpr int kCopies = 300;
  auto [r, one] = parse_chunked(kEvents, kCopies, "reads_chunks.json");
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
  // Their inputs are stored once, whichever chunk and thread read them.
  EXPECT_EQ(r->input_lists.size(), 3u);
  EXPECT_EQ(one->input_lists.size(), 3u);
  for (size_t i = 0; i < r->op_args.size(); ++i)
    ASSERT_EQ(r->op_args[i].inputs.size(), one->op_args[i].inputs.size()) << "op_args " << i;
  for (const Slice& s : r->slices) {
    if (r->name_of(s) == "aten::view") {
      EXPECT_EQ(r->op_args_of(s), nullptr);
    }
  }
}

// Python frames of one module call: a source file's frames nested in each other, a builtin,
// a frame of another file, and the SDPA op at 30-50 us.
constexpr const char* kFrames = R"(
  {"ph": "X", "cat": "python_function", "name": "model.py(10): run", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Attn_0", "pid": 1, "tid": 1, "ts": 1, "dur": 90},
  {"ph": "X", "cat": "python_function", "name": "model.py(20): forward", "pid": 1, "tid": 1, "ts": 2, "dur": 80},
  {"ph": "X", "cat": "python_function", "name": "<built-in method softmax>", "pid": 1, "tid": 1, "ts": 3, "dur": 5},
  {"ph": "X", "cat": "python_function", "name": "lib.py(5): attend", "pid": 1, "tid": 1, "ts": 25, "dur": 30},
  {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "pid": 1, "tid": 1, "ts": 30, "dur": 20,
   "args": {"Input Dims": [[1, 4, 4, 16], [1, 4, 4, 16], [1, 4, 4, 16]], "Input type": ["float", "float", "float"]}})";

// The call of kFrames starts at 30 us, inside model.py(10) and lib.py(5), in that order.
void expect_source_files_of_the_call(const Trace& trace) {
  Report report;
  report.calls.emplace_back().cpu_ts_ns = 30'000;
  EXPECT_EQ(attention_source_files(trace, report), (std::vector<std::string>{"model.py", "lib.py"}));
}

TEST(TraceReads, OnlyModuleFramesStaySlicesTheOtherFramesKeepTheirSourceFiles) {
  auto [everything, read] = parse_both(kFrames, "frames.json");
  ASSERT_TRUE(everything.ok() && read.ok());
  EXPECT_EQ(everything->slices.size(), 6u);
  EXPECT_TRUE(everything->source_frames.empty());
  ASSERT_EQ(read->slices.size(), 2u);  // the module call and the op
  EXPECT_EQ(read->name_of(read->slices[0]), "nn.Module: Attn_0");
  // model.py(20) lies inside model.py(10), which encloses whatever it does; the builtin has no file.
  ASSERT_EQ(read->source_frames.size(), 2u);
  EXPECT_EQ(read->strings.get(read->source_frames[0].name), "model.py(10): run");
  EXPECT_EQ(read->strings.get(read->source_frames[1].name), "lib.py(5): attend");
  EXPECT_EQ(read->python_frames, 5);
  EXPECT_EQ(everything->python_frames, 5);

  const TraceIndex index = build_trace_index(*read);
  EXPECT_TRUE(index.has_python_tree);
  EXPECT_EQ(module_path(*read, index, 1), "Attn_0");
  expect_source_files_of_the_call(*read);
  expect_source_files_of_the_call(*everything);
}

// Chunks keep a frame inside an earlier one of its file only when that one was in another
// chunk: the source files are the same, however the trace was cut.
TEST(TraceReads, ChunksParsedInParallelGiveTheSameSourceFiles) {
  constexpr int kCopies = 200;
  auto [r, one] = parse_chunked(kFrames, kCopies, "frames_chunks.json");
  ASSERT_TRUE(r.ok() && one.ok());
  EXPECT_EQ(r->slices.size(), 2u * kCopies);
  EXPECT_EQ(r->python_frames, 5 * kCopies);
  EXPECT_EQ(one->python_frames, 5 * kCopies);
  EXPECT_GE(r->source_frames.size(), 2u);
  EXPECT_LE(r->source_frames.size(), 3u * kCopies);
  expect_source_files_of_the_call(*r);
  expect_source_files_of_the_call(*one);
}

// Metadata-only ops (views, result_type) nested in another op hold nothing an analysis reads:
// they are left out, except inside an attention op (its subtree is read whole), with a
// sequence number (backward pairing reads it), or where the nesting is not certain. An
// outermost one stays: the eager matcher walks those.
constexpr const char* kNested = R"(
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "aten::t", "pid": 1, "tid": 1, "ts": 11, "dur": 2},
  {"ph": "X", "cat": "cpu_op", "name": "aten::transpose", "pid": 1, "tid": 1, "ts": 11, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 14, "dur": 1, "args": {"Sequence number": 5}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 16, "dur": 3},
  {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 21, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "pid": 1, "tid": 1, "ts": 30, "dur": 10},
  {"ph": "X", "cat": "cpu_op", "name": "aten::transpose", "pid": 1, "tid": 1, "ts": 31, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 50, "dur": 8},
  {"ph": "X", "cat": "cpu_op", "name": "aten::expand", "pid": 1, "tid": 1, "ts": 55, "dur": 5},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 40, "dur": 30},
  {"ph": "X", "cat": "cpu_op", "name": "aten::as_strided", "pid": 1, "tid": 1, "ts": 41, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "aten::as_strided", "pid": 1, "tid": 1, "ts": 65, "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "aten::as_strided", "pid": 1, "tid": 2, "ts": 41, "dur": 0})";

std::vector<std::string> op_names(const Trace& t) {
  std::vector<std::string> names;
  for (const Slice& s : t.slices) names.emplace_back(t.name_of(s));
  return names;
}

// kNested as read: aten::t and the transpose inside it go (nested in aten::linear), and so
// does the as_strided inside aten::mul at 65 us. The view with a sequence number, the
// outermost view, the transpose inside SDPA, the expand (it overlaps aten::add without lying
// inside it), aten::mul (it starts before the op before it: a new run, whose nesting is not
// known here), the as_strided inside aten::mul at 41 us (its run went back to times the ops
// before it held, up to 60 us: one of those could hold it) and the other thread's op stay.
const std::vector<std::string> kNestedKept = {
    "aten::linear", "aten::view", "aten::mm", "aten::view", "aten::scaled_dot_product_attention", "aten::transpose",
    "aten::add", "aten::expand", "aten::mul", "aten::as_strided", "aten::as_strided"};

// The ops `events` keeps when read as the analyses read it, and how many it leaves out.
void expect_ops_kept(const char* events, const std::vector<std::string>& kept, int64_t left_out) {
  auto [everything, read] = parse_both(events, "nested_case.json");
  ASSERT_TRUE(everything.ok() && read.ok());
  EXPECT_EQ(op_names(*read), kept);
  EXPECT_EQ(read->nested_ops_left_out, left_out);
}

// A view inside an op of a run that went back in time, into an attention op written before
// it: the index puts the view in the attention op's subtree, so it stays.
TEST(TraceReads, AnOpOfARunBackInTimeStaysWhileEarlierOpsCouldHoldIt) {
  expect_ops_kept(R"(
    {"ph": "X", "cat": "cpu_op", "name": "aten::scaled_dot_product_attention", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention", "pid": 1, "tid": 1, "ts": 150, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::contiguous", "pid": 1, "tid": 1, "ts": 120, "dur": 20},
    {"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1, "ts": 121, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 300, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::t", "pid": 1, "tid": 1, "ts": 301, "dur": 1})",
                  {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
                   "aten::contiguous", "aten::view", "aten::linear"},
                  1);  // aten::t, once the run is past 200 us
}

TEST(TraceReads, NestedMetadataOpsOutsideAttentionAreLeftOut) {
  auto [everything, read] = parse_both(kNested, "nested.json");
  ASSERT_TRUE(everything.ok() && read.ok());
  EXPECT_EQ(everything->slices.size(), 14u);
  EXPECT_EQ(everything->nested_ops_left_out, 0);
  EXPECT_EQ(op_names(*read), kNestedKept);
  EXPECT_EQ(read->nested_ops_left_out, 3);
  EXPECT_NE(read->op_args_of(read->slices[1]), nullptr);  // the view kept for its sequence number
}

// A composite nested in another op goes, and the copy it made stays, held by the op around.
TEST(TraceReads, NestedCompositeOpsGoAndTheOpsTheyCalledStay) {
  expect_ops_kept(R"(
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::reshape", "pid": 1, "tid": 1, "ts": 11, "dur": 4},
    {"ph": "X", "cat": "cpu_op", "name": "aten::clone", "pid": 1, "tid": 1, "ts": 12, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty_like", "pid": 1, "tid": 1, "ts": 12, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "aten::reshape", "pid": 1, "tid": 1, "ts": 30, "dur": 1})",
                  {"aten::linear", "aten::clone", "aten::empty_like", "aten::reshape"}, 1);
}

TEST(TraceReads, ChunksParsedInParallelLeaveOutTheSameNestedOps) {
  constexpr int kCopies = 300;
  // Each copy 100 us after the one before, as a profile's steps: the same ops go in each.
  auto [r, one] = parse_chunked(kNested, kCopies, "nested_chunks.json", 100);
  ASSERT_TRUE(r.ok() && one.ok());
  EXPECT_EQ(r->nested_ops_left_out, 3 * kCopies);
  EXPECT_EQ(one->nested_ops_left_out, 3 * kCopies);
  ASSERT_EQ(r->slices.size(), kNestedKept.size() * kCopies);
  EXPECT_EQ(op_names(*r), op_names(*one));
  for (size_t i = 0; i < r->slices.size(); ++i) ASSERT_EQ(r->slices[i].args, one->slices[i].args) << "slice " << i;
}

// What leaving a nested metadata-only op out could hide: an input some analysis reads, an
// attention op, a role in eager attention. None of them has any.
TEST(TraceReads, OpsThatRunNothingOfTheirOwnAreNothingAnAnalysisLooksFor) {
  std::vector<std::string_view> ops(std::begin(kMetadataOnlyAtenOps), std::end(kMetadataOnlyAtenOps));
  ops.insert(ops.end(), std::begin(kCompositeAtenOps), std::end(kCompositeAtenOps));
  for (const std::string_view op : ops) {
    EXPECT_TRUE(runs_nothing_of_its_own(op)) << op;
    EXPECT_FALSE(op_inputs_read(op)) << op;
    EXPECT_EQ(classify_attention_op(op), nullptr) << op;
    EXPECT_FALSE(has_attention_vocabulary(op)) << op;
    const AtenOpWord* word = aten_op_word(op);
    EXPECT_TRUE(word == nullptr || (word->roles & ~unsigned{kRoleLayout}) == 0) << op;
  }
  EXPECT_FALSE(is_metadata_only_aten_op("aten::reshape"));  // may copy, inside it
  EXPECT_FALSE(runs_nothing_of_its_own("aten::clone"));  // the copy itself
  EXPECT_FALSE(runs_nothing_of_its_own("aten::copy_"));
  EXPECT_FALSE(runs_nothing_of_its_own("aten::empty_strided"));  // allocates
  EXPECT_FALSE(runs_nothing_of_its_own("aten::matmul"));  // an eager attention operand
}

TEST(InputLists, EqualListsAreStoredOnceAndAnyDifferenceMakesAnother) {
  InputLists lists;
  std::vector<OpInput> a(2);
  a[0].dims = std::vector<int64_t>{1, 4, 16};
  a[0].type = 3;
  a[1].concrete = 5;
  std::vector<OpInput> b = a;
  EXPECT_EQ(lists.intern(a).list(), lists.intern(b).list());
  b[1].concrete = 6;
  EXPECT_NE(lists.intern(a).list(), lists.intern(b).list());
  std::vector<OpInput> c = a;
  c[0].dims.push_back(2);
  EXPECT_NE(lists.intern(a).list(), lists.intern(c).list());
  EXPECT_EQ(lists.size(), 3u);
  const OpInputs stored = lists.intern(c);
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].dims, (std::vector<int64_t>{1, 4, 16, 2}));
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
