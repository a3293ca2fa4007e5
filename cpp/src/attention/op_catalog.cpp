// The op catalog: every CPU-side op that marks an attention call, in ONE table, with
// where its arguments sit in "Input Dims" / "Concrete Inputs" (positions taken from the
// op schemas, checked against the fixtures' traces; see docs/backends.md).
#include "attnprof/attention.h"

namespace attnprof {
namespace {

using R = OpRole;
using L = TensorLayout;
using M = MatchKind;

constexpr std::string_view kFwd = "forward";
constexpr std::string_view kBwd = "backward";

// Columns after gqa (omitted = -1 / ""): offsets ([B+1] cu_seqlens_q / kv_indptr),
// max_seqlen_q, max_seqlen_k, heads (a head-count scalar), library (when the op fixes it),
// seq_lens ([B]) and block_table ([B, max_blocks]).
// clang-format off
//                                                                      role               backend              dir   fused  layout    q  k  v  mask drop causal scale gqa
constexpr AttentionOp kOps[] = {
  {"aten::scaled_dot_product_attention",                          M::kExact, R::kEntry,   "",                  kFwd, true,  L::kBHSD, 0, 1, 2,  3,  4,  5,  6,  7},
  // forward backend ops (BHSD, what SDPA dispatches to)
  {"aten::_scaled_dot_product_flash_attention",                   M::kExact, R::kBackend, backend::kFlash,     kFwd, true,  L::kBHSD, 0, 1, 2, -1,  3,  4,  6, -1},
  {"aten::_scaled_dot_product_efficient_attention",               M::kExact, R::kBackend, backend::kEfficient, kFwd, true,  L::kBHSD, 0, 1, 2,  3,  5,  6,  7, -1},
  {"aten::_scaled_dot_product_cudnn_attention",                   M::kExact, R::kBackend, backend::kCudnn,     kFwd, true,  L::kBHSD, 0, 1, 2,  3,  5,  6,  8, -1},
  {"aten::_scaled_dot_product_attention_math",                    M::kExact, R::kBackend, backend::kMath,      kFwd, false, L::kBHSD, 0, 1, 2,  3,  4,  5,  7,  8},
  {"aten::_scaled_dot_product_attention_math_for_mps",            M::kExact, R::kBackend, backend::kMath,      kFwd, false, L::kBHSD, 0, 1, 2,  3,  4,  5,  7, -1},
  {"aten::_scaled_dot_product_flash_attention_for_cpu",           M::kExact, R::kBackend, backend::kCpuFlash,  kFwd, true,  L::kBHSD, 0, 1, 2,  5,  3,  4,  6, -1},
  {"aten::_scaled_dot_product_fused_attention_overrideable",      M::kExact, R::kBackend, backend::kExternal,  kFwd, true,  L::kBHSD, 0, 1, 2,  3,  4,  5,  7, -1},
  // forward implementation ops below them
  {"aten::_flash_attention_forward",                              M::kExact, R::kImpl,    backend::kFlash,     kFwd, true,  L::kBSHD, 0, 1, 2, -1,  7,  8, 10, -1},
  {"aten::_efficient_attention_forward",                          M::kExact, R::kImpl,    backend::kEfficient, kFwd, true,  L::kBSHD, 0, 1, 2,  3,  8, -1, 11, -1},
  {"aten::_cudnn_attention_forward",                              M::kExact, R::kImpl,    backend::kCudnn,     kFwd, true,  L::kBHSD, 0, 1, 2,  3,  9, 10, 12, -1},
  // autograd nodes of the backward pass (carry the forward op's Sequence number)
  {"ScaledDotProductFlashAttentionBackward0",                     M::kExact, R::kAutogradNode, backend::kFlash,     kBwd, true,  L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"ScaledDotProductEfficientAttentionBackward0",                 M::kExact, R::kAutogradNode, backend::kEfficient, kBwd, true,  L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"ScaledDotProductCudnnAttentionBackward0",                     M::kExact, R::kAutogradNode, backend::kCudnn,     kBwd, true,  L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"ScaledDotProductFlashAttentionForCpuBackward0",               M::kExact, R::kAutogradNode, backend::kCpuFlash,  kBwd, true,  L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"ScaledDotProductFusedAttentionOverrideableBackward0",         M::kExact, R::kAutogradNode, backend::kExternal,  kBwd, true,  L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  // backward backend ops
  {"aten::_scaled_dot_product_flash_attention_backward",          M::kExact, R::kBackend, backend::kFlash,     kBwd, true,  L::kBHSD, 1, 2, 3, -1, 10, 11, 14, -1},
  {"aten::_scaled_dot_product_efficient_attention_backward",      M::kExact, R::kBackend, backend::kEfficient, kBwd, true,  L::kBHSD, 1, 2, 3,  4,  9, 11, 12, -1},
  {"aten::_scaled_dot_product_cudnn_attention_backward",          M::kExact, R::kBackend, backend::kCudnn,     kBwd, true,  L::kBHSD, 1, 2, 3,  8, 13, 14, 15, -1},
  {"aten::_scaled_dot_product_flash_attention_for_cpu_backward",  M::kExact, R::kBackend, backend::kCpuFlash,  kBwd, true,  L::kBHSD, 1, 2, 3,  8,  6,  7,  9, -1},
  {"aten::_scaled_dot_product_fused_attention_overrideable_backward", M::kExact, R::kBackend, backend::kExternal, kBwd, true, L::kBHSD, 1, 2, 3, 4, 12, 13, 16, -1},
  {"aten::_flash_attention_backward",                             M::kExact, R::kImpl,    backend::kFlash,     kBwd, true,  L::kBSHD, 1, 2, 3, -1, 10, 11, 14, -1},
  {"aten::_efficient_attention_backward",                         M::kExact, R::kImpl,    backend::kEfficient, kBwd, true,  L::kBSHD, 1, 2, 3,  4, 11, -1, 16, -1},
  {"aten::_cudnn_attention_backward",                             M::kExact, R::kImpl,    backend::kCudnn,     kBwd, true,  L::kBHSD, 1, 2, 3,  8, 13, 14, 15, -1},
  // other libraries' attention ops
  {"vllm::unified_attention",                                     M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD,  0, 1, 2, -1, -1, -1, -1, -1},
  {"vllm::unified_mla_attention",                                 M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD,  0, 1, 2, -1, -1, -1, -1, -1},
  {"flash_attn::_flash_attn_varlen_forward",                      M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kTHD,  0, 1, 2, -1,  7,  9,  8, -1,  3,  5,  6},
  {"flash_attn::_flash_attn_varlen_backward",                     M::kExact, R::kExternal, backend::kFlash,     kBwd, true, L::kTHD,  1, 2, 3, -1, 13, 15, 14, -1,  9, 11, 12},
  {"flash_attn::_flash_attn_forward",                             M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kBSHD, 0, 1, 2, -1,  3,  5,  4, -1, -1, -1, -1, -1, "aiter"},
  {"flash_attn::_flash_attn_backward",                            M::kExact, R::kExternal, backend::kFlash,     kBwd, true, L::kBSHD, 1, 2, 3, -1,  9, 11, 10, -1},
  {"flash_attn_3::fwd",                                           M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kBSHD, 0, 1, 2, -1, -1, -1, -1, -1},
  {"flash_attn_3::bwd",                                           M::kExact, R::kExternal, backend::kFlash,     kBwd, true, L::kBSHD, 1, 2, 3, -1, -1, -1, -1, -1},
  {"xformers::efficient_attention_forward_cutlass",               M::kExact, R::kExternal, backend::kEfficient, kFwd, true, L::kBSHD, 0, 1, 2, -1, -1, -1, -1, -1},
  {"xformers::efficient_attention_backward_cutlass",              M::kExact, R::kExternal, backend::kEfficient, kBwd, true, L::kBSHD, 1, 2, 3, -1, -1, -1, -1, -1},
  {"xformers_flash::flash_fwd",                                   M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kBSHD, 0, 1, 2, -1, -1, -1, -1, -1},
  {"xformers_flash::flash_bwd",                                   M::kExact, R::kExternal, backend::kFlash,     kBwd, true, L::kBSHD, 1, 2, 3, -1, -1, -1, -1, -1},
  // AMD aiter (ROCm/aiter aiter/ops/mha.py, aiter/ops/attention.py): CK / asm FlashAttention
  {"aiter::fmha_v3_fwd",                                          M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kBSHD, 0, 1, 2, -1,  3,  5,  4, -1, -1, -1, -1, -1, "aiter"},
  {"aiter::mha_fwd",                                              M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kBSHD, 0, 1, 2, -1,  3,  5,  4, -1, -1, -1, -1, -1, "aiter"},
  // its scalars moved between releases (min_seqlen_q was inserted): only the stable ones
  {"aiter::mha_varlen_fwd",                                       M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kTHD,  0, 1, 2, -1, -1, -1, -1, -1,  3,  5,  6, -1, "aiter"},
  {"aiter::mha_batch_prefill",                                    M::kExact, R::kExternal, backend::kExternal,  kFwd, true, L::kPaged, 0, 1, 2, -1,  8, 12,  9, -1,  3,  6,  7, -1, "aiter"},
  {"aiter::paged_attention_ragged",                               M::kExact, R::kExternal, backend::kExternal,  kFwd, true, L::kPaged, 2, 3, 4, -1, -1, -1,  5, -1,  6, -1, -1, -1, "aiter"},
  // SGLang's kernel-shape profiler re-registers each wrapped kernel as
  // sglang_profiler::<module>_<function>_<id> with only the tensor arguments, in order
  {"sglang_profiler::attention_paged_attention_ragged",            M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kPaged, 2, 3, 4, -1, -1, -1, -1, -1,  5, -1, -1, -1, "aiter"},
  // vLLM's paged attention (csrc/torch_bindings.cpp, csrc/rocm/torch_bindings.cpp): q [seqs, Hq, D],
  // key_cache [blocks, Hkv, D/x, block_size, x], value_cache [blocks, Hkv, D, block_size];
  // int max_seq_len; ROCm's max_seq_len moved when query_start_loc was inserted before it.
  {"_C::paged_attention_v1",                                      M::kExact, R::kExternal, backend::kExternal,  kFwd, true, L::kPaged, 1, 2, 3, -1, -1, -1,  5, -1, -1, -1,  9, -1, "vllm",  7,  6},
  {"_C::paged_attention_v2",                                      M::kExact, R::kExternal, backend::kExternal,  kFwd, true, L::kPaged, 4, 5, 6, -1, -1, -1,  8, -1, -1, -1, 12, -1, "vllm", 10,  9},
  {"_rocm_C::paged_attention",                                    M::kExact, R::kExternal, backend::kExternal,  kFwd, true, L::kPaged, 4, 5, 6, -1, -1, -1,  8, -1, -1, -1, -1, -1, "vllm", 10,  9},
  // FlashInfer's torch ops (flashinfer/prefill.py, decode.py): "flashinfer::<uri>_run" and, for
  // batch prefill, "<uri>_ragged_run" / "<uri>_paged_run" (same q/k/v/qo_indptr positions), the uri
  // starting with the kernel family (flashinfer/jit/attention/modules.py). Scalars move between
  // releases (enable_pdl, scale tensors inserted): only the leading tensors.
  {"flashinfer::batch_prefill_with_kv_cache",                     M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD,  3, 4, 5, -1, -1, -1, -1, -1,  6, -1, -1, -1, "flashinfer"},
  {"flashinfer::batch_decode_with_kv_cache",                      M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kPaged, 3, 4, 5, -1, -1, -1, -1, -1,  6, -1, -1, -1, "flashinfer"},
  {"flashinfer::single_prefill_with_kv_cache",                    M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD,  0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, "flashinfer"},
  {"flashinfer::single_decode_with_kv_cache",                     M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD,  0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1, "flashinfer"},
  // nn.MultiheadAttention's fast path: SDPA inside, or (need_weights=True) bmm-softmax-bmm
  {"aten::_native_multi_head_attention",                          M::kExact, R::kExternal, backend::kMath,      kFwd, false, L::kBSE, 0, 1, 2,  9, -1, -1, -1, -1, -1, -1, -1,  4},
  // nn.TransformerEncoderLayer's fast path (eval, no grad; aten/src/ATen/native/native_functions.yaml:
  // _transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, ...,
  // Tensor? mask=None, int? mask_type=None)): the attention of the layer is the
  // _native_multi_head_attention below it when recorded, else the layer op (docs/backends.md)
  {"aten::_transformer_encoder_layer_fwd",                        M::kExact, R::kLayer,    backend::kMath,      kFwd, false, L::kBSE, 0, 0, 0, 18, -1, -1, -1, -1, -1, -1, -1,  2},
  // masked softmax of the native fast paths (_masked_softmax(Tensor self, Tensor mask, int? dim,
  // int? mask_type)), a call of its own only where its matmuls were not recorded around it;
  // its scores [B, H, Sq, Skv] give no head dim, so no q/k/v positions: the shape is unknown
  {"aten::_masked_softmax",                                       M::kExact, R::kStandalone, backend::kMath,    kFwd, false, L::kBHSD, -1, -1, -1,  1, -1, -1, -1, -1},
  // other serving ops (argument positions not yet read from their schemas: -1)
  {"aiter::fmha_v3_varlen_fwd",                                   M::kExact, R::kExternal, backend::kFlash    , kFwd, true, L::kTHD,  -1, -1, -1, -1, -1, -1, -1, -1},
  {"aiter::fmha_v3_bwd",                                          M::kExact, R::kExternal, backend::kFlash    , kBwd, true, L::kBSHD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"aiter::mha_bwd",                                              M::kExact, R::kExternal, backend::kFlash    , kBwd, true, L::kBSHD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"aiter::mha_varlen_bwd",                                       M::kExact, R::kExternal, backend::kFlash    , kBwd, true, L::kTHD,  -1, -1, -1, -1, -1, -1, -1, -1},
  {"sglang_profiler::attention_",                                 M::kPrefix, R::kExternal, backend::kExternal, kFwd, true, L::kTHD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"_vllm_fa2_C::varlen_fwd",                                     M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kTHD,  -1, -1, -1, -1, -1, -1, -1, -1},
  {"_vllm_fa3_C::fwd",                                            M::kExact, R::kExternal, backend::kFlash,     kFwd, true, L::kTHD,  -1, -1, -1, -1, -1, -1, -1, -1},
  // FlexAttention run without torch.compile: the higher-order op shows as one cpu_op (its
  // unfused path computes every score; compiled flex shows as Triton/Inductor kernels instead)
  {"FlexAttentionAutogradOp",                                     M::kExact, R::kExternal, backend::kFlex,     kFwd, false, L::kBHSD, 0, 1, 2, -1, -1, -1,  4, -1},
  {"triton_tem_fused_flex_attention_backward",                    M::kPrefix, R::kExternal, backend::kFlex,     kBwd, true, L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"triton_tem_fused_flex_attention",                             M::kPrefix, R::kExternal, backend::kFlex,     kFwd, true, L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
  {"triton_tem_fused_flex_decoding",                              M::kPrefix, R::kExternal, backend::kFlex,     kFwd, true, L::kBHSD, -1, -1, -1, -1, -1, -1, -1, -1},
};
// clang-format on

}  // namespace

std::span<const AttentionOp> attention_op_catalog() { return kOps; }

namespace {

// Longest matching prefix wins ("..._attention_backward" before "..._attention"); the first on a tie.
const AttentionOp* longest_match(std::span<const AttentionOp> ops, std::string_view op_name) {
  const AttentionOp* best = nullptr;
  for (const AttentionOp& op : ops) {
    const bool hit = op.match == M::kExact ? op_name == op.name : op_name.starts_with(op.name);
    if (hit && (!best || op.name.size() > best->name.size())) best = &op;
  }
  return best;
}

}  // namespace

const AttentionOp* classify_attention_op(std::string_view op_name, const CatalogExtension* extension) {
  if (extension)
    if (const AttentionOp* user = longest_match(extension->ops, op_name)) return user;
  return longest_match(kOps, op_name);
}

}  // namespace attnprof
