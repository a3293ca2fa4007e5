// The kernel catalog: every GPU kernel name attnprof recognises, in ONE table.
// Sources: the fixtures under ../shared/fixtures and the kernel names collected in
// ../shared/reference/sdpa-backend-rules.md (section 2) and kineto-trace-format-and-peers.md
// (section 6). docs/backends.md renders this table for users; keep them in step.
//
// Several patterns can match one name (e.g. "void pytorch_flash::flash_fwd_kernel" contains
// "flash::flash_fwd" of the standalone flash-attn package, Inductor's
// "triton_poi_fused__scaled_dot_product_flash_attention_add" contains an attention op name).
// The entry with the highest priority wins; ties are a bug caught by the catalog tests.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "attnprof/attention.h"

namespace attnprof {
namespace {

using K = KernelKind;
using M = MatchKind;
using P = KernelPart;

constexpr std::string_view kNvidia = "nvidia";
constexpr std::string_view kAmd = "amd";
constexpr std::string_view kAny = "any";
constexpr std::string_view kFwd = direction::kForward;
constexpr std::string_view kBwd = direction::kBackward;
constexpr std::string_view kDecode = phase::kDecode;
constexpr std::string_view kPrefill = phase::kPrefill;

// clang-format off
// Precedence: an entry whose pattern contains another entry's pattern ranks above it (tested),
// so the more specific name wins whatever the table order: CK-tile's
// "FmhaBatchPrefillWithPagedKVCacheKernel" (40) over FlashInfer's "BatchPrefillWith" (30),
// FlashMLA's "flash::flash_fwd_splitkv_mla_kernel" (40) over FA2's "flash::flash_fwd" (20).
constexpr KernelPattern kCatalog[] = {
  // ---- fused attention: PyTorch's own backends ---------------------------------------
  {"pytorch_flash::flash_fwd_splitkv_combine", M::kContains, 40, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kFwd, P::kAfter},
  {"pytorch_flash::flash_fwd",                 M::kContains, 30, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kFwd, P::kMain},
  {"pytorch_flash::flash_bwd_dq_dk_dv",        M::kContains, 40, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kBwd, P::kMain},
  {"pytorch_flash::flash_bwd",                 M::kContains, 30, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kBwd, P::kAfter},
  {"fmha_cutlassF",                            M::kContains, 30, K::kFusedAttention, backend::kEfficient, "cutlass_fmha", kNvidia, kFwd, P::kMain},
  {"fmha_cutlassB",                            M::kContains, 30, K::kFusedAttention, backend::kEfficient, "cutlass_fmha", kNvidia, kBwd, P::kMain},
  // cuDNN's SDPA graphs; Transformer Engine's fused attention (NVTE_F16_arbitrary_seqlen,
  // NVTE_FP8 sub-backends) runs the same cuDNN kernels.
  {"cudnn_generated_fort_native_sdpa",         M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, "", P::kMain},
  {"cudnn::fusion::compute_dot_do_o",          M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, kBwd, P::kBefore},
  {"cudnn::fusion::convert_dq_to_16bits",      M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, kBwd, P::kAfter},
  {"transformer_engine::fused_attn::",         M::kContains, 30, K::kFusedAttention, backend::kCudnn, "transformer_engine", kNvidia, "", P::kBefore},
  // ---- fused attention: FlashAttention packages (Dao-AILab; vllm-flash-attn builds the same kernels)
  {"FlashAttnFwdCombine",                      M::kContains, 40, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, P::kAfter},
  {"FlashAttnFwdSm90",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, P::kMain},
  {"FlashAttnFwdSm80",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, P::kMain},
  {"FlashAttnBwdSm90",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, P::kMain},
  {"FlashAttnBwdSm80",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, P::kMain},
  // FA3 kernel classes named without their arch (flash::FlashAttnFwd<...>, flash::FlashAttnBwd<...>,
  // instantiated as template arguments of cutlass::device_kernel in builds of hopper/)
  {"flash::FlashAttnFwd",                      M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, P::kMain},
  {"flash::FlashAttnBwd",                      M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, P::kMain},
  {"FlashAttnBwdPreprocess",                   M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, P::kBefore},
  {"FlashAttnBwdPostprocess",                  M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, P::kAfter},
  {"FlashAttentionForwardSm",                  M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kFwd, P::kMain},
  {"FlashAttentionForwardCombine",             M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kFwd, P::kAfter},
  {"FlashAttentionBackwardSm",                 M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kBwd, P::kMain},
  {"FlashAttentionBackwardPreprocess",         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kBwd, P::kBefore},
  {"FlashAttentionBackwardPostprocess",        M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kBwd, P::kAfter},
  {"flash::flash_fwd_splitkv_combine",         M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kFwd, P::kAfter},
  {"flash::flash_fwd",                         M::kContains, 20, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kFwd, P::kMain},
  {"flash::flash_bwd_dq_dk_dv",                M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kBwd, P::kMain},
  {"flash::flash_bwd",                         M::kContains, 20, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kBwd, P::kAfter},
  // ---- fused attention: MLA (DeepSeek FlashMLA, CUTLASS MLA, FlashInfer MLA) ----------
  {"flash_fwd_splitkv_mla_kernel",             M::kContains, 40, K::kFusedAttention, backend::kExternal, "flashmla", kNvidia, kFwd, P::kMain, kDecode},
  {"mla_combine_kernel",                       M::kContains, 40, K::kFusedAttention, backend::kExternal, "flashmla", kNvidia, kFwd, P::kAfter},
  {"get_mla_metadata",                         M::kContains, 40, K::kAttentionOverhead, "", "flashmla", kNvidia, "", P::kMain},
  {"Sm100FmhaMlaKernel",                       M::kContains, 40, K::kFusedAttention, backend::kExternal, "cutlass_mla", kNvidia, kFwd, P::kMain, kDecode},
  {"Sm100FmhaMlaReductionKernel",              M::kContains, 40, K::kFusedAttention, backend::kExternal, "cutlass_mla", kNvidia, kFwd, P::kAfter},
  {"BatchMLAPagedAttentionKernel",             M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain},
  // ---- fused attention: ROCm (AOTriton serves flash and efficient; CK-tile fmha; aiter) -
  {"attn_fwd",                                 M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kFwd, P::kMain},
  {"attn_bwd",                                 M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, P::kMain},
  {"bwd_kernel_dk_dv",                         M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, P::kMain},
  {"bwd_kernel_dq",                            M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, P::kAfter},
  {"bwd_preprocess",                           M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, P::kBefore},
  {"ck_tile::FmhaFwd",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kFwd, P::kMain},
  {"FmhaFwdSplitKVCombineKernel",              M::kContains, 40, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kFwd, P::kAfter},
  {"FmhaFwdAppendKVKernel",                    M::kContains, 40, K::kKvCacheWrite,   "", "ck_fmha", kAmd, "", P::kMain},
  {"FmhaBatchPrefillWithPagedKVCacheKernel",   M::kContains, 40, K::kFusedAttention, backend::kExternal, "ck_fmha", kAmd, kFwd, P::kMain, kPrefill},
  {"ck_tile::FmhaBwd",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kBwd, P::kMain},
  {"FmhaBwdOGradDotOKernel",                   M::kContains, 40, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kBwd, P::kBefore},
  {"FmhaBwdConvertQGradKernel",                M::kContains, 40, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kBwd, P::kAfter},
  {"aiter::fmha_fwd_",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "aiter", kAmd, kFwd, P::kMain},
  {"aiter::fmha_bwd_",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "aiter", kAmd, kBwd, P::kMain},
  {"sage_quant",                               M::kPrefix,   30, K::kFusedAttention, backend::kExternal, "aiter_sage", kAmd, kFwd, P::kBefore},
  {"sage_fwd",                                 M::kPrefix,   30, K::kFusedAttention, backend::kExternal, "aiter_sage", kAmd, kFwd, P::kMain},
  // ---- fused attention: FlexAttention (Inductor Triton templates) ---------------------
  {"triton_tem_fused_flex_attention_backward", M::kContains, 40, K::kFusedAttention, backend::kFlex, "triton", kAny, kBwd, P::kMain},
  {"triton_tem_fused_flex_attention",          M::kContains, 30, K::kFusedAttention, backend::kFlex, "triton", kAny, kFwd, P::kMain},
  {"triton_tem_fused_flex_decoding",           M::kContains, 30, K::kFusedAttention, backend::kFlex, "triton", kAny, kFwd, P::kMain},
  // ---- fused attention: serving stacks ----------------------------------------------
  // TensorRT-LLM (also vLLM/FlashInfer on Blackwell: trtllm-gen fmhaSm100*)
  {"fmhaSm",                                   M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, P::kMain},
  {"fmha_v2_",                                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, P::kMain},
  {"xqa_kernel",                               M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, P::kMain, kDecode},
  {"kernel_mha",                               M::kPrefix,   30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, P::kMain, kDecode},
  {"masked_multihead_attention_kernel",        M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_mmha", kNvidia, kFwd, P::kMain, kDecode},
  // vLLM CUDA paged attention (also built for ROCm) and its ROCm ll4mi kernels
  {"paged_attention_v2_reduce",                M::kContains, 40, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, P::kAfter},
  {"paged_attention_v1_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, P::kMain, kDecode},
  {"paged_attention_v2_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, P::kMain, kDecode},
  {"paged_attention_ll4mi_QKV",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm_rocm", kAmd, kFwd, P::kMain, kDecode},
  {"paged_attention_ll4mi_reduce",             M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm_rocm", kAmd, kFwd, P::kAfter},
  {"merge_attn_states",                        M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, P::kAfter},
  // vLLM Triton attention
  {"kernel_unified_attention",                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm_triton", kAny, kFwd, P::kMain},
  {"reduce_segments",                          M::kExact,    30, K::kFusedAttention, backend::kExternal, "vllm_triton", kAny, kFwd, P::kAfter},
  {"kernel_paged_attention_2d",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm_triton", kAny, kFwd, P::kMain},
  // SGLang Triton decode / extend attention (vLLM's triton_decode_attention.py is a copy)
  {"_fwd_kernel_stage1",                       M::kExact,    30, K::kFusedAttention, backend::kExternal, "sglang_triton", kAny, kFwd, P::kMain, kDecode},
  {"_fwd_grouped_kernel_stage1",               M::kExact,    30, K::kFusedAttention, backend::kExternal, "sglang_triton", kAny, kFwd, P::kMain, kDecode},
  {"_fwd_kernel_stage2",                       M::kExact,    30, K::kFusedAttention, backend::kExternal, "sglang_triton", kAny, kFwd, P::kAfter},
  {"_fwd_kernel",                              M::kExact,    30, K::kFusedAttention, backend::kExternal, "sglang_triton", kAny, kFwd, P::kMain, kPrefill},
  // FlashInfer
  {"BatchPrefillWith",                         M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain, kPrefill},
  {"SinglePrefillWith",                        M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain, kPrefill},
  {"BatchDecodeWith",                          M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain, kDecode},
  {"SingleDecodeWith",                         M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain, kDecode},
  {"PODWithKVCacheTensorKernel",               M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kMain},
  {"MergeStates",                              M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, P::kAfter},
  // SageAttention (thu-ml): CUDA kernels; the Q/K quantisation runs before the attention
  {"qk_int_sv_f8_attn_kernel",                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kMain},
  {"qk_int_sv_f16_attn_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kMain},
  {"qk_int8_sv_f8_attn_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kMain},
  {"quant_per_block_int8_kernel",              M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kAny, kFwd, P::kBefore},
  {"QuantInt8Kernel",                          M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kBefore},
  {"MeanScaleKernel",                          M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kBefore},
  {"TransposePadPermuteKernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "sageattention", kNvidia, kFwd, P::kBefore},
  // xFormers Triton split-K decoding (its CUTLASS kernels are fmha_cutlassF/B above, its
  // ROCm kernels CK-tile's)
  {"_fwd_kernel_splitK",                       M::kContains, 30, K::kFusedAttention, backend::kExternal, "xformers", kAny, kFwd, P::kMain, kDecode},
  {"_splitK_reduce",                           M::kContains, 30, K::kFusedAttention, backend::kExternal, "xformers", kAny, kFwd, P::kAfter},
  // ---- next to attention, not attention: scheduler metadata, KV-index building (overhead) --
  // FA3's scheduler (hopper/flash_prepare_scheduler.cu: prepare_varlen_num_blocks_kernel, run by
  // get_scheduler_metadata); SGLang's KV-index building for FlashInfer
  // (python/sglang/srt/layers/attention/utils.py: create_flashinfer_kv_indices_triton, also its
  // create_flashmla_kv_indices_triton)
  {"prepare_varlen_num_blocks",                M::kContains, 45, K::kAttentionOverhead, "", "flash_attn_3", kNvidia, "", P::kMain},
  {"create_flashinfer_kv_indices",             M::kContains, 45, K::kAttentionOverhead, "", "sglang", kAny, "", P::kMain},
  {"create_flashmla_kv_indices",               M::kContains, 45, K::kAttentionOverhead, "", "sglang", kAny, "", P::kMain},
  // ---- next to attention, not attention: KV-cache writes and RoPE ---------------------
  {"reshape_and_cache",                        M::kContains, 45, K::kKvCacheWrite,   "", "vllm", kAny, "", P::kMain},
  {"concat_and_cache_mla",                     M::kContains, 45, K::kKvCacheWrite,   "", "vllm", kAny, "", P::kMain},
  {"store_kvcache",                            M::kContains, 45, K::kKvCacheWrite,   "", "sglang", kAny, "", P::kMain},
  {"applyBiasRopeUpdateKVCache",               M::kContains, 45, K::kKvCacheWrite,   "", "trtllm", kNvidia, "", P::kMain},
  {"rotary_embedding",                         M::kContains, 22, K::kRotaryEmbedding, "", "vllm", kAny, "", P::kMain},
  {"ApplyRotary",                              M::kContains, 22, K::kRotaryEmbedding, "", "flashinfer", kNvidia, "", P::kMain},
  {"rotary_kernel",                            M::kContains, 22, K::kRotaryEmbedding, "", "flash_attn", kAny, "", P::kMain},
  {"fused_rope",                               M::kContains, 22, K::kRotaryEmbedding, "", "transformer_engine", kNvidia, "", P::kMain},
  {"_triton_mrope",                            M::kContains, 22, K::kRotaryEmbedding, "", "sglang", kAny, "", P::kMain},
  // ---- Inductor-generated kernels carry op names in theirs: rank above attention ------
  {"triton_per_fused__softmax",                M::kPrefix,   60, K::kSoftmax,      "", "triton", kAny, "", P::kMain},
  {"triton_red_fused__softmax",                M::kPrefix,   60, K::kSoftmax,      "", "triton", kAny, "", P::kMain},
  {"triton_poi_",                              M::kPrefix,   50, K::kElementwise,  "", "triton", kAny, "", P::kMain},
  {"triton_per_",                              M::kPrefix,   50, K::kOther,        "", "triton", kAny, "", P::kMain},
  {"triton_red_",                              M::kPrefix,   50, K::kOther,        "", "triton", kAny, "", P::kMain},
  // ---- unfused components -----------------------------------------------------------
  {"softmax_warp_forward",                     M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kFwd, P::kMain},
  {"softmax_warp_backward",                    M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kBwd, P::kMain},
  {"cunn_SoftMaxForward",                      M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kFwd, P::kMain},
  {"cunn_SoftMaxBackward",                     M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kBwd, P::kMain},
  {"fused_dropout_kernel",                     M::kContains, 20, K::kDropout,      "", "aten", kAny, "", P::kMain},
  {"triu_tril_kernel",                         M::kContains, 20, K::kMaskBuild,    "", "aten", kAny, "", P::kMain},
  {"bmm_",                                     M::kPrefix,   12, K::kGemm,         "", "trtllm_gemm", kNvidia, "", P::kMain},
  {"nvjet_",                                   M::kPrefix,   12, K::kGemm,         "", "cublaslt", kNvidia, "", P::kMain},
  {"Cijk_",                                    M::kPrefix,   12, K::kGemm,         "", "hipblaslt", kAmd, "", P::kMain},
  // catch-alls (below kFallbackPriority): attention vocabulary overrides them
  {"cutlass",                                  M::kContains,  8, K::kGemm,         "", "cutlass", kAny, "", P::kMain},
  {"gemm",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", P::kMain},
  {"Gemm",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", P::kMain},
  {"gemv",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", P::kMain},
  {"elementwise_kernel",                       M::kContains,  4, K::kElementwise,  "", "aten", kAny, "", P::kMain},
};
// clang-format on

bool matches(const KernelPattern& p, std::string_view name) {
  switch (p.match) {
    case M::kExact: return name == p.pattern;
    case M::kPrefix: return name.starts_with(p.pattern);
    case M::kContains: return name.find(p.pattern) != std::string_view::npos;
  }
  return false;
}

}  // namespace

const char* kernel_kind_name(KernelKind kind) {
  switch (kind) {
    case K::kFusedAttention: return "fused_attention";
    case K::kGemm: return "gemm";
    case K::kSoftmax: return "softmax";
    case K::kDropout: return "dropout";
    case K::kMaskBuild: return "mask_build";
    case K::kElementwise: return "elementwise";
    case K::kKvCacheWrite: return "kv_cache_write";
    case K::kRotaryEmbedding: return "rotary_embedding";
    case K::kAttentionOverhead: return "attention_overhead";
    case K::kOther: return "other";
  }
  return "other";
}

std::span<const KernelPattern> kernel_catalog() { return kCatalog; }

namespace {
std::span<const KernelPattern> extra_kernel_rows;  // a test's rows (ScopedKernelRows); empty otherwise
}  // namespace

ScopedKernelRows::ScopedKernelRows(std::span<const KernelPattern> extra) : previous_(extra_kernel_rows) {
  extra_kernel_rows = extra;
}

ScopedKernelRows::~ScopedKernelRows() { extra_kernel_rows = previous_; }

namespace {

// Words that mark a name as attention (kernel and op names of the libraries in the catalog
// use them; docs/backends.md). Compared case-insensitively with whole words.
constexpr std::string_view kAttentionWords[] = {
    "attn",  "attention", "fmha",           "mha",       "mqa",           "gqa",        "flash",
    "sdpa",  "mla",       "sage",           "paged",     "xqa",           "mmha",       "multihead",
    "flashattn", "flashattention", "flashinfer", "flashmla", "sageattn", "sageattention", "pagedattention",
};

bool is_attention_word(std::string_view word) {
  auto same = [&](std::string_view v) {
    if (v.size() != word.size()) return false;
    for (size_t i = 0; i < v.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(word[i])) != v[i]) return false;
    return true;
  };
  return std::any_of(std::begin(kAttentionWords), std::end(kAttentionWords), same);
}

enum class CharClass { kSeparator, kLower, kUpper, kDigit };
CharClass char_class(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (std::islower(u)) return CharClass::kLower;
  if (std::isupper(u)) return CharClass::kUpper;
  if (std::isdigit(u)) return CharClass::kDigit;
  return CharClass::kSeparator;
}

// A word starts at i when the character class changes in a way that starts a word: after a
// separator, lower->upper ("flashAttn"), letter<->digit ("ll4mi", "Sm90"), and at the last
// capital of a run followed by a lower-case letter ("MLAPaged" -> "MLA" "Paged").
bool starts_word(std::string_view s, size_t i) {
  const CharClass here = char_class(s[i]);
  if (here == CharClass::kSeparator) return false;
  if (i == 0) return true;
  const CharClass before = char_class(s[i - 1]);
  if (before == CharClass::kSeparator) return true;
  if ((here == CharClass::kDigit) != (before == CharClass::kDigit)) return true;
  if (here == CharClass::kUpper && before == CharClass::kLower) return true;
  return here == CharClass::kUpper && before == CharClass::kUpper && i + 1 < s.size() &&
         char_class(s[i + 1]) == CharClass::kLower;
}

const KernelPattern kUnrecognised{"", M::kContains, 0, K::kFusedAttention, backend::kExternal, "unknown", kAny, "", P::kMain};

}  // namespace

bool has_attention_vocabulary(std::string_view name) {
  size_t begin = std::string_view::npos;
  for (size_t i = 0; i <= name.size(); ++i) {
    const bool ends = i == name.size() || char_class(name[i]) == CharClass::kSeparator || starts_word(name, i);
    if (ends && begin != std::string_view::npos) {
      if (is_attention_word(name.substr(begin, i - begin))) return true;
      begin = std::string_view::npos;
    }
    if (i < name.size() && starts_word(name, i)) begin = i;
  }
  return false;
}

const KernelPattern& unrecognised_attention_kernel() { return kUnrecognised; }
bool is_unrecognised(const KernelPattern* p) { return p == &kUnrecognised; }

namespace {

// The highest-priority row of `rows` matching the name; the first of them on a tie.
const KernelPattern* best_match(std::span<const KernelPattern> rows, std::string_view kernel_name,
                                const KernelPattern* best) {
  for (const KernelPattern& p : rows)
    if (matches(p, kernel_name) && (!best || p.priority > best->priority)) best = &p;
  return best;
}

}  // namespace

const KernelPattern* classify_kernel(std::string_view kernel_name, const CatalogExtension* extension) {
  // Parameter types name other libraries ("..., flashinfer::QuantizationSFLayout)"): match
  // the function and its template arguments only.
  kernel_name = kernel_function_name(kernel_name);
  const KernelPattern* best = best_match(extra_kernel_rows, kernel_name, best_match(kCatalog, kernel_name, nullptr));
  // The user's rows win ties with the built-in ones (docs/cost.md, "Kernels and ops of your own").
  const KernelPattern* user = extension ? best_match(extension->kernels, kernel_name, nullptr) : nullptr;
  if (user && (!best || user->priority >= best->priority)) best = user;
  if ((!best || best->priority < kFallbackPriority) && has_attention_vocabulary(kernel_name)) return &kUnrecognised;
  return best;
}

std::string gpu_vendor_of_kernels(const Trace& trace, const TraceIndex& index) {
  std::vector<bool> seen(trace.strings.size(), false);
  int amd = 0, nvidia = 0;
  for (const uint32_t g : index.gpu_slices) {
    const StrId id = trace.slices[g].name;
    if (id >= seen.size() || seen[id]) continue;
    seen[id] = true;
    const std::string_view name = trace.strings.get(id);
    const KernelPattern* p = classify_kernel(name);
    const std::string_view vendor = p ? p->vendor : std::string_view();
    amd += vendor == kAmd || name.find("__hip_") != std::string_view::npos;
    nvidia += vendor == kNvidia || name.find("__nv_") != std::string_view::npos;
  }
  if (amd > 0 && nvidia == 0) return std::string(kAmd);
  if (nvidia > 0 && amd == 0) return std::string(kNvidia);
  return "";
}

}  // namespace attnprof
