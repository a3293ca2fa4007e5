// Kernel names read like the library's own, and the facts their templates spell, each family
// pinned on a name spelled as the library instantiates it (expected facts written by hand from
// the library's template parameter list, cited per test) or as a fixture recorded it.
#include <gtest/gtest.h>

#include "attnprof/attention.h"

namespace attnprof::test {
namespace {

TEST(KernelTemplate, WrappersAreNamedByTheKernelTheyWrap) {
  EXPECT_EQ(kernel_display_name("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
                                "flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::_1, cute::_1, cute::_1>, "
                                "cute::tuple<cute::C<128>, cute::C<112>, cute::C<192>>, 192, cutlass::bfloat16_t>>>>"
                                "(flash::FlashAttnFwdSm90<>::Params)"),
            "flash::FlashAttnFwdSm90");
  EXPECT_EQ(kernel_display_name("void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, "
                                "cute::C<128>>, 7, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90>>(int)"),
            "flash::FlashAttnFwdCombine");
  EXPECT_EQ(kernel_display_name("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, "
                                "128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, "
                                "128, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>"
                                "(pytorch_flash::Flash_fwd_params)"),
            "pytorch_flash::flash_fwd_kernel");
  EXPECT_EQ(kernel_display_name("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
                                "cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
            "fmha_cutlassF_bf16_aligned_64x64_rf_sm80");
  // A GEMM under cutlass::device_kernel stays a GEMM's name, and spells no attention facts.
  const char* gemm = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
                     "cutlass::gemm::collective::CollectiveMma<cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>>>>(int)";
  EXPECT_EQ(kernel_display_name(gemm), "cutlass::gemm::kernel::GemmUniversal");
  EXPECT_FALSE(read_kernel_template(gemm).has_value());
}

TEST(KernelTemplate, PytorchFlashSpellsHeadDimTileAndCausalInItsTraits) {
  // The H100 Qwen fixture's kernel. kernel_traits.h: Flash_fwd_kernel_traits<kHeadDim, kBlockM,
  // kBlockN, kNWarps, ...>; flash_fwd_kernel.h: flash_fwd_kernel<Kernel_traits, Is_dropout, Is_causal, ...>.
  const auto t = read_kernel_template(
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
      "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
      "false, false, false, true, false>(pytorch_flash::Flash_fwd_params)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "pytorch_flash::flash_fwd_kernel");
  EXPECT_EQ(t->library, "pytorch_flash");
  EXPECT_EQ(t->head_dim, 64);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 128);
  EXPECT_EQ(t->dtype, "bf16");
  EXPECT_EQ(t->causal, 1);
  EXPECT_EQ(t->split_kv, 0);
}

TEST(KernelTemplate, Fa2SplitKvPutsCausalRightAfterTheTraits) {
  // flash_fwd_kernel.h: flash_fwd_splitkv_kernel<Kernel_traits, Is_causal, Is_local, Has_alibi, ...>.
  const auto t = read_kernel_template(
      "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::half_t, "
      "Flash_kernel_traits<128, 64, 128, 4, cutlass::half_t> >, false, false, false, true, true, false, true, false>"
      "(Flash_fwd_params)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->tile_m, 64);
  EXPECT_EQ(t->split_kv, 1);
  EXPECT_EQ(t->causal, 0);
  EXPECT_EQ(t->dtype, "fp16");
}

TEST(KernelTemplate, Fa3ReadsItsTileShapeMnk) {
  // hopper/flash_fwd_launch_template.h: TileShape_MNK = cute::Shape<Int<kBlockM>, Int<kBlockN>,
  // Int<kHeadDim>>, printed as cute::tuple<cute::C<M>, cute::C<N>, cute::C<D>>; a 192 head dim.
  const auto t = read_kernel_template(
      "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<"
      "2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cute::tuple<cute::C<128>, cute::C<112>, cute::C<192>>, 128, "
      "cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false>>>>(int)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "flash::FlashAttnFwdSm90");
  EXPECT_EQ(t->library, "flash_attn_3");
  EXPECT_EQ(t->head_dim, 192);
  EXPECT_EQ(t->head_dim_v, 128);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 112);
  EXPECT_EQ(t->dtype, "bf16");
}

TEST(KernelTemplate, VllmPagedAttentionSpellsItsHeadSize) {
  // csrc/attention/attention_kernels.cuh: paged_attention_v2_kernel<scalar_t, cache_t, HEAD_SIZE,
  // BLOCK_SIZE, NUM_THREADS, KV_DTYPE, IS_BLOCK_SPARSE, PARTITION_SIZE>.
  const auto t = read_kernel_template(
      "void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, "
      "(vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, unsigned short*)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->paged, 1);
  EXPECT_EQ(t->split_kv, 1);
}

TEST(KernelTemplate, GeneratedNamesSpellTheirFactsInWords) {
  // The B200 vLLM fixture's TensorRT-LLM kernel: QKV in e4m3, bf16 output, head dim 64, paged KV,
  // causal, variable sequence lengths, 128 x 128 tiles.
  const auto t = read_kernel_template("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->library, "trtllm_fmha");
  EXPECT_EQ(t->head_dim, 64);
  EXPECT_EQ(t->dtype, "fp8_e4m3");
  EXPECT_EQ(t->paged, 1);
  EXPECT_EQ(t->causal, 1);
  EXPECT_EQ(t->varlen, 1);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 128);
  // The Flux fixture's aiter kernel: head dim 128, bf16.
  const auto a = read_kernel_template("aiter::fmha_fwd_hd128_bf16_rtz");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->head_dim, 128);
  EXPECT_EQ(a->dtype, "bf16");
  // A name that spells nothing gets nothing invented.
  EXPECT_FALSE(read_kernel_template("attn_fwd").has_value());
  EXPECT_FALSE(read_kernel_template("kernel_unified_attention_2d").has_value());
}

TEST(KernelTemplate, VllmRocmLl4miSpellsHeadSizeAfterBlockSize) {
  // csrc/rocm/attention.cu: paged_attention_ll4mi_QKV_mfma16_kernel<scalar_t, cache_t, KV_DTYPE, OUTT,
  // BLOCK_SIZE, HEAD_SIZE, NUM_THREADS, ALIBI_ENABLED, GQA_RATIO>; keys cut into 256-token partitions.
  const auto t = read_kernel_template(
      "void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0, "
      "__hip_bfloat16, 16, 128, 256, false, 8>(__hip_bfloat16 const*, __hip_bfloat16 const*, int, float)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "paged_attention_ll4mi_QKV_mfma16_kernel");
  EXPECT_EQ(t->library, "vllm_rocm");
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->dtype, "bf16");
  EXPECT_EQ(t->paged, 1);
  EXPECT_EQ(t->split_kv, 1);
}

TEST(KernelTemplate, CutlassFmhaReadsItsTileNotItsHeadDimBound) {
  // The H200 force_efficient_attention fixture's kernel. kernel_forward.h: AttentionKernel<scalar_t,
  // ArchTag, isAligned, kQueriesPerBlock, kKeysPerBlock, kMaxK, ...>; kMaxK (128) bounds the head dim.
  const auto f = read_kernel_template(
      "fmha_cutlassF_bf16_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
      "cutlass::arch::Sm80, true, 64, 128, 128, true, true>::Params)");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "fmha_cutlassF_bf16_aligned_64x128_rf_sm80");
  EXPECT_EQ(f->library, "cutlass_fmha");
  EXPECT_EQ(f->tile_m, 64);
  EXPECT_EQ(f->tile_n, 128);
  EXPECT_EQ(f->head_dim, 0);
  EXPECT_EQ(f->dtype, "bf16");
  // The fp32 fixture's spelling.
  const auto f32 = read_kernel_template(
      "fmha_cutlassF_f32_aligned_64x128_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, "
      "true, 64, 128, 128, true, true>::Params)");
  ASSERT_TRUE(f32.has_value());
  EXPECT_EQ(f32->dtype, "fp32");
  // kernel_backward.h: AttentionBackwardKernel<ArchTag, scalar_t, kIsAligned, kApplyDropout, kPreload,
  // kBlockSizeI, kBlockSizeJ, kMaxK, kKeysQueriesAlignedToBlockSize>.
  const auto b = read_kernel_template(
      "fmha_cutlassB_f16_aligned_128x64_k128_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, "
      "cutlass::half_t, true, false, true, 128, 64, 128, false>::Params)");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->tile_m, 128);
  EXPECT_EQ(b->tile_n, 64);
  EXPECT_EQ(b->dtype, "fp16");
}

TEST(KernelTemplate, CkTileReadsTheQkHeadDimFromItsBlockTile) {
  // ck_tile/ops/fmha/pipeline/tile_fmha_shape.hpp: TileFmhaShape<sequence<kM0, kN0, kK0, kN1, kK1,
  // kQKHeaddim>, ...>, under the kentry wrapper (ck_tile/host/kernel_launch.hpp).
  const char* name =
      "void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<"
      "ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t, ck_tile::bf16_t, float, float, "
      "ck_tile::bf16_t, ck_tile::TileFmhaShape<ck_tile::sequence<128, 128, 32, 128, 32, 128>, "
      "ck_tile::sequence<4, 1, 1>, ck_tile::sequence<32, 32, 16>, ck_tile::sequence<4, 1, 1>, "
      "ck_tile::sequence<32, 32, 16>, true>, false>>, ck_tile::Default2DEpilogue<float, ck_tile::bf16_t>>>"
      "(ck_tile::FmhaFwdKernel<>::Kargs)";
  EXPECT_EQ(kernel_display_name(name), "ck_tile::FmhaFwdKernel");
  const auto t = read_kernel_template(name);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->library, "ck_fmha");
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 128);
  EXPECT_EQ(t->dtype, "bf16");
}

TEST(KernelTemplate, FlashInferDecodeHeadDimIsBdxTimesVecSize) {
  // include/flashinfer/attention/decode.cuh: BatchDecodeWithPagedKVCacheKernel<POS_ENCODING_MODE,
  // num_stages_smem, tile_size_per_bdx, vec_size, bdx, bdy, bdz, AttentionVariant, Params>;
  // head_dim = bdx * vec_size (8 x 16 = 128).
  const auto t = read_kernel_template(
      "void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 1u, 8u, 16u, 1u, 8u, "
      "flashinfer::DefaultAttention<false, false, false, false>, flashinfer::BatchDecodeParams<__nv_bfloat16, "
      "__nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "flashinfer::BatchDecodeWithPagedKVCacheKernel");
  EXPECT_EQ(t->library, "flashinfer");
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->paged, 1);
  EXPECT_EQ(t->dtype, "bf16");
}

TEST(KernelTemplate, FlashInferPrefillReadsItsKernelTraits) {
  // include/flashinfer/attention/prefill.cuh: KernelTraits<MASK_MODE, CTA_TILE_Q, NUM_MMA_Q, NUM_MMA_KV,
  // NUM_MMA_D_QK, NUM_MMA_D_VO, NUM_WARPS_Q, NUM_WARPS_KV, ...>: head dims 8 x 16 = 128, key tile
  // NUM_MMA_KV x NUM_WARPS_KV x 16 = 4 x 1 x 16 = 64; mask.cuh: MaskMode 1 is kCausal.
  const auto t = read_kernel_template(
      "void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, "
      "2u, 4u, 8u, 8u, 4u, 1u, (flashinfer::PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
      "int, flashinfer::DefaultAttention<false, false, false, false> >, flashinfer::BatchPrefillRaggedParams<"
      "__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchPrefillRaggedParams<__nv_bfloat16, "
      "__nv_bfloat16, __nv_bfloat16, int>)");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->head_dim_v, 128);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 64);
  EXPECT_EQ(t->causal, 1);
  EXPECT_EQ(t->varlen, 1);
  EXPECT_EQ(t->paged, -1);
}

TEST(KernelTemplate, CuteDslKernelsAreNamedByTheirClassAndReadTheirReadablePrefix) {
  // FlashAttention 4 (flash_attn/cute/flash_fwd_sm100.py) as the CuTe DSL names it: module path
  // without dots, the class, then the argument layouts; nothing in it spells the head dim.
  const char* plain =
      "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor0000o11101213_"
      "tensor0000o11101213_tensor0000o10111213_tensor0000o11101213_None_None_None_Non_0";
  EXPECT_EQ(kernel_display_name(plain), "FlashAttentionForwardSm100");
  const auto p = read_kernel_template(plain);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->library, "flash_attn_4");
  EXPECT_EQ(p->head_dim, 0);
  // The readable prefix of Dao-AILab/flash-attention#2564.
  const auto t = read_kernel_template(
      "flash_fwd_sm100_bf16_head_dim128_tile128x128_threads384_causal_pv_mma_rs_intra_wg_overlap_"
      "kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor0000o11101213_0");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->name, "FlashAttentionForwardSm100");
  EXPECT_EQ(t->head_dim, 128);
  EXPECT_EQ(t->tile_m, 128);
  EXPECT_EQ(t->tile_n, 128);
  EXPECT_EQ(t->causal, 1);
  EXPECT_EQ(t->dtype, "bf16");
}

TEST(KernelTemplate, AKernelOnlyCallTakesTheHeadDimItsKernelSpellsButRecordedDimsWin) {
  Call call;
  call.kernels.push_back({"void cutlass::device_kernel<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, "
                          "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cute::tuple<cute::C<128>, cute::C<112>, "
                          "cute::C<192>>, 128, cutlass::bfloat16_t>>>(int)",
                          "fused", 0, 10, 7, 1});
  apply_kernel_template(call);
  EXPECT_EQ(call.shape.D, 192);
  EXPECT_EQ(call.shape.dtype, "bf16");
  ASSERT_TRUE(call.kernel_template.has_value());
  Call recorded = call;
  recorded.kernel_template.reset();
  recorded.shape.D = 128;
  apply_kernel_template(recorded);
  EXPECT_EQ(recorded.shape.D, 128);
}

}  // namespace
}  // namespace attnprof::test
