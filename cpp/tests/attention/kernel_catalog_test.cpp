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
  EXPECT_TRUE(classified("void pytorch_flash::flash_fwd_splitkv_combine_kernel<K>(P)").auxiliary());
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

// Kernel names as spelled in each library's source (docs/backends.md cites the file) or in
// the fixtures' traces: each maps to its library, vendor and part.
struct Expected {
  const char* name;
  const char* library;
  const char* backend;
  KernelPart part;
};

TEST(KernelCatalog, ServingAndResearchLibrariesMapToTheirEntries) {
  using P = KernelPart;
  const Expected cases[] = {
      // vLLM CUDA / ROCm paged attention, Triton unified attention
      {"void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false>(__nv_bfloat16*)", "vllm", "external", P::kMain},
      {"void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*)", "vllm", "external", P::kMain},
      {"void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128, 128, 512>(__nv_bfloat16*)", "vllm", "external", P::kAfter},
      {"void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 16, 128, 256, false, 4>(__hip_bfloat16 const*)", "vllm_rocm", "external", P::kMain},
      {"void paged_attention_ll4mi_QKV_mfma4_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, 16, 128, 256, false, 1>(__hip_bfloat16 const*)", "vllm_rocm", "external", P::kMain},
      {"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 1>(__hip_bfloat16*)", "vllm_rocm", "external", P::kAfter},
      {"kernel_unified_attention_2d", "vllm_triton", "external", P::kMain},
      {"kernel_unified_attention_3d", "vllm_triton", "external", P::kMain},
      {"reduce_segments", "vllm_triton", "external", P::kAfter},
      {"void vllm::merge_attn_states_kernel<__nv_bfloat16, 128>(__nv_bfloat16*)", "vllm", "external", P::kAfter},
      // FlashInfer, FlashMLA, CUTLASS MLA
      {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<KernelTraits, Params>(Params)", "flashinfer", "external", P::kMain},
      {"void flashinfer::BatchPrefillWithRaggedKVCacheKernel<KernelTraits, Params>(Params)", "flashinfer", "external", P::kMain},
      {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<PosEncodingMode::kNone, 2u, 4u, 8u, 16u, 1u, 8u>(Params)", "flashinfer", "external", P::kMain},
      {"void flashinfer::mla::BatchMLAPagedAttentionKernel<flashinfer::mla::KernelTraits<true, 2u>, Params>(Params)", "flashinfer", "external", P::kMain},
      {"void flashinfer::VariableLengthMergeStatesKernel<8u, 16u, 8u, 4u, __nv_bfloat16>(__nv_bfloat16*)", "flashinfer", "external", P::kAfter},
      {"void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8>, true>(Flash_fwd_mla_params)", "flashmla", "external", P::kMain},
      {"void flash::flash_fwd_splitkv_mla_combine_kernel<cutlass::bfloat16_t, float, 512, 16>(Flash_fwd_mla_params)", "flashmla", "external", P::kAfter},
      {"void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaMlaKernelTmaWarpspecialized<Shape, bf16, float>>(Params)", "cutlass_mla", "external", P::kMain},
      {"void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaMlaReductionKernel<bf16, float>>(Params)", "cutlass_mla", "external", P::kAfter},
      // FlashAttention 2/3/4
      {"void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, false>(Flash_fwd_params)", "flash_attn", "flash", P::kMain},
      {"kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor", "flash_attn_4", "flash", P::kMain},
      // aiter / CK-tile / SageAttention
      {"aiter::fmha_fwd_hd128_bf16_rtz", "aiter", "flash", P::kMain},
      {"aiter::fmha_fwd_hd128_bf16_causal_rtna_group", "aiter", "flash", P::kMain},
      {"void ck_tile::kentry<2, ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<ck_tile::BlockFmhaBatchPrefillPipelineQRKSVSAsync<P>, E>>(Kargs)", "ck_fmha", "external", P::kMain},
      {"void ck_tile::kentry<1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<P>, E>>(Kargs)", "ck_fmha", "flash", P::kMain},
      {"void ck_tile::kentry<1, ck_tile::FmhaFwdSplitKVCombineKernel<P, E>>(Kargs)", "ck_fmha", "flash", P::kAfter},
      {"sage_quant_kernel", "aiter_sage", "external", P::kBefore},
      {"sage_fwd", "aiter_sage", "external", P::kMain},
      {"void qk_int_sv_f8_attn_kernel<128u, 64u, 32u, 64u, 128u, (DataType)1>(signed char*)", "sageattention", "external", P::kMain},
      {"void QuantInt8Kernel<64u, 128u, 1u, false, false, __nv_bfloat16>(__nv_bfloat16*)", "sageattention", "external", P::kBefore},
      {"quant_per_block_int8_kernel", "sageattention", "external", P::kBefore},
      // TensorRT-LLM, SGLang Triton, xFormers, Transformer Engine
      {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", "trtllm_fmha", "external", P::kMain},
      {"void kernel_mha<false>(unsigned int, float, IOHead*)", "trtllm_fmha", "external", P::kMain},
      {"void tensorrt_llm::kernels::mmha::masked_multihead_attention_kernel<__nv_bfloat16, 128>(Params)", "trtllm_mmha", "external", P::kMain},
      {"_fwd_kernel_stage1", "sglang_triton", "external", P::kMain},
      {"_fwd_grouped_kernel_stage1", "sglang_triton", "external", P::kMain},
      {"_fwd_kernel_stage2", "sglang_triton", "external", P::kAfter},
      {"_fwd_kernel", "sglang_triton", "external", P::kMain},
      {"_fwd_kernel_splitK", "xformers", "external", P::kMain},
      {"_splitK_reduce", "xformers", "external", P::kAfter},
      {"void transformer_engine::fused_attn::cu_seqlens_to_offsets(long, int*)", "transformer_engine", "cudnn", P::kBefore},
  };
  for (const Expected& e : cases) {
    const KernelPattern& p = classified(e.name);
    EXPECT_EQ(p.kind, KernelKind::kFusedAttention) << e.name;
    EXPECT_EQ(p.library, e.library) << e.name;
    EXPECT_EQ(p.backend, e.backend) << e.name;
    EXPECT_EQ(p.part, e.part) << e.name;
  }
}

TEST(KernelCatalog, CkTileBatchPrefillIsNotTakenForFlashInfersPrefillWith) {
  const KernelPattern& p = classified(
      "void ck_tile::kentry<2, ck_tile::FmhaBatchPrefillWithPagedKVCacheKernel<ck_tile::BlockFmhaBatchPrefillPipelineQRKSVSAsync<"
      "ck_tile::BlockFmhaBatchPrefillPipelineProblem<__hip_bfloat16>>, E>>(Kargs)");
  EXPECT_EQ(p.library, "ck_fmha");
  EXPECT_EQ(p.vendor, "amd");
}

TEST(KernelCatalog, AnEntryContainingAnotherEntrysPatternOutranksIt) {
  // The general precedence rule behind the CK-tile / FlashInfer and FlashMLA / FA2 cases:
  // whenever one pattern contains another, any name the longer one matches also matches the
  // shorter one, so the longer (more specific) entry must win.
  for (const KernelPattern& a : kernel_catalog())
    for (const KernelPattern& b : kernel_catalog()) {
      if (&a == &b || b.match == MatchKind::kExact || a.pattern.size() <= b.pattern.size()) continue;
      const bool implied = b.match == MatchKind::kContains ? a.pattern.find(b.pattern) != std::string_view::npos
                                                           : a.match != MatchKind::kContains && a.pattern.starts_with(b.pattern);
      if (implied) {
        EXPECT_GT(a.priority, b.priority) << a.pattern << " vs " << b.pattern;
      }
    }
}

TEST(KernelCatalog, KernelsNextToAttentionAreExplicitlyNotAttention) {
  // KV-cache writes (the vLLM fixture's kernel), RoPE, Inductor prologues named after the
  // aiter op they surround (xDiT fixture), GEMMs named cutlass.
  EXPECT_EQ(classified("void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>(__hip_bfloat16 const*)").kind,
            KernelKind::kKvCacheWrite);
  EXPECT_EQ(classified("void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*)").kind,
            KernelKind::kKvCacheWrite);
  EXPECT_EQ(classified("void sglang::store_kvcache<512>(void*)").kind, KernelKind::kKvCacheWrite);
  EXPECT_EQ(classified("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)").kind, KernelKind::kRotaryEmbedding);
  EXPECT_EQ(classified("void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<true, 128u, 8u>(__nv_bfloat16*)").kind,
            KernelKind::kRotaryEmbedding);
  EXPECT_EQ(classified("triton_poi_fused__to_copy_add_cat_fmha_v3_fwd_mul_neg_stack_unbind_unsqueeze_view_13").kind,
            KernelKind::kElementwise);
  EXPECT_EQ(classified("triton_red_fused__to_copy_add_addmm_as_strided_fmha_v3_fwd_mean_mul_neg_pow_rsqrt_stack_unbind_unsqueeze_view_24").kind,
            KernelKind::kOther);
  EXPECT_EQ(classified("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn_align8").kind, KernelKind::kGemm);
  EXPECT_EQ(classified("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(Params)").kind,
            KernelKind::kGemm);
}

TEST(AttentionVocabulary, WordsAreMatchedWholeAcrossCaseAndDigitChanges) {
  EXPECT_TRUE(has_attention_vocabulary("my_attn_fwd_kernel"));
  EXPECT_TRUE(has_attention_vocabulary("BatchMLAPagedAttentionKernel"));
  EXPECT_TRUE(has_attention_vocabulary("fused_mhaKernel"));
  EXPECT_TRUE(has_attention_vocabulary("sage2_fwd"));
  EXPECT_TRUE(has_attention_vocabulary("flashAttnFwd"));
  EXPECT_FALSE(has_attention_vocabulary("flashlight_render_kernel"));
  EXPECT_FALSE(has_attention_vocabulary("normalize_kernel"));
  EXPECT_FALSE(has_attention_vocabulary("vectorized_layer_norm_kernel"));
  EXPECT_FALSE(has_attention_vocabulary("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT96x96x128_MI16x16x1"));
  EXPECT_FALSE(has_attention_vocabulary("mlaunch_helper"));  // "mla" inside a word is not the word
}

TEST(AttentionVocabulary, UnknownAttentionLikeKernelsAreExternalWithLibraryUnknown) {
  const KernelPattern* p = classify_kernel("void mylib::paged_attn_decode_kernel<128>(float*)");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(is_unrecognised(p));
  EXPECT_EQ(p->kind, KernelKind::kFusedAttention);
  EXPECT_EQ(p->backend, "external");
  EXPECT_EQ(p->library, "unknown");
  // A catch-all GEMM entry does not hide an attention kernel built with CUTLASS...
  EXPECT_TRUE(is_unrecognised(classify_kernel("void cutlass::device_kernel<cutlass::fmha::kernel::Sm100FmhaFwdKernelTmaWarpspecialized<S>>(P)")));
  // ...but a known entry wins over the vocabulary, and a known non-attention op is not unknown.
  EXPECT_FALSE(is_unrecognised(classify_kernel("void vllm::reshape_and_cache_flash_kernel<float>(float*)")));
  EXPECT_FALSE(is_unrecognised_attention_op("_C_cache_ops::reshape_and_cache_flash"));
  EXPECT_FALSE(is_unrecognised_attention_op("aten::scaled_dot_product_attention"));
  EXPECT_FALSE(is_unrecognised_attention_op("autograd::engine::evaluate_function: ScaledDotProductCudnnAttentionBackward0"));
  EXPECT_TRUE(is_unrecognised_attention_op("mylib::ragged_attention_forward"));
}

TEST(OpCatalog, ServingLibraryOpsAreAttentionOps) {
  EXPECT_EQ(classify_attention_op("aiter::fmha_v3_fwd")->backend, "flash");  // dense FlashAttention, as CK fmha
  EXPECT_EQ(classify_attention_op("aiter::mha_batch_prefill")->backend, "external");
  EXPECT_EQ(classify_attention_op("aiter::mha_bwd")->direction, "backward");
  EXPECT_NE(classify_attention_op("sglang_profiler::attention_paged_attention_ragged_100"), nullptr);
  EXPECT_EQ(classify_attention_op("_vllm_fa2_C::varlen_fwd")->backend, "flash");
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

TEST(Flops, CausalSelfAttentionCountsTheDiagonalAndFusedBackwardCostsTwoAndAHalfTimes) {
  Call c;
  c.shape = {2, 8, 8, 256, 256, 64, 64, "bf16"};
  c.direction = "forward";
  c.backend = "flash";
  // 2 * B * Hq * (D + Dv) per (q, k) pair
  const double per_pair = 2.0 * 2 * 8 * (64 + 64);
  EXPECT_DOUBLE_EQ(attention_flops(c), per_pair * 256 * 256);
  c.causal = true;
  EXPECT_DOUBLE_EQ(attention_flops(c), per_pair * (256 * 257 / 2));  // rows see 1..256 keys
  c.direction = "backward";
  EXPECT_DOUBLE_EQ(attention_flops(c), per_pair * (256 * 257 / 2) * 2.5);
  c.shape.Sq = 1;  // causal decode (bottom-right, flash): the one query sees every key
  c.direction = "forward";
  c.op = "flash_attn::_flash_attn_forward";
  EXPECT_DOUBLE_EQ(attention_flops(c), per_pair * 1 * 256);
}

TEST(Flops, UnfusedBackwardCostsTwiceItsForwardAndMathCausalExecutesTheWholeMatrix) {
  Call c;
  c.shape = {1, 4, 4, 128, 128, 32, 32, "fp16"};
  c.backend = "math";
  c.op = "aten::scaled_dot_product_attention";
  c.causal = true;
  c.direction = "forward";
  const double per_pair = 2.0 * 1 * 4 * (32 + 32);
  CallFlops f = count_call_flops(c);
  EXPECT_DOUBLE_EQ(f.useful, per_pair * (128 * 129 / 2));
  EXPECT_DOUBLE_EQ(f.executed, per_pair * 128 * 128);  // math builds the full S x S scores
  EXPECT_EQ(f.granularity, "full");
  c.direction = "backward";
  f = count_call_flops(c);
  EXPECT_DOUBLE_EQ(f.executed, per_pair * 128 * 128 * 2.0);
  EXPECT_DOUBLE_EQ(f.useful, per_pair * (128 * 129 / 2) * 2.0);
}

TEST(Flops, ChunkedCausalPairsFollowEachBackendsAlignment) {
  // 512 queries against 2048 keys. Bottom-right: row i sees 1536 + i + 1 keys;
  // top-left: row i sees i + 1 keys.
  const double bottom_right = 512.0 * 1536 + 512.0 * 513 / 2;  // 917760
  const double top_left = 512.0 * 513 / 2;                     // 131328
  EXPECT_DOUBLE_EQ(unmasked_pairs(512, 2048, CausalAlignment::kBottomRight, 0), bottom_right);
  EXPECT_DOUBLE_EQ(unmasked_pairs(512, 2048, CausalAlignment::kTopLeft, 0), top_left);
  EXPECT_NEAR(512.0 * 2048 / bottom_right, 1.1425, 1e-4);
  EXPECT_NEAR(512.0 * 2048 / top_left, 7.98, 1e-2);
  // More queries than keys, bottom-right: the first Sq - Skv rows see nothing.
  EXPECT_DOUBLE_EQ(unmasked_pairs(6, 4, CausalAlignment::kBottomRight, 0), 1 + 2 + 3 + 4);
  // Top-left with more queries than keys: rows past Skv see every key.
  EXPECT_DOUBLE_EQ(unmasked_pairs(6, 4, CausalAlignment::kTopLeft, 0), 1 + 2 + 3 + 4 + 4 + 4);
  // Sliding window of 3 on a square 5 x 5: rows see 1, 2, 3, 3, 3 keys.
  EXPECT_DOUBLE_EQ(unmasked_pairs(5, 5, CausalAlignment::kBottomRight, 3), 1 + 2 + 3 + 3 + 3);

  Call sdpa;  // SDPA's is_causal (efficient kernel) is top-left
  sdpa.shape = {1, 2, 2, 512, 2048, 64, 64, "bf16"};
  sdpa.backend = "efficient";
  sdpa.op = "aten::scaled_dot_product_attention";
  sdpa.causal = true;
  sdpa.direction = "forward";
  EXPECT_EQ(causal_alignment_of(sdpa), CausalAlignment::kTopLeft);
  EXPECT_DOUBLE_EQ(count_call_flops(sdpa).useful, 2.0 * 2 * 128 * top_left);
  Call fa = sdpa;  // flash_attn >= 2.1 is bottom-right
  fa.op = "flash_attn::_flash_attn_forward";
  fa.backend = "flash";
  fa.library = "flash_attn";
  EXPECT_EQ(causal_alignment_of(fa), CausalAlignment::kBottomRight);
  EXPECT_DOUBLE_EQ(count_call_flops(fa).useful, 2.0 * 2 * 128 * bottom_right);
}

TEST(Flops, FusedCausalKernelsExecuteWholeTilesWhereTheTileIsKnown) {
  // 256 x 256 causal, 128 x 128 tiles: the upper-right tile is skipped, the two diagonal
  // tiles run whole: 3 of 4 tiles.
  EXPECT_DOUBLE_EQ(tile_pairs(256, 256, CausalAlignment::kBottomRight, 0, 128, 128), 3.0 * 128 * 128);
  // 200 x 200 with 128 tiles: rows 0-127 run key tile 0 (128 keys), rows 128-199 run both
  // tiles, the second clipped at 200 keys.
  EXPECT_DOUBLE_EQ(tile_pairs(200, 200, CausalAlignment::kBottomRight, 0, 128, 128), 128.0 * 128 + 72.0 * 200);
  Call c;
  c.shape = {1, 1, 1, 256, 256, 64, 64, "bf16"};
  c.backend = "flash";
  c.op = "flash_attn::_flash_attn_forward";
  c.causal = true;
  c.direction = "forward";
  c.kernel_template.emplace();
  c.kernel_template->tile_m = 128;
  c.kernel_template->tile_n = 128;
  const CallFlops f = count_call_flops(c);
  EXPECT_EQ(f.granularity, "tile");
  EXPECT_DOUBLE_EQ(f.executed, 2.0 * 128 * 3 * 128 * 128);
  EXPECT_DOUBLE_EQ(f.useful, 2.0 * 128 * (256 * 257 / 2));
}

TEST(Flops, PackedCallsAreExactPerSequenceAndABoundWithoutLengths) {
  Call c;
  c.backend = "flash";
  c.op = "flash_attn::_flash_attn_varlen_forward";
  c.direction = "forward";
  c.causal = true;
  c.shape.Hq = c.shape.Hkv = 8;
  c.shape.D = c.shape.Dv = 64;
  c.shape.B = 4;
  c.shape.tokens = 100 + 200 + 300 + 400;
  c.shape.Sq = c.shape.Skv = 400;
  const double per_pair = 2.0 * 8 * 128;
  CallFlops bound = count_call_flops(c);  // only the longest sequence: every token sees 400 keys
  EXPECT_TRUE(bound.upper_bound);
  EXPECT_DOUBLE_EQ(bound.useful, per_pair * 1000 * 400);
  c.shape.seqlens_q = c.shape.seqlens_k = {100, 200, 300, 400};
  const CallFlops exact = count_call_flops(c);
  EXPECT_FALSE(exact.upper_bound);
  EXPECT_DOUBLE_EQ(exact.useful, per_pair * (100.0 * 101 / 2 + 200.0 * 201 / 2 + 300.0 * 301 / 2 + 400.0 * 401 / 2));
  EXPECT_NEAR(bound.useful / exact.useful, 2.65, 0.01);
}

}  // namespace
}  // namespace attnprof::test

namespace attnprof::test {
namespace {

TEST(KernelCatalog, SchedulerAndKvIndexKernelsOfAttentionLibrariesAreOverheadNotAttention) {
  for (const char* name : {"void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int*)",
                           "create_flashinfer_kv_indices_triton", "create_flashmla_kv_indices_triton",
                           "void flash::get_mla_metadata_kernel<64>(flash::GetMlaMetadataParams)"}) {
    const KernelPattern* p = classify_kernel(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->kind, KernelKind::kAttentionOverhead) << name;
  }
}

TEST(KernelCatalog, Fa3KernelsWrappedInCutlassDeviceKernelKeepTheirDirection) {
  // hopper/flash_bwd_launch_template.h launches its kernel classes through cutlass::device_kernel.
  const KernelPattern* bwd = classify_kernel("void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwdSm90<2, cute::tuple<cute::C<64>, cute::C<128>, cute::C<192>>>>>(flash::FlashAttnBwd<>::Params)");
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->direction, "backward");
  EXPECT_EQ(bwd->part, KernelPart::kMain);
  EXPECT_EQ(bwd->library, "flash_attn_3");
  const KernelPattern* post = classify_kernel("void cutlass::device_kernel<flash::FlashAttnBwdPostprocessConvertdQ<cute::tuple<cute::C<64>, cute::C<192>>, 192>>(int)");
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->direction, "backward");
  EXPECT_EQ(post->part, KernelPart::kAfter);
  const KernelPattern* fwd = classify_kernel("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<128>, cute::C<112>, cute::C<192>>>>>>(int)");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->direction, "forward");
  EXPECT_EQ(fwd->part, KernelPart::kMain);
}

}  // namespace
}  // namespace attnprof::test
