// Sliding-window verdicts on the real H200 Mistral trace, classification of planted heads,
// and the safetensors reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/heads.h"
#include "attnprof/ingest.h"

namespace attnprof {
namespace {

const std::string kMistral = std::string(ATTNPROF_FIXTURES_DIR) +
                             "/h200-torch2.11/traces/mistral_sw1024_sdpa_bf16_b2_s4096.pt.trace.json.gz";

TEST(SlidingWindow, MistralSdpaTraceWastesMaskedFlopsFromTheTraceAlone) {
  auto trace = load_trace(kMistral);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  const Report report = analyze_trace(*trace);
  const auto verdicts = sliding_window_effectiveness(report, &trace.value());
  ASSERT_EQ(verdicts.size(), 4u);  // 4 layers, one forward call each
  for (const auto& w : verdicts) {
    EXPECT_EQ(w.backend, "cudnn");
    EXPECT_EQ(w.mask, "materialised");
    EXPECT_FALSE(w.skips_masked_work);
    // Proven from the mask-building ops: causal part = (S - 1) / (2 S), S = 4096.
    EXPECT_NEAR(w.masked_fraction_min, 4095.0 / 8192.0, 1e-12);
    EXPECT_NEAR(w.wasted_flops_share, 4095.0 / 8192.0, 1e-12);
    EXPECT_LT(w.masked_fraction, 0);  // the window value itself is not in the trace
    EXPECT_EQ(w.window_source, "unknown");
    EXPECT_EQ(w.assumptions.size(), 2u);  // causal (aten::le) and window (aten::gt) seen
  }
}

TEST(SlidingWindow, MistralSdpaTraceWithTheKnownWindowGivesTheExactShare) {
  auto trace = load_trace(kMistral);
  ASSERT_TRUE(trace.ok());
  const auto verdicts = sliding_window_effectiveness(analyze_trace(*trace), &trace.value(), 1024);
  ASSERT_FALSE(verdicts.empty());
  // kept = sum_{i<1024} (i+1) + 3072 * 1024 = 3670528 of 4096^2 scores.
  EXPECT_NEAR(verdicts[0].wasted_flops_share, 1.0 - 3670528.0 / 16777216.0, 1e-12);
}

TEST(SlidingWindow, CompiledFlexCallSkipsMaskedBlocks) {
  Report report;
  Call flex;
  flex.backend = backend::kFlex;
  flex.direction = "forward";
  flex.fused = true;
  flex.shape.Sq = flex.shape.Skv = 4096;
  flex.kernels.push_back({"triton_tem_fused_flex_attention_0", component::kFused});
  report.calls.push_back(flex);
  Call eager_flex = flex;
  eager_flex.fused = false;
  eager_flex.kernels.clear();
  report.calls.push_back(eager_flex);
  const auto v = sliding_window_effectiveness(report, nullptr, 1024);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(v[0].skips_masked_work);
  EXPECT_EQ(v[0].wasted_flops_share, 0.0);
  EXPECT_FALSE(v[1].skips_masked_work);
  EXPECT_NEAR(v[1].wasted_flops_share, 1.0 - 3670528.0 / 16777216.0, 1e-12);
}

TEST(SlidingWindow, CapturedBlockMaskGivesTheSkippedBlocksAndTheMaskedShareOfTheComputedOnes) {
  Report report;
  Call flex;
  flex.backend = backend::kFlex;
  flex.direction = "forward";
  flex.fused = true;  // compiled (Inductor template)
  flex.shape.Sq = flex.shape.Skv = 4096;
  flex.mask.kind = "block_mask";
  flex.mask.present = true;
  flex.mask.window = 1024;         // read by the capture from the mask_mod
  flex.mask.block_sparsity = 0.7;  // BlockMask.sparsity() / 100
  report.calls.push_back(flex);
  Call eager_flex = flex;
  eager_flex.fused = false;
  report.calls.push_back(eager_flex);
  const auto v = sliding_window_effectiveness(report, nullptr);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].window, 1024);
  EXPECT_EQ(v[0].window_source, "capture");
  const double kept = 3670528.0 / 16777216.0;
  EXPECT_NEAR(v[0].masked_fraction, 1.0 - kept, 1e-12);
  EXPECT_DOUBLE_EQ(v[0].masked_fraction_min, 0.7);
  EXPECT_TRUE(v[0].skips_masked_work);
  // Computed: 30% of the scores, of which `kept` of all are kept -> the rest is masked work.
  EXPECT_NEAR(v[0].wasted_flops_share, 1.0 - kept / 0.3, 1e-12);
  EXPECT_NE(v[0].verdict.find("skips the 70.0% of blocks"), std::string::npos) << v[0].verdict;
  EXPECT_FALSE(v[1].skips_masked_work);
  EXPECT_NEAR(v[1].wasted_flops_share, 1.0 - kept, 1e-12);
  EXPECT_NE(v[1].verdict.find("without torch.compile"), std::string::npos);
}

TEST(SlidingWindow, MaterialisedMaskUsesTheWindowTheCaptureReadUnlessOneIsGiven) {
  Report report;
  Call sdpa;
  sdpa.backend = backend::kCpuFlash;
  sdpa.direction = "forward";
  sdpa.shape.Sq = sdpa.shape.Skv = 64;
  sdpa.mask = {true, "bool", {1, 1, 64, 64}, 16, -1, {}};
  report.calls.push_back(sdpa);
  const int64_t kept = 16 * 17 / 2 + 48 * 16;  // rows 0..15 see i+1 keys, the rest 16
  auto captured = sliding_window_effectiveness(report, nullptr);
  ASSERT_EQ(captured.size(), 1u);
  EXPECT_EQ(captured[0].window_source, "capture");
  EXPECT_NEAR(captured[0].wasted_flops_share, 1.0 - kept / 4096.0, 1e-12);
  auto given = sliding_window_effectiveness(report, nullptr, 32);
  EXPECT_EQ(given[0].window, 32);
  EXPECT_EQ(given[0].window_source, "given");
}

TEST(SlidingWindow, FindingsMergeLayersWithTheSameVerdictAndSkipVerdictsWithoutWaste) {
  auto trace = load_trace(kMistral);
  ASSERT_TRUE(trace.ok());
  auto verdicts = sliding_window_effectiveness(analyze_trace(*trace), &trace.value(), 1024);
  WindowEffectiveness no_waste;
  no_waste.wasted_flops_share = 0;
  verdicts.push_back(no_waste);
  const auto findings = sliding_window_findings(verdicts);
  ASSERT_EQ(findings.size(), 1u);  // the 4 cuDNN layers share one verdict
  EXPECT_EQ(findings[0].rule, "heads.sliding_window");
  EXPECT_EQ(findings[0].layers, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(findings[0].severity, "medium");
  EXPECT_NEAR(findings[0].expected_gain, 16777216.0 / 3670528.0, 1e-9);  // 1 / (1 - wasted)
  // 1 - 3670528 / 16777216 = 0.7812 of the FLOPs masked.
  EXPECT_EQ(findings[0].title, "cudnn: 78.1% of the attention FLOPs go to masked scores");
}

std::string h200(const std::string& name) {
  return std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11/traces/" + name + ".pt.trace.json.gz";
}

TEST(MaskKinds, MistralWindowTraceKeepsItsWindowVerdict) {
  auto trace = load_trace(kMistral);
  ASSERT_TRUE(trace.ok());
  const Report report = analyze_trace(*trace);
  ASSERT_TRUE(report.heads);
  for (const auto& w : report.heads->sliding_window) {
    EXPECT_EQ(w.mask_kind, "sliding_window");
    EXPECT_NE(w.verdict.find("window_size"), std::string::npos) << w.verdict;
  }
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(),
                          [](const Finding& f) { return f.rule == "heads.sliding_window"; }));
}

// A padding mask (transformers and-s a per-sequence key row [B, 1, 1, S] into it) is not a
// window: it gets unpadding advice, and no finding says "window".
TEST(MaskKinds, PaddingMaskTracesGetPaddingAdviceAndNoWindowAdvice) {
  for (const char* name : {"llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask", "llama7b4l_sdpa_bf16_b4_s2048_padmask",
                           "bert_sdpa_fp16_b16_s512_padmask"}) {
    auto trace = load_trace(h200(name));
    ASSERT_TRUE(trace.ok()) << name;
    const Report report = analyze_trace(*trace);
    ASSERT_TRUE(report.heads) << name;
    ASSERT_EQ(report.heads->sliding_window.size(), 4u) << name;  // 4 layers
    for (const auto& w : report.heads->sliding_window) {
      EXPECT_EQ(w.mask_kind, "padding") << name;
      EXPECT_NE(w.verdict.find("flash_attn_varlen_func"), std::string::npos) << w.verdict;
      EXPECT_EQ(w.verdict.find("window"), std::string::npos) << w.verdict;
    }
    for (const Finding& f : report.findings) {
      EXPECT_NE(f.rule, "heads.sliding_window") << name;
      if (f.rule.rfind("heads.", 0) == 0) {
        EXPECT_EQ(f.detail.find("window"), std::string::npos) << f.detail;
      }
    }
  }
}

TEST(MaskKinds, CausalPaddingMaskProvesTheCausalHalfAndBidirectionalPaddingClaimsNoShare) {
  auto llama = load_trace(h200("llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask"));
  ASSERT_TRUE(llama.ok());
  const Report causal = analyze_trace(*llama);
  ASSERT_TRUE(causal.heads);
  EXPECT_NEAR(causal.heads->sliding_window[0].masked_fraction_min, 2047.0 / 4096.0, 1e-12);
  EXPECT_TRUE(std::any_of(causal.findings.begin(), causal.findings.end(),
                          [](const Finding& f) { return f.rule == "heads.padding_mask"; }));
  auto bert = load_trace(h200("bert_sdpa_fp16_b16_s512_padmask"));
  ASSERT_TRUE(bert.ok());
  const Report bidirectional = analyze_trace(*bert);
  ASSERT_TRUE(bidirectional.heads);
  EXPECT_EQ(bidirectional.heads->sliding_window[0].wasted_flops_share, 0.0);  // which keys are padded: not in a trace
}

TEST(MaskKinds, CapturedPatternWinsAndAMaskOfUnknownKindClaimsNothing) {
  Report report;
  Call sdpa;
  sdpa.backend = backend::kMath;
  sdpa.direction = "forward";
  sdpa.shape.Sq = sdpa.shape.Skv = 64;
  sdpa.mask.present = true;
  sdpa.mask.kind = "bool";
  sdpa.mask.dims = {1, 1, 64, 64};
  report.calls.push_back(sdpa);
  sdpa.mask.pattern = "block";
  report.calls.push_back(sdpa);
  const auto v = sliding_window_effectiveness(report, nullptr);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].mask_kind, "unknown");
  EXPECT_EQ(v[0].wasted_flops_share, 0.0);
  EXPECT_EQ(v[1].mask_kind, "block");
  EXPECT_NE(v[1].verdict.find("document BlockMask"), std::string::npos) << v[1].verdict;
}

TEST(SlidingWindow, FlashCallsWithoutAMaskHaveNoVerdict) {
  // H100 BERT under SDPA flash: attention calls, none with a materialised Sq x Skv mask.
  auto trace = load_trace(std::string(ATTNPROF_FIXTURES_DIR) +
                          "/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  const Report report = analyze_trace(*trace);
  ASSERT_FALSE(report.calls.empty());
  EXPECT_TRUE(sliding_window_effectiveness(report, &trace.value()).empty());
}

// ---- classification -------------------------------------------------------------------

HeadStats head(int64_t h, double entropy, double sink, double keys = 512) {
  HeadStats s;
  s.head = h;
  s.kv_head = h;
  s.entropy = entropy;
  s.sink_mass = s.special_mass = sink;
  s.mean_keys = keys;
  s.max_weight = 0.05;
  s.block_coverage_95 = 0.9;
  return s;
}

TEST(HeadClassification, NearUniformHeadsWithoutSinksLookUntrained) {
  std::vector<HeadStats> stats = {head(0, 0.97, 4.0 / 512), head(1, 0.95, 5.0 / 512)};
  const HeadsSection s = summarize_heads(stats, {2, 2, 64, 64});
  EXPECT_FALSE(s.weights_look_trained);
  EXPECT_FALSE(s.untrained_reason.empty());
  EXPECT_TRUE(s.candidates.empty());
  for (const auto& h : s.heads) EXPECT_EQ(h.kind, "");
}

TEST(HeadClassification, SinkHeadWithSmallOutputIsAPruneCandidateWithItsKvBytes) {
  std::vector<HeadStats> stats = {head(0, 0.05, 0.97), head(1, 0.6, 0.1)};
  stats[0].output_share = 0.02;  // x 2 heads = 0.04 < 0.5
  stats[1].output_share = 0.98;
  stats[1].window_mass = {{64, 0.95}};  // 64 <= 0.25 * 512 keys
  HeadOptions opt;
  const HeadsSection s = summarize_heads(stats, {2, 2, 64, 64}, opt);
  ASSERT_TRUE(s.weights_look_trained);
  EXPECT_EQ(s.heads[0].kind, "dormant");
  EXPECT_EQ(s.heads[1].kind, "local");
  ASSERT_EQ(s.candidates.size(), 2u);
  EXPECT_EQ(s.candidates[0].action, "prune");
  EXPECT_EQ(s.candidates[0].kv_bytes_per_token, (64 + 64) * 2);  // K + V, bf16, one KV head
  EXPECT_EQ(s.candidates[1].action, "streaming_kv");
}

TEST(HeadClassification, GqaHeadFreesKvOnlyWhenItsWholeGroupQualifies) {
  std::vector<HeadStats> stats = {head(0, 0.05, 0.97), head(1, 0.05, 0.97), head(2, 0.05, 0.97), head(3, 0.7, 0.2)};
  for (auto& s : stats) s.kv_head = s.head / 2;  // 4 query heads, 2 KV heads
  const HeadsSection s = summarize_heads(stats, {4, 2, 64, 64});
  ASSERT_EQ(s.candidates.size(), 3u);
  EXPECT_EQ(s.candidates[0].kv_bytes_per_token, 128);  // (64 + 64) * 2 / 2 query heads
  EXPECT_EQ(s.candidates[1].kv_bytes_per_token, 128);
  EXPECT_EQ(s.candidates[2].kv_bytes_per_token, 0);    // head 3 shares KV head 1 and is not dormant
}

// ---- safetensors -----------------------------------------------------------------------

void write_safetensors(const std::string& path, const nlohmann::json& header, const std::vector<float>& data) {
  const std::string h = header.dump();
  std::ofstream f(path, std::ios::binary);
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>((n >> (8 * i)) & 0xff));
  f << h;
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(float)));
}

TEST(SafetensorsHeads, SinkHeadSavedToFileGivesTheSameAnswer) {
  // One layer, B=1, H=1, S=D=64: keys one-hot, every query scores token 0 only.
  const int64_t S = 64;
  std::vector<float> q(S * S, 0.0f), k(S * S, 0.0f);
  for (int64_t i = 0; i < S; ++i) {
    q[static_cast<size_t>(i * S)] = 1000.0f;
    k[static_cast<size_t>(i * S + i)] = 1.0f;
  }
  std::vector<float> data = q;
  data.insert(data.end(), k.begin(), k.end());
  const uint64_t bytes = S * S * 4;
  nlohmann::json header = {
      {"__metadata__", {{"causal", "true"}, {"scale", "1.0"}, {"sliding_window", "16"}}},
      {"layers.3.q", {{"dtype", "F32"}, {"shape", {1, 1, S, S}}, {"data_offsets", {0, bytes}}}},
      {"layers.3.k", {{"dtype", "F32"}, {"shape", {1, 1, S, S}}, {"data_offsets", {bytes, 2 * bytes}}}},
  };
  const std::string path = testing::TempDir() + "/sink_head.safetensors";
  write_safetensors(path, header, data);
  auto saved = load_heads_safetensors(path);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  ASSERT_EQ(saved->layers.size(), 1u);
  EXPECT_EQ(saved->layers[0].inputs.layer, 3);
  EXPECT_TRUE(saved->layers[0].inputs.causal);
  EXPECT_EQ(saved->model_window, 16);
  auto section = analyze_heads_file(path);
  ASSERT_TRUE(section.ok()) << section.error().message;
  ASSERT_EQ(section->heads.size(), 1u);
  EXPECT_DOUBLE_EQ(section->heads[0].sink_mass, 1.0);
  // Everything on token 0: the 16-token window drops it for rows i >= 16 (48 of 64).
  EXPECT_NEAR(section->heads[0].window_dropped_mass, 48.0 / 64.0, 1e-12);
}

TEST(SafetensorsHeads, TruncatedFileIsAOneLineError) {
  const std::string path = testing::TempDir() + "/truncated.safetensors";
  nlohmann::json header = {{"layers.0.q", {{"dtype", "F32"}, {"shape", {1, 1, 4, 4}}, {"data_offsets", {0, 64}}}},
                           {"layers.0.k", {{"dtype", "F32"}, {"shape", {1, 1, 4, 4}}, {"data_offsets", {64, 128}}}}};
  write_safetensors(path, header, std::vector<float>(20, 0.0f));  // 80 of 128 bytes
  auto r = load_heads_safetensors(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("outside the file"), std::string::npos);
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace attnprof
