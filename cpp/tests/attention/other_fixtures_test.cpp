// Attention extraction on traces recorded by others (TraceLens, HTA test suites): other
// GPUs, vendors, serving stacks, and traces with no attention at all.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attnprof/attention.h"
#include "attnprof/io.h"
#include "fixture_util.h"

namespace attnprof::test {
namespace {

std::string tracelens(const std::string& name) { return fixture("tracelens/" + name + ".json.gz"); }

void expect_all(const Report& r, size_t calls, const char* backend, const char* library, bool fused) {
  ASSERT_EQ(r.calls.size(), calls);
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.backend, backend);
    EXPECT_EQ(c.library, library);
    EXPECT_EQ(c.fused, fused);
  }
}

TEST(TraceLensFixtures, H100QwenRunsPytorchFlashOn24Layers) {
  const Report& r = analyzed(tracelens("h100_Qwen_Qwen1.5-0.5B-Chat__1016005"));
  expect_all(r, 24, "flash", "pytorch_flash", true);
  for (size_t i = 0; i < r.calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].layer, static_cast<int64_t>(i));
    EXPECT_TRUE(r.calls[i].module.ends_with("Qwen2Attention_" + std::to_string(i))) << r.calls[i].module;
    EXPECT_EQ(r.calls[i].shape.D, 64);
  }
  // 10 more flash kernels ran before the profiling window opened: no CPU side, no call.
  ASSERT_FALSE(r.source.missing.empty());
  bool noted = false;
  for (const std::string& m : r.source.missing) noted = noted || m.starts_with("10 attention kernel(s)");
  EXPECT_TRUE(noted);
}

TEST(TraceLensFixtures, H100BertRunsPytorchFlash) {
  expect_all(analyzed(tracelens("h100_gaunernst_bert-small-uncased__1016001")), 4, "flash", "pytorch_flash", true);
}

TEST(TraceLensFixtures, Mi300BertRunsFlashThroughAotriton) {
  const Report& r = analyzed(tracelens("mi300_gaunernst_bert-small-uncased__1016001"));
  expect_all(r, 4, "flash", "aotriton", true);
  EXPECT_EQ(r.calls.front().shape.Sq, 141);
  EXPECT_EQ(r.calls.front().shape.Hq, 8);
  EXPECT_EQ(r.calls.front().kernels.front().name, "attn_fwd");
  EXPECT_EQ(r.source.arch, "gfx942");
}

TEST(TraceLensFixtures, TimesformerRunsEagerAttentionGroupedPerLayer) {
  const Report& r = analyzed(tracelens("h100_facebook_timesformer-base-finetuned-k400__1016002"));
  expect_all(r, 24, "eager", "aten", false);
  for (const Call& c : r.calls) {
    EXPECT_NE(c.module.find("TimesformerSelfAttention_"), std::string::npos) << c.module;
    EXPECT_EQ(c.shape.D, 64);
    EXPECT_EQ(c.shape.Hq, 12);
  }
}

TEST(TraceLensFixtures, B200VllmRunsTrtllmFusedKernelsOnPackedTokens) {
  const Report& r = analyzed(tracelens("b200_eager_trace"));
  expect_all(r, 36, "external", "trtllm_fmha", true);
  const Call& c = r.calls.front();
  EXPECT_EQ(c.op, "vllm::unified_attention_with_output");
  EXPECT_EQ(c.shape.Hq, 8);
  EXPECT_EQ(c.shape.Hkv, 1);
  EXPECT_EQ(c.shape.D, 64);
  EXPECT_EQ(c.shape.dtype, "fp8_e4m3");
  EXPECT_TRUE(c.gqa);
}

TEST(TraceLensFixtures, B200VllmStepAnnotationGivesEachCallItsExactCausalFlops) {
  // execute_context_1(888_788544)_generation_0(0): one prefill request of 888 tokens whose
  // sum of sq*sk is 788544 = 888 x 888, so each call attends 888 queries to 888 keys, causal
  // (the trtllm kernel name spells Causal), bottom-right: 888*889/2 pairs. Every other layer's
  // kernel is SlidingOrChunkedCausal with a window the trace does not give: the causal count
  // bounds it from above.
  const Report& r = analyzed(tracelens("b200_eager_trace"));
  ASSERT_EQ(r.calls.size(), 36u);
  const double pairs = 888.0 * 889 / 2;
  int sliding = 0;
  for (const Call& c : r.calls) {
    ASSERT_TRUE(c.kernel_template.has_value());
    const bool local = c.kernel_template->local == 1;
    sliding += local;
    EXPECT_EQ(c.flops_upper_bound, local);
    EXPECT_EQ(c.flops_bound_reason, local ? "sliding-window kernel: the window size is not recorded" : "");
    EXPECT_EQ(c.shape.lengths_from, "annotation");
    EXPECT_EQ(c.shape.seqlens_q, std::vector<int64_t>{888});
    EXPECT_EQ(c.shape.seqlens_k, std::vector<int64_t>{888});
    EXPECT_DOUBLE_EQ(c.flops_useful, 2.0 * 8 * (64 + 64) * pairs);  // Hq 8, D = Dv = 64
    EXPECT_DOUBLE_EQ(c.flops, c.flops_useful);
    EXPECT_EQ(c.causal_alignment, "bottom_right");
    // Its 128 x 128 tiles: query tile t (rows 128t..) runs key tiles 0..t, the last 120 rows.
    double tiles = 0;
    for (int t = 0; t < 7; ++t) tiles += (t < 6 ? 128.0 : 120.0) * std::min(888.0, 128.0 * (t + 1));
    EXPECT_EQ(c.flops_granularity, "tile");
    EXPECT_DOUBLE_EQ(c.flops_executed, 2.0 * 8 * 128 * tiles);
    EXPECT_TRUE(c.unknown.empty());
  }
  EXPECT_EQ(sliding, 18);
}

TEST(TraceLensFixtures, CompiledGraphCallingTheFlashOpDirectlyIsOneCall) {
  const Report& r = analyzed(tracelens("torch_compile_triton_trace"));
  expect_all(r, 1, "flash", "aotriton", true);
  EXPECT_EQ(r.calls.front().op, "aten::_scaled_dot_product_flash_attention");
  EXPECT_EQ(r.calls.front().shape.Sq, 4096);
}

TEST(HtaFixtures, TracesWithoutAttentionReportNone) {
  for (const auto& entry : std::filesystem::directory_iterator(fixture("hta"))) {
    SCOPED_TRACE(entry.path().filename().string());
    const Report& r = analyzed(entry.path().string());
    EXPECT_EQ(r.calls.size(), 0u);
    EXPECT_EQ(r.summary.call_count, 0);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings.front().title, "no attention found");
  }
}

TEST(HtaFixtures, CpuOnlyTraceHasNoGpuTime) {
  const Report& r = analyzed(fixture("hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"));
  EXPECT_FALSE(r.summary.has_gpu);
  EXPECT_EQ(r.summary.gpu_time_us, 0);
}

std::string inference(const std::string& name) { return fixture("tracelens-inference/" + name + ".json.gz"); }

TEST(TraceLensInferenceFixtures, SglangPagedDecodeReadsBatchFromKvIndptrAndHeadsFromTheCache) {
  const Report& r = analyzed(inference("sglang_qwen3_8b_decode_graph_capture"));
  ASSERT_EQ(r.calls.size(), 36u);
  const Call& c = r.calls.front();
  EXPECT_TRUE(c.op.starts_with("sglang_profiler::attention_paged_attention_ragged"));
  EXPECT_EQ(c.library, "aiter");
  EXPECT_EQ(c.shape.kv_cache, (std::vector<int64_t>{835874, 1, 8, 128}));
  EXPECT_EQ(c.shape.B, 32);  // kv_indptr [33]
  EXPECT_TRUE(c.decode);
  EXPECT_TRUE(c.gqa);
  EXPECT_EQ(c.flops, 0);  // the cached context length is not an argument
}

TEST(TraceLensInferenceFixtures, AiterFmhaV3ReadsScaleAndCausalFromConcreteInputs) {
  const Report& r = analyzed(inference("xdit_flux1_aiter_fmha_v3"));
  const auto aiter = std::find_if(r.calls.begin(), r.calls.end(), [](const Call& c) { return c.op == "aiter::fmha_v3_fwd"; });
  ASSERT_NE(aiter, r.calls.end());
  EXPECT_NEAR(aiter->scale, 0.088388347648318447, 1e-12);  // 1/sqrt(128)
  EXPECT_FALSE(aiter->causal);
  EXPECT_EQ(aiter->shape.Sq, aiter->shape.Skv);
  EXPECT_GT(aiter->flops, 0);
  EXPECT_FALSE(aiter->flops_upper_bound);  // dense [B, S, H, D]: exact
}

TEST(TraceLensInferenceFixtures, FirstT5LayerComputingThePositionBiasIsAnEagerCallToo) {
  const Report& r = analyzed(inference("xdit_flux1_aiter_fmha_v3"));
  std::vector<const Call*> eager;
  for (const Call& c : r.calls)
    if (c.backend == "eager") eager.push_back(&c);
  ASSERT_EQ(eager.size(), 24u);
  for (const Call* c : eager) {
    EXPECT_EQ(c->mask.kind, "float");  // scores += position bias
    EXPECT_EQ(c->shape.Sq, 512);
  }
  // Layer 0 computes the bias between Q@K^T and the softmax (its kernels are in the call);
  // the later layers reuse it.
  EXPECT_GT(eager[0]->kernels.size(), eager[1]->kernels.size());
}

// PyTorch <= 1.13 without Kineto wrote a bare JSON array of "X" events with no "cat" and no
// shapes. Derived here from a real trace: its op ranges only, without cat and args.
TEST(LegacyTraces, OpRangesWithoutCatOrShapesStillGiveTheirCalls) {
  auto text = read_text_file(h200("gpt2_eager_fp16_b8_s1024"));
  ASSERT_TRUE(text) << text.error().message;
  const nlohmann::json doc = nlohmann::json::parse(*text);
  nlohmann::json legacy = nlohmann::json::array();
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.value("ph", "") != "X" || ev.value("cat", "") != "cpu_op") continue;
    nlohmann::json stripped = ev;
    stripped.erase("cat");
    stripped.erase("args");
    legacy.push_back(std::move(stripped));
  }
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("attnprof_legacy_" + std::to_string(::getpid()) + ".json")).string();
  ASSERT_TRUE(write_file_atomic(path, legacy.dump()));
  Result<Report> r = analyze_file(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->calls.size(), 4u);  // GPT-2 4L eager, as with the full trace
  for (const Call& c : r->calls) {
    EXPECT_EQ(c.backend, "eager");
    EXPECT_EQ(c.shape.Sq, 0);  // no shapes: unknown, not guessed
  }
  bool noted = false;
  for (const std::string& m : r->source.missing) noted = noted || m.find("no \"cat\"") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_FALSE(r->summary.has_gpu);
}

}  // namespace
}  // namespace attnprof::test
