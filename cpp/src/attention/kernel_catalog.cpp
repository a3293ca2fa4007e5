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

#include "attnprof/attention.h"

namespace attnprof {
namespace {

using K = KernelKind;
using M = MatchKind;

constexpr std::string_view kNvidia = "nvidia";
constexpr std::string_view kAmd = "amd";
constexpr std::string_view kAny = "any";
constexpr std::string_view kFwd = "forward";
constexpr std::string_view kBwd = "backward";

// clang-format off
constexpr KernelPattern kCatalog[] = {
  // ---- fused attention: PyTorch's own backends ---------------------------------------
  {"pytorch_flash::flash_fwd_splitkv_combine", M::kContains, 40, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kFwd, true},
  {"pytorch_flash::flash_fwd",                 M::kContains, 30, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kFwd, false},
  {"pytorch_flash::flash_bwd_dq_dk_dv",        M::kContains, 40, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kBwd, false},
  {"pytorch_flash::flash_bwd",                 M::kContains, 30, K::kFusedAttention, backend::kFlash, "pytorch_flash", kNvidia, kBwd, true},
  {"fmha_cutlassF",                            M::kContains, 30, K::kFusedAttention, backend::kEfficient, "cutlass_fmha", kNvidia, kFwd, false},
  {"fmha_cutlassB",                            M::kContains, 30, K::kFusedAttention, backend::kEfficient, "cutlass_fmha", kNvidia, kBwd, false},
  {"cudnn_generated_fort_native_sdpa",         M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, "", false},
  {"cudnn::fusion::compute_dot_do_o",          M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, kBwd, true},
  {"cudnn::fusion::convert_dq_to_16bits",      M::kContains, 30, K::kFusedAttention, backend::kCudnn, "cudnn", kNvidia, kBwd, true},
  // ---- fused attention: FlashAttention packages (Dao-AILab) ---------------------------
  {"FlashAttnFwdCombine",                      M::kContains, 40, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, true},
  {"FlashAttnFwdSm90",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, false},
  {"FlashAttnFwdSm80",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kFwd, false},
  {"FlashAttnBwdSm90",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, false},
  {"FlashAttnBwdSm80",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, false},
  {"FlashAttnBwdPreprocess",                   M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, true},
  {"FlashAttnBwdPostprocess",                  M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_3", kNvidia, kBwd, true},
  {"flash::FlashAttentionForwardSm",           M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kFwd, false},
  {"flash::FlashAttentionBackwardSm",          M::kContains, 30, K::kFusedAttention, backend::kFlash, "flash_attn_4", kNvidia, kBwd, false},
  {"flash::flash_fwd_splitkv_combine",         M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kFwd, true},
  {"flash::flash_fwd",                         M::kContains, 20, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kFwd, false},
  {"flash::flash_bwd_dq_dk_dv",                M::kContains, 25, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kBwd, false},
  {"flash::flash_bwd",                         M::kContains, 20, K::kFusedAttention, backend::kFlash, "flash_attn", kNvidia, kBwd, true},
  // ---- fused attention: ROCm (AOTriton serves flash and efficient; CK tile fmha) -------
  {"attn_fwd",                                 M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kFwd, false},
  {"attn_bwd",                                 M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, false},
  {"bwd_kernel_dk_dv",                         M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, false},
  {"bwd_kernel_dq",                            M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, true},
  {"bwd_preprocess",                           M::kPrefix,   30, K::kFusedAttention, backend::kFlash, "aotriton", kAmd, kBwd, true},
  {"ck_tile::FmhaFwd",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kFwd, false},
  {"ck_tile::FmhaBwd",                         M::kContains, 30, K::kFusedAttention, backend::kFlash, "ck_fmha", kAmd, kBwd, false},
  // ---- fused attention: FlexAttention (Inductor Triton templates) ---------------------
  {"triton_tem_fused_flex_attention_backward", M::kContains, 40, K::kFusedAttention, backend::kFlex, "triton", kAny, kBwd, false},
  {"triton_tem_fused_flex_attention",          M::kContains, 30, K::kFusedAttention, backend::kFlex, "triton", kAny, kFwd, false},
  {"triton_tem_fused_flex_decoding",           M::kContains, 30, K::kFusedAttention, backend::kFlex, "triton", kAny, kFwd, false},
  // ---- fused attention: serving stacks (vLLM, TensorRT-LLM, FlashInfer, xFormers) -----
  {"fmhaSm100",                                M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, false},
  {"fmhaSm90",                                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, false},
  {"fmha_v2_",                                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, false},
  {"xqa_kernel",                               M::kContains, 30, K::kFusedAttention, backend::kExternal, "trtllm_fmha", kNvidia, kFwd, false},
  {"paged_attention_v2_reduce",                M::kContains, 40, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, true},
  {"paged_attention_v1_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, false},
  {"paged_attention_v2_kernel",                M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm", kAny, kFwd, false},
  {"kernel_unified_attention",                 M::kContains, 30, K::kFusedAttention, backend::kExternal, "vllm_triton", kAny, kFwd, false},
  {"PrefillWith",                              M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, false},
  {"DecodeWith",                               M::kContains, 30, K::kFusedAttention, backend::kExternal, "flashinfer", kNvidia, kFwd, false},
  {"_fwd_kernel_splitK",                       M::kContains, 30, K::kFusedAttention, backend::kExternal, "xformers", kAny, kFwd, false},
  {"_splitK_reduce",                           M::kContains, 30, K::kFusedAttention, backend::kExternal, "xformers", kAny, kFwd, true},
  {"fmha",                                     M::kContains,  1, K::kFusedAttention, backend::kExternal, "fmha", kAny, "", false},
  // ---- Inductor-generated kernels carry op names in theirs: rank above attention ------
  {"triton_per_fused__softmax",                M::kPrefix,   60, K::kSoftmax,      "", "triton", kAny, "", false},
  {"triton_red_fused__softmax",                M::kPrefix,   60, K::kSoftmax,      "", "triton", kAny, "", false},
  {"triton_poi_",                              M::kPrefix,   50, K::kElementwise,  "", "triton", kAny, "", false},
  {"triton_per_",                              M::kPrefix,   50, K::kOther,        "", "triton", kAny, "", false},
  {"triton_red_",                              M::kPrefix,   50, K::kOther,        "", "triton", kAny, "", false},
  // ---- unfused components -----------------------------------------------------------
  {"softmax_warp_forward",                     M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kFwd, false},
  {"softmax_warp_backward",                    M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kBwd, false},
  {"cunn_SoftMaxForward",                      M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kFwd, false},
  {"cunn_SoftMaxBackward",                     M::kContains, 20, K::kSoftmax,      "", "aten", kAny, kBwd, false},
  {"fused_dropout_kernel",                     M::kContains, 20, K::kDropout,      "", "aten", kAny, "", false},
  {"triu_tril_kernel",                         M::kContains, 20, K::kMaskBuild,    "", "aten", kAny, "", false},
  {"bmm_",                                     M::kPrefix,   12, K::kGemm,         "", "trtllm_gemm", kNvidia, "", false},
  {"nvjet_",                                   M::kPrefix,   12, K::kGemm,         "", "cublaslt", kNvidia, "", false},
  {"Cijk_",                                    M::kPrefix,   12, K::kGemm,         "", "hipblaslt", kAmd, "", false},
  {"cutlass",                                  M::kContains,  8, K::kGemm,         "", "cutlass", kAny, "", false},
  {"gemm",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", false},
  {"Gemm",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", false},
  {"gemv",                                     M::kContains,  6, K::kGemm,         "", "cublas", kAny, "", false},
  {"elementwise_kernel",                       M::kContains,  4, K::kElementwise,  "", "aten", kAny, "", false},
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
    case K::kOther: return "other";
  }
  return "other";
}

std::span<const KernelPattern> kernel_catalog() { return kCatalog; }

std::string_view kernel_function_name(std::string_view name) {
  // "void " is how CUPTI prints demangled function templates; it carries no meaning.
  if (name.starts_with("void ")) name.remove_prefix(5);
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(' && angle == 0) {
      if (name.substr(i).starts_with(kAnonymous)) i += kAnonymous.size() - 1;
      else return name.substr(0, i);
    }
  }
  return name;
}

const KernelPattern* classify_kernel(std::string_view kernel_name) {
  // Parameter types name other libraries ("..., flashinfer::QuantizationSFLayout)"): match
  // the function and its template arguments only.
  kernel_name = kernel_function_name(kernel_name);
  const KernelPattern* best = nullptr;
  for (const KernelPattern& p : kCatalog)
    if (matches(p, kernel_name) && (!best || p.priority > best->priority)) best = &p;
  return best;
}

}  // namespace attnprof
