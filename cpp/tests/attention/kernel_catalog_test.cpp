// The kernel and op catalogs: real names map to the intended entry, precedence is explicit.
#include <gtest/gtest.h>

#include <set>

#include "attnprof/attention.h"
#include "attnprof/ingest.h"
#include "fixture_util.h"

namespace attnprof::test {
namespace {

const KernelPattern& classified(std::string_view name) {
  const KernelPattern* p = classify_kernel(name);
  if (!p) {
    ADD_FAILURE() << "no catalog entry for " << name;
    static const KernelPattern none{};
    return none;
  }
  return *p;
}

TEST(KernelCatalog, CudnnSdpaKernelsAreFusedCudnn) {
  const auto& p = classified("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0");
  EXPECT_EQ(p.kind, KernelKind::kFusedAttention);
  EXPECT_EQ(p.backend, "cudnn");
  EXPECT_EQ(p.library, "cudnn");
}

TEST(KernelCatalog, PytorchFlashOutranksTheStandaloneFlashPackagePattern) {
  // "void pytorch_flash::flash_fwd_kernel" also contains "flash::flash_fwd".
  const auto& vendored = classified("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)");
  EXPECT_EQ(vendored.library, "pytorch_flash");
  const auto& package = classified("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)");
  EXPECT_EQ(package.library, "flash_attn");
  EXPECT_TRUE(classified("void pytorch_flash::flash_fwd_splitkv_combine_kernel<K>(P)").auxiliary);
}

TEST(KernelCatalog, InductorKernelsNamedAfterSdpaAreNotAttention) {
  const auto& p = classified("triton_poi_fused__scaled_dot_product_flash_attention_add_mul_permute_0");
  EXPECT_EQ(p.kind, KernelKind::kElementwise);
  EXPECT_EQ(classified("triton_per_fused__softmax_3").kind, KernelKind::kSoftmax);
  EXPECT_EQ(classified("triton_tem_fused_flex_attention_0").backend, "flex");
  EXPECT_EQ(classified("triton_tem_fused_flex_attention_backward_2").direction, "backward");
}

TEST(KernelCatalog, VendorKernelsMapToTheirLibraries) {
  EXPECT_EQ(classified("attn_fwd").library, "aotriton");
  EXPECT_EQ(classified("fmha_cutlassB_bf16_aligned_128x128_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel)").direction, "backward");
  EXPECT_EQ(classified("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext").library, "trtllm_fmha");
  EXPECT_EQ(classified("cutlass::device_kernel<flash::enable_sm90<flash::FlashAttnFwdSm90<Params>>>").library, "flash_attn_3");
  // TensorRT-LLM's block-scaled GEMMs start with "bmm_": not attention.
  EXPECT_EQ(classified("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_schedP2x1").kind,
            KernelKind::kGemm);
  EXPECT_EQ(classified("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*)").kind,
            KernelKind::kSoftmax);
  EXPECT_EQ(classified("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT").kind, KernelKind::kGemm);
}

TEST(KernelCatalog, NoFixtureKernelMatchesTwoEntriesOfTheSamePriority) {
  std::set<std::string> names;
  for (const char* f : {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b1_s2048_train.pt.trace.json.gz",
                        "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz",
                        "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention.pt.trace.json.gz",
                        "h200-torch2.11/traces/llama7b4l_sdpa_fp32_b4_s2048.pt.trace.json.gz",
                        "tracelens/b200_eager_trace.json.gz", "tracelens/mi300_gaunernst_bert-small-uncased__1016001.json.gz",
                        "tracelens/h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz"}) {
    Result<Trace> t = load_trace(fixture(f));
    ASSERT_TRUE(t.ok()) << f;
    for (const Slice& s : t->slices)
      if (s.cat == Category::kKernel) names.insert(std::string(t->name_of(s)));
  }
  ASSERT_GT(names.size(), 50u);
  for (const std::string& name : names) {
    const KernelPattern* best = classify_kernel(name);
    if (!best) continue;
    const std::string_view n = kernel_function_name(name);
    int ties = 0;
    for (const KernelPattern& p : kernel_catalog()) {
      const bool hit = p.match == MatchKind::kPrefix ? n.starts_with(p.pattern)
                       : p.match == MatchKind::kExact ? n == p.pattern
                                                      : n.find(p.pattern) != std::string_view::npos;
      ties += hit && p.priority == best->priority;
    }
    EXPECT_EQ(ties, 1) << name;
  }
}

TEST(KernelCatalog, ParameterTypesDoNotMakeAKernelAttention) {
  // A TensorRT-LLM quantisation kernel of the B200 MoE takes a flashinfer:: enum.
  const KernelPattern* p = classify_kernel(
      "void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16, "
      "32, true>(int, int, __nv_bfloat16 const*, flashinfer::QuantizationSFLayout)");
  EXPECT_TRUE(p == nullptr || p->kind != KernelKind::kFusedAttention);
  EXPECT_EQ(kernel_function_name("void (anonymous namespace)::softmax_warp_forward<float, 10>(float*, int)"),
            "(anonymous namespace)::softmax_warp_forward<float, 10>");
}

TEST(OpCatalog, BackwardOpsAreNotTakenForTheirForwardPrefix) {
  const AttentionOp* bwd = classify_attention_op("aten::_scaled_dot_product_cudnn_attention_backward");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->direction, "backward");
  const AttentionOp* fwd = classify_attention_op("aten::_scaled_dot_product_cudnn_attention");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->direction, "forward");
  EXPECT_EQ(classify_attention_op("vllm::unified_attention_with_output")->backend, "external");
  EXPECT_EQ(classify_attention_op("aten::log_softmax"), nullptr);
  EXPECT_EQ(classify_attention_op("aten::_scaled_dot_product_flash_attention_for_cpu")->backend, "cpu_flash");
}

TEST(Flops, CausalSelfAttentionHalvesAndBackwardCostsTwoAndAHalfTimes) {
  Call c;
  c.shape = {2, 8, 8, 256, 256, 64, 64, "bf16"};
  c.direction = "forward";
  EXPECT_DOUBLE_EQ(attention_flops(c), 4.0 * 2 * 8 * 256 * 256 * 64);
  c.causal = true;
  EXPECT_DOUBLE_EQ(attention_flops(c), 4.0 * 2 * 8 * 256 * 256 * 64 / 2);
  c.direction = "backward";
  EXPECT_DOUBLE_EQ(attention_flops(c), 4.0 * 2 * 8 * 256 * 256 * 64 / 2 * 2.5);
  c.shape.Sq = 1;  // causal decode is not halved: the one query sees every key
  c.direction = "forward";
  EXPECT_DOUBLE_EQ(attention_flops(c), 4.0 * 2 * 8 * 1 * 256 * 64);
}

}  // namespace
}  // namespace attnprof::test
