// Old Kineto schemas, hand-written attention of an encoder-decoder, the native fast path of
// nn.TransformerEncoderLayer, and the candidates finding when nothing is recognised.
// Traces: cpp/tests/data (our own CPU captures, torch 2.13, rewritten into the torch 1.8-1.9
// schema by cpp/tests/data/make_legacy_traces.py; its docstring gives the model), the shared
// H200 fixtures rewritten in memory, and the HTA negatives.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "attention/fixture_util.h"
#include "attnprof/analyze.h"
#include "attnprof/ingest.h"
#include "attnprof/render.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

using test::analyzed;

std::string data(const std::string& name) { return std::string(ATTNPROF_SOURCE_DIR) + "/cpp/tests/data/" + name; }

// The model of make_legacy_traces.py: batch 2, source 12 tokens, target 9, 4 heads of 8,
// embedding 32, vocabulary 40; 3 encoder layers, 3 decoder layers (self + cross), one copy attention.
constexpr int64_t kB = 2, kSrc = 12, kTgt = 9, kHeads = 4, kHeadDim = 8, kEmbed = 32, kVocab = 40;

Report analyze_text(const std::string& text, const std::string& label) {
  Result<Trace> trace = parse_trace(text, label);
  EXPECT_TRUE(trace) << label;
  return trace ? analyze_trace(*trace) : Report{};
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

int count_shape(const Report& r, int64_t hq, int64_t sq, int64_t skv) {
  return static_cast<int>(std::count_if(r.calls.begin(), r.calls.end(), [&](const Call& c) {
    return c.shape.Hq == hq && c.shape.Sq == sq && c.shape.Skv == skv;
  }));
}

const Finding* candidates_of(const Report& r) {
  for (const Finding& f : r.findings)
    if (f.rule == finding::kAttentionCandidates) return &f;
  return nullptr;
}

TEST(LegacySchema, EncoderDecoderHandWrittenAttentionIsTenEagerForwardCalls) {
  for (const char* name : {"encdec_legacy.json.gz", "encdec_current.json.gz", "encdec_legacy_noshapes.json.gz"}) {
    const Report& r = analyzed(data(name));
    ASSERT_EQ(r.calls.size(), 10u) << name;  // 3 encoder self + 3 decoder self + 3 cross + 1 copy
    for (const Call& c : r.calls) {
      EXPECT_EQ(c.backend, backend::kEager) << name;
      EXPECT_EQ(c.direction, "forward") << name;
    }
    EXPECT_EQ(candidates_of(r), nullptr) << name;
  }
}

TEST(LegacySchema, CrossAttentionHasTheTargetAsQueriesAndTheSourceAsKeys) {
  const Report& r = analyzed(data("encdec_legacy.json.gz"));
  EXPECT_EQ(count_shape(r, kHeads, kSrc, kSrc), 3);  // encoder self-attention
  EXPECT_EQ(count_shape(r, kHeads, kTgt, kTgt), 3);  // decoder self-attention
  EXPECT_EQ(count_shape(r, kHeads, kTgt, kSrc), 3);  // cross-attention: Sq 9 target, Skv 12 source
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.shape.B, kB);
    if (c.shape.Hq == kHeads) {
      EXPECT_EQ(c.shape.D, kHeadDim);
    }
    EXPECT_EQ(c.cross, c.shape.Sq != c.shape.Skv);
  }
}

TEST(LegacySchema, CopyAttentionIsOneSingleHeadCallAndTheVocabularyProjectionIsNone) {
  const Report& r = analyzed(data("encdec_legacy.json.gz"));
  // bmm(h_t W, h_s^T) -> softmax over the 12 source tokens -> bmm with h_s: one head of 32.
  ASSERT_EQ(count_shape(r, 1, kTgt, kSrc), 1);
  for (const Call& c : r.calls)
    if (c.shape.Hq == 1) {
      EXPECT_EQ(c.shape.D, kEmbed);
    }
  // matmul(h, E^T) -> softmax over the 40-word vocabulary -> matmul with E: E is a 2-D weight.
  for (const Call& c : r.calls) EXPECT_NE(c.shape.Skv, kVocab);
}

TEST(LegacySchema, LegacyAndCurrentSchemaOfOneCaptureGiveTheSameCalls) {
  const Report& legacy = analyzed(data("encdec_legacy.json.gz"));
  const Report& current = analyzed(data("encdec_current.json.gz"));
  ASSERT_EQ(legacy.calls.size(), current.calls.size());
  for (size_t i = 0; i < legacy.calls.size(); ++i) {
    const Call& a = legacy.calls[i];
    const Call& b = current.calls[i];
    EXPECT_EQ(a.op, b.op) << i;
    EXPECT_EQ(a.backend, b.backend) << i;
    EXPECT_EQ(a.layer, b.layer) << i;
    EXPECT_EQ(a.mask.kind, b.mask.kind) << i;
    EXPECT_EQ(a.mask.dims, b.mask.dims) << i;
    EXPECT_EQ(std::vector<int64_t>({a.shape.B, a.shape.Hq, a.shape.Sq, a.shape.Skv, a.shape.D, a.shape.Dv}),
              std::vector<int64_t>({b.shape.B, b.shape.Hq, b.shape.Sq, b.shape.Skv, b.shape.D, b.shape.Dv}))
        << i;
    // The old schema writes whole microseconds: start and end each rounded.
    EXPECT_NEAR(static_cast<double>(a.cpu_dur_ns), static_cast<double>(b.cpu_dur_ns), 1500.0) << i;
  }
}

TEST(LegacySchema, WithoutInputDimsTheCallsAreFoundAndTheirShapesUnknown) {
  const Report& r = analyzed(data("encdec_legacy_noshapes.json.gz"));
  ASSERT_EQ(r.calls.size(), 10u);  // the vocabulary projection is told by the aten::t of E.t()
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.shape.Sq, 0);
    EXPECT_EQ(c.shape.Skv, 0);
    EXPECT_EQ(c.flops, 0);
  }
}

TEST(LegacySchema, AScaleOfQBeforeTheProductStartsTheCall) {
  // q = q / sqrt(d) before matmul(q, k^T): the call starts at that aten::div.
  Result<Trace> trace = load_trace(data("encdec_current.json.gz"));
  ASSERT_TRUE(trace);
  std::set<int64_t> div_starts;
  for (const Slice& s : trace->slices)
    if (trace->name_of(s) == "aten::div") div_starts.insert(s.ts_ns);
  const Report& r = analyzed(data("encdec_current.json.gz"));
  int multi_head = 0;
  for (const Call& c : r.calls) {
    if (c.shape.Hq != kHeads) continue;
    ++multi_head;
    EXPECT_TRUE(div_starts.count(c.cpu_ts_ns)) << c.cpu_ts_ns;
  }
  EXPECT_EQ(multi_head, 9);
}

TEST(NativeFastPath, TransformerEncoderLayerEvalIsOneCallPerLayerFromItsAttentionOp) {
  const Report& r = analyzed(data("encoder_fastpath_current.json.gz"));
  ASSERT_EQ(r.calls.size(), 2u);  // two nn.TransformerEncoderLayer(32, 4) in eval under no_grad
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.op, "aten::_native_multi_head_attention");
    EXPECT_EQ(c.backend, backend::kMath);  // bmm -> _softmax -> bmm inside it on CPU
    EXPECT_EQ(std::vector<int64_t>({c.shape.B, c.shape.Hq, c.shape.Sq, c.shape.Skv, c.shape.D}),
              std::vector<int64_t>({kB, kHeads, kSrc, kSrc, kHeadDim}));
  }
}

TEST(NativeFastPath, TheLayerOpIsTheCallWhereNoAttentionOpIsRecordedBelowIt) {
  // As where the layer computes attention with no op of the catalog below it: the inner op renamed.
  Result<std::string> text = read_trace_text(data("encoder_fastpath_current.json.gz"));
  ASSERT_TRUE(text);
  const Report r = analyze_text(replace_all(*text, "aten::_native_multi_head_attention", "custom::layer_inner"), "renamed");
  ASSERT_EQ(r.calls.size(), 2u);
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.op, "aten::_transformer_encoder_layer_fwd");
    EXPECT_EQ(c.backend, backend::kMath);
    // src [2, 12, 32] and num_heads 4 (argument 2 of the schema)
    EXPECT_EQ(std::vector<int64_t>({c.shape.B, c.shape.Hq, c.shape.Sq, c.shape.Skv, c.shape.D}),
              std::vector<int64_t>({kB, kHeads, kSrc, kSrc, kHeadDim}));
  }
}

TEST(NativeFastPath, AMaskedSoftmaxNoOtherFinderTookIsACallOfItsOwn) {
  // The layer's ops renamed so no catalog op holds its bmm -> softmax -> bmm, and the softmax
  // as the masked one of a fast path with a mask: nested, so no eager pattern either.
  Result<std::string> text = read_trace_text(data("encoder_fastpath_current.json.gz"));
  ASSERT_TRUE(text);
  std::string renamed = replace_all(*text, "aten::_native_multi_head_attention", "custom::inner");
  renamed = replace_all(renamed, "aten::_transformer_encoder_layer_fwd", "custom::layer");
  renamed = replace_all(renamed, "\"aten::_softmax\"", "\"aten::_masked_softmax\"");
  const Report r = analyze_text(renamed, "masked");
  ASSERT_EQ(r.calls.size(), 2u);
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.op, "aten::_masked_softmax");
    EXPECT_EQ(c.backend, backend::kMath);
    EXPECT_EQ(c.shape.D, 0);  // scores give no head dim: unknown, not guessed
  }
}

TEST(AttentionCandidates, RenamedSoftmaxLeavesNoCallButAFindingNamingTheCandidates) {
  Result<std::string> text = read_trace_text(data("encdec_current.json.gz"));
  ASSERT_TRUE(text);
  const Report r = analyze_text(replace_all(*text, "\"aten::softmax\"", "\"mylib::fused_softmax\""), "renamed");
  EXPECT_TRUE(r.calls.empty());
  const Finding* f = candidates_of(r);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, "info");
  // 9 multi-head (matmul) + the copy attention (bmm) + the vocabulary projection (matmul).
  EXPECT_NE(f->title.find("11 candidates"), std::string::npos) << f->title;
  EXPECT_NE(f->detail.find("aten::matmul -> mylib::fused_softmax -> aten::matmul (10x"), std::string::npos) << f->detail;
  EXPECT_NE(f->detail.find("aten::bmm -> mylib::fused_softmax -> aten::bmm (1x"), std::string::npos) << f->detail;
  EXPECT_NE(f->detail.find("not an ATen softmax"), std::string::npos);
  const std::string rendered = render_text(r);
  EXPECT_NE(rendered.find(f->title), std::string::npos);
  EXPECT_EQ(rendered.find("no attention found"), std::string::npos);
}

TEST(AttentionCandidates, HtaTracesWithoutAttentionHaveNoCandidates) {
  for (const char* name : {"hta/trace_filter_sampled_rank-0.json.gz", "hta/trace_filter_sampled_rank-1.json.gz",
                           "hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                           "hta/trace_diff_control_control.json.gz", "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"}) {
    const Report& r = analyzed(test::fixture(name));
    EXPECT_TRUE(r.calls.empty()) << name;
    EXPECT_EQ(candidates_of(r), nullptr) << name;
    EXPECT_NE(render_text(r).find("no attention found"), std::string::npos) << name;
  }
}

// The torch 1.8-1.9 spellings of a GPU trace: capitalised categories, flows "async" /
// "launch", and "external id" in the args of runtime, kernel, memcpy and memset events
// (pytorch/kineto libkineto/src/output_json.cpp of 2021). Kineto writes "cat" before "args".
std::string to_legacy_gpu_schema(const std::string& text) {
  std::string out = text;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"cat\": \"cpu_op\"", "\"cat\": \"Operator\""}, {"\"cat\": \"kernel\"", "\"cat\": \"Kernel\""},
           {"\"cat\": \"cuda_runtime\"", "\"cat\": \"Runtime\""}, {"\"cat\": \"gpu_memcpy\"", "\"cat\": \"Memcpy\""},
           {"\"cat\": \"gpu_memset\"", "\"cat\": \"Memset\""}, {"\"cat\": \"ac2g\", \"name\": \"ac2g\"", "\"cat\": \"async\", \"name\": \"launch\""},
           {"\"cat\": \"gpu_user_annotation\"", "\"cat\": \"User\""}})
    out = replace_all(out, from, to);
  std::string result;
  result.reserve(out.size());
  bool device_side = false;  // the event being copied is a Runtime/Kernel/Memcpy/Memset one
  for (size_t i = 0; i < out.size();) {
    if (out.compare(i, 7, "\"cat\": ") == 0) {
      const std::string cat = out.substr(i + 8, out.find('"', i + 8) - (i + 8));
      device_side = cat == "Runtime" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
    }
    if (device_side && out.compare(i, 13, "\"External id\"") == 0) {
      result += "\"external id\"";
      i += 13;
      continue;
    }
    result += out[i++];
  }
  return result;
}

TEST(LegacySchema, GpuTraceInTheOldSpellingsGivesTheSameCallsAndKernels) {
  const std::string path = test::h200("gpt2_eager_fp16_b8_s1024");
  Result<std::string> text = read_trace_text(path);
  ASSERT_TRUE(text);
  const std::string legacy = to_legacy_gpu_schema(*text);
  ASSERT_NE(legacy.find("\"cat\": \"Kernel\""), std::string::npos);
  ASSERT_NE(legacy.find("\"external id\""), std::string::npos);
  const Report& current = analyzed(path);
  const Report old = analyze_text(legacy, "legacy");
  ASSERT_FALSE(current.calls.empty());
  ASSERT_EQ(old.calls.size(), current.calls.size());
  EXPECT_TRUE(old.summary.has_gpu);
  for (size_t i = 0; i < old.calls.size(); ++i) {
    EXPECT_EQ(old.calls[i].backend, current.calls[i].backend) << i;
    EXPECT_EQ(old.calls[i].kernels.size(), current.calls[i].kernels.size()) << i;
    EXPECT_DOUBLE_EQ(old.calls[i].device_time_us, current.calls[i].device_time_us) << i;
  }
}

}  // namespace
}  // namespace attnprof
