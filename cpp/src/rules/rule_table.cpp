// The rule data: one entry per check, per backend in the order the library runs its checks
// (PyTorch stops at the first failing check and prints only that one). Facts from
// /work/shared/reference/sdpa-backend-rules.md (section numbers in `source`), checked against
// real PyTorch 2.11 decisions on an H200 (cpp/tests/rules) and real torch 2.13 CPU decisions
// (tests/test_rules_cpu_grid.py). Documented in docs/rules.md.
#include <algorithm>
#include <array>

#include "rules/context.h"

namespace attnprof::rules {
namespace {

constexpr unsigned kCuda = 1u << static_cast<int>(DeviceKind::kCuda);
constexpr unsigned kRocm = 1u << static_cast<int>(DeviceKind::kRocm);
constexpr unsigned kCpu = 1u << static_cast<int>(DeviceKind::kCpu);
constexpr unsigned kGpu = kCuda | kRocm;
constexpr unsigned kAll = kGpu | kCpu;

constexpr Version kAny{0, 0, 0};
constexpr Version kOpen{99, 0, 0};
constexpr Version kUpTo24{2, 4, 99};
constexpr Version kUpTo26{2, 6, 99};
constexpr Version kFrom25{2, 5, 0};
constexpr Version kFrom27{2, 7, 0};
constexpr Version kFrom29{2, 9, 0};
constexpr Version kMain{2, 14, 0};

using B = Backend;
using C = RuleContext;

// Shared conditions (one place each; several backends run the same PyTorch helper).
bool zero_seq_len(const C& c) { return c.in.Sq == 0 || c.in.Skv == 0; }
bool heads_mismatch(const C& c, B b) {
  return c.heads_differ() && !c.gqa_path_taken(b) && !c.mqa_broadcast_ok(b);
}
bool gqa_not_divisible(const C& c, B b) {
  return c.heads_differ() && c.gqa_path_taken(b) && !c.mqa_broadcast_ok(b) &&
         (c.in.Hkv == 0 || c.in.Hq % c.in.Hkv != 0);
}

constexpr const char* kMsgZeroSeq = "All fused kernels do not support zero seq_len_q or seq_len_kv.";
constexpr const char* kMsgStride =
    "All fused kernels require the last dimension of the input to have stride 1. Got "
    "Query.stride(-1): {q_stride}, Key.stride(-1): {k_stride}, Value.stride(-1): {v_stride} instead.";
constexpr const char* kFixStride = "call .contiguous() on q/k/v (or transpose without touching the last dim)";
constexpr const char* kMsgHeads =
    "For dense input, both fused kernels require query, key and value to have the same num_heads. "
    "Query.sizes(): {q_sizes}, Key sizes(): {k_sizes}, Value sizes(): {v_sizes} instead. To broadcast "
    "dense inputs, try using unsqueeze and expand_to before passing them into the kernel.";
constexpr const char* kMsgGqaDivide =
    "The number of heads in key/value must divide number of heads in query.Got input Key sizes(): "
    "{k_sizes}, Value sizes(): {v_sizes}, Query sizes(): {q_sizes} instead.";
constexpr const char* kFixGqaDivide = "choose num_key_value_heads dividing num_attention_heads ({Hq})";
constexpr const char* kMsgMaskShape =
    "Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x {KV_seq_len, 1}); 4d - "
    "({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x {KV_seq_len, 1})";
constexpr const char* kFixMaskShape = "give the mask shape (Sq, Skv) or (B|1, H|1, Sq, Skv)";
#define ATTNPROF_DTYPE_MSG(allowed)                                                       \
  "Expected query, key and value to all be of dtype: " allowed ". Got Query dtype: {q_dtype}, Key " \
  "dtype: {q_dtype}, and Value dtype: {q_dtype} instead."
constexpr const char* kMsgDtypeHalf = ATTNPROF_DTYPE_MSG("{flash_dtypes}");
constexpr const char* kMsgDtypeMem = ATTNPROF_DTYPE_MSG("{mem_dtypes}");
constexpr const char* kMsgDtypeCpu = ATTNPROF_DTYPE_MSG("{cpu_dtypes}");
#undef ATTNPROF_DTYPE_MSG

const std::array kRules = std::to_array<Rule>({
    // ---------------- flash (CUDA, ROCm AOTriton): can_use_flash_attention, §1.5 ----------------
    {"flash.runtime_disabled", B::kFlash, "check_runtime_disabled_flash", kAny, kOpen, kGpu,
     [](const C& c) { return !c.env.enabled.flash; }, "Flash attention has been runtime disabled.",
     "flash disabled", "remove the sdpa_kernel(...) restriction or call torch.backends.cuda.enable_flash_sdp(True)",
     "§1.4"},
    {"flash.attn_mask", B::kFlash, "check_for_attn_mask", kAny, kOpen, kGpu,
     [](const C& c) { return c.has_mask(); }, "Flash Attention does not support non-null attn_mask.",
     "attn_mask={mask}",
     "pass is_causal=True instead of a materialised causal mask; for padding, unpad (varlen) or drop the "
     "all-True mask",
     "§1.5 step 4"},
    {"flash.head_dim_max", B::kFlash, "check_head_dim_size_flash", kAny, kOpen, kGpu,
     [](const C& c) { return c.in.D != c.in.Dv || c.in.D > c.flash_max_head_dim(); },
     "Flash attention requires q,k,v to have the same last dimension and to be less than or equal to "
     "{flash_max_hd}. Got Query.size(-1): {D}, Key.size(-1): {D}, Value.size(-1): {Dv} instead.",
     "head_dim={D}, v head_dim={Dv}", "use one head_dim <= {flash_max_hd} for q, k and v", "§1.5 step 5"},
    {"flash.arch", B::kFlash, "check_flash_attention_hardware_support", kAny, kOpen, kCuda,
     [](const C& c) { return c.sm() < 80 || c.sm() > c.flash_max_sm(); },
     "Flash attention only supports gpu architectures in the range [sm80, sm{flash_max_sm}]. Attempting to "
     "run on a sm {sm_dot} gpu.",
     "arch=sm{sm}", "run on an Ampere or newer GPU (sm80-sm{flash_max_sm})", "§1.5 step 6"},
    {"flash.rocm_arch", B::kFlash, "check_flash_attention_hardware_support", kAny, kOpen, kRocm,
     [](const C& c) { return !c.rocm_aotriton_arch(); },
     "Flash attention was not compiled for current AMD GPU architecture. Attempting to run on "
     "architecture {gfx}",
     "arch={gfx}", "experimental archs need TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1", "§1.5 step 6"},
    {"flash.train_head_dim_sm86_89", B::kFlash,
     "check_requires_grad_and_head_dim_gt192_constraints_on_sm86_89_or_120", kAny, kOpen, kCuda,
     [](const C& c) {
       const bool consumer = (c.sm() >= 86 && c.sm() <= 89) || (c.torch_at_least(2, 7) && c.sm() >= 120 && c.sm() <= 121);
       const bool bad_dim = (c.in.D > 192 && c.in.D <= 224) || (c.in.D > 224 && c.in.D <= 256 && c.in.dropout > 0);
       return c.in.requires_grad && consumer && bad_dim;
     },
     "Flash attention currently doesn't support training with head_dim ∈ (192, 224] or (head_dim ∈ (224, "
     "256] and dropout > 0.0) on gpu architectures in the range[sm86, sm89].Attempting to run with dropout "
     "set to: {dropout}and head_dim: {D} on a sm {sm_dot} gpu.",
     "training, head_dim={D}, dropout={dropout}, sm{sm}",
     "use head_dim <= 192, or head_dim in (224, 256] without dropout", "§1.5 step 7"},
    {"flash.causal_non_square", B::kFlash, "check_flash_causal_non_square_seqlens", kAny, kOpen, kGpu,
     [](const C& c) { return c.in.causal && !c.in.nested && c.in.Sq != c.in.Skv; },
     "Flash attention does not support the is_causal flag when seqlen_q != seqlen_k. Got seqlen_q: {Sq} "
     "seqlen_k: {Skv}. If you would like to use causal attention with non-square masks, please see "
     "CausalAttnMask.",
     "is_causal with Sq={Sq} != Skv={Skv}",
     "for decode pass is_causal=False (q_len 1 sees all keys); otherwise use flash_attn (bottom-right causal)",
     "§1.5 step 8"},
    {"flash.dtype", B::kFlash, "check_tensor_dtype", kAny, kOpen, kGpu,
     [](const C& c) { return !(c.in.dtype == "fp16" || (c.in.dtype == "bf16" && (c.sm() >= 80 || c.rocm()))); },
     kMsgDtypeHalf, "dtype={dtype}", "run attention in bf16/fp16 (torch.autocast or model.to(torch.bfloat16))",
     "§1.5 step 9"},
    {"flash.same_num_heads", B::kFlash, "check_batch_size_and_num_heads_dense", kAny, kOpen, kGpu,
     [](const C& c) { return heads_mismatch(c, B::kFlash); }, kMsgHeads, "Hq={Hq}, Hkv={Hkv}",
     "pass enable_gqa=True (torch >= 2.5) instead of different head counts", "§1.4"},
    {"flash.gqa_divisible", B::kFlash, "check_grouped_query_attention", kFrom25, kOpen, kGpu,
     [](const C& c) { return gqa_not_divisible(c, B::kFlash); }, kMsgGqaDivide, "Hq={Hq}, Hkv={Hkv}",
     kFixGqaDivide, "§1.4"},
    {"flash.zero_seq_len", B::kFlash, "check_nonzero_sequence_lengths_dense", kAny, kOpen, kGpu, zero_seq_len,
     kMsgZeroSeq, "Sq={Sq}, Skv={Skv}", "skip attention for empty sequences", "§1.4"},
    {"flash.last_dim_stride", B::kFlash, "check_last_dim_stride_equals_1_dense", kAny, kOpen, kGpu,
     [](const C& c) { return !c.last_dim_stride_ok(true); }, kMsgStride,
     "stride(-1)={q_stride}/{k_stride}/{v_stride}", kFixStride, "§1.4"},

    // ---------------- memory-efficient (CUDA, ROCm): can_use_mem_efficient_attention, §1.6 -------
    {"efficient.runtime_disabled", B::kEfficient, "check_runtime_disabled_mem_efficient", kAny, kOpen, kGpu,
     [](const C& c) { return !c.env.enabled.efficient; }, "Memory Efficient attention has been runtime disabled.",
     "efficient disabled",
     "remove the sdpa_kernel(...) restriction or call torch.backends.cuda.enable_mem_efficient_sdp(True)", "§1.4"},
    {"efficient.arch", B::kEfficient, "check_mem_efficient_hardware_support", kAny, kOpen, kCuda,
     [](const C& c) { return c.sm() < 50 || c.sm() > c.mem_efficient_max_sm(); },
     "Mem Efficient Attention only supports gpu architectures in the range [sm50, sm{mem_max_sm}]. Attempting "
     "to run on a sm {sm_dot} gpu.",
     "arch=sm{sm}", "run on sm50-sm{mem_max_sm} (newer archs need a newer torch)", "§1.6 step 3"},
    {"efficient.rocm_arch", B::kEfficient, "check_mem_efficient_hardware_support", kAny, kOpen, kRocm,
     [](const C& c) { return !c.rocm_aotriton_arch(); },
     "Mem Efficient attention was not compiled for current AMD GPU architecture. Attempting to run on "
     "architecture {gfx}",
     "arch={gfx}", "experimental archs need TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1", "§1.6 step 3"},
    {"efficient.head_dim_alignment", B::kEfficient, "check_head_dim_size_mem_efficient", kAny, kOpen, kGpu,
     [](const C& c) {
       const int64_t a = c.mem_efficient_alignment();
       return c.in.D <= 0 || c.in.Dv <= 0 || c.in.D % a != 0 || c.in.Dv % a != 0;
     },
     "Mem efficient attention requires last dimension of inputs to be divisible by {mem_align}. Got "
     "Query.size(-1): {D}, Key.size(-1): {D}, Value.size(-1): {Dv} instead.",
     "head_dim={D}, v head_dim={Dv}, alignment {mem_align}", "pad head_dim to {D_pad_align} (a multiple of {mem_align})",
     "§1.6 step 5"},
    {"efficient.nested_training", B::kEfficient, "check_requires_grad_and_nested", kAny, kOpen, kCuda,
     [](const C& c) { return c.in.nested && c.in.requires_grad; },
     "Memory efficient attention currently doesn't support training with NT inputs.", "nested + requires_grad",
     "pad to a dense batch for training", "§1.4"},
    {"efficient.zero_seq_len", B::kEfficient, "check_nonzero_sequence_lengths_dense", kAny, kOpen, kGpu,
     zero_seq_len, kMsgZeroSeq, "Sq={Sq}, Skv={Skv}", "skip attention for empty sequences", "§1.4"},
    {"efficient.last_dim_stride", B::kEfficient, "check_last_dim_stride_equals_1_dense", kAny, kOpen, kGpu,
     [](const C& c) { return !c.last_dim_stride_ok(false); }, kMsgStride,
     "stride(-1)={q_stride}/{k_stride}/{v_stride}", kFixStride, "§1.4"},
    {"efficient.same_num_heads", B::kEfficient, "check_batch_size_and_num_heads_dense", kAny, kOpen, kGpu,
     [](const C& c) { return heads_mismatch(c, B::kEfficient); }, kMsgHeads, "Hq={Hq}, Hkv={Hkv}",
     "memory-efficient attention has no GQA before torch 2.14: expand k/v to {Hq} heads (repeat_interleave) "
     "or let flash/cuDNN run",
     "§1.4, §1.10"},
    {"efficient.gqa_divisible", B::kEfficient, "check_grouped_query_attention", kMain, kOpen, kCuda,
     [](const C& c) { return gqa_not_divisible(c, B::kEfficient); }, kMsgGqaDivide, "Hq={Hq}, Hkv={Hkv}",
     kFixGqaDivide, "§1.4"},
    {"efficient.dtype", B::kEfficient, "check_tensor_dtype", kAny, kOpen, kGpu,
     [](const C& c) {
       return !(c.in.dtype == "fp16" || c.in.dtype == "fp32" || (c.in.dtype == "bf16" && (c.sm() >= 80 || c.rocm())));
     },
     kMsgDtypeMem, "dtype={dtype}", "use fp16, bf16 or fp32", "§1.6"},

    // ---------------- cuDNN (CUDA): can_use_cudnn_attention, §1.7 ---------------------------------
    {"cudnn.not_compiled", B::kCudnn, "", kAny, kOpen, kRocm | kCuda,
     [](const C& c) { return c.rocm() || cudnn_code(c.env.cudnn) == 0; },
     "Torch was not compiled with cuDNN attention.", "no cuDNN", "use a CUDA build of torch with cuDNN >= 9",
     "§1.7"},
    {"cudnn.version_too_old", B::kCudnn, "", kAny, kOpen, kCuda,
     [](const C& c) { const int v = cudnn_code(c.env.cudnn); return v > 0 && v < 90000; },
     "{cudnn_code} cuDNN version too old to use cuDNN Attention (< v9.0.0)", "cuDNN {cudnn_code}",
     "install cuDNN 9 (nvidia-cudnn-cu12 >= 9)", "§1.7"},
    {"cudnn.dropout_version", B::kCudnn, "", kFrom29, kOpen, kCuda,
     [](const C& c) { const int v = cudnn_code(c.env.cudnn); return c.in.dropout > 0 && v > 91100 && v < 91400; },
     "{cudnn_code} cuDNN version does not support droppout in SDPA (9.11 - 9.13).", "dropout with cuDNN {cudnn_code}",
     "upgrade cuDNN to 9.14 or newer", "§1.7"},
    {"cudnn.env_enabled", B::kCudnn, "check_runtime_enabled_cudnn", kAny, kUpTo24, kCuda,
     [](const C& c) { return !c.env.cudnn_env_enabled; },
     "The CuDNN backend needs to be enabled by setting the enviornment variable `TORCH_CUDNN_SDPA_ENABLED=1`",
     "TORCH_CUDNN_SDPA_ENABLED unset", "export TORCH_CUDNN_SDPA_ENABLED=1 (torch <= 2.4)", "§1.7 (2.4)"},
    {"cudnn.requires_grad", B::kCudnn, "check_cudnn_requires_grad", kAny, kUpTo24, kCuda,
     [](const C& c) { return c.in.requires_grad; }, "CuDNN does not currently support inputs with requires_grad=True.",
     "requires_grad", "upgrade torch (cuDNN SDPA supports training from 2.5)", "§1.7 (2.4)"},
    {"cudnn.runtime_disabled", B::kCudnn, "check_runtime_disabled_cudnn", kAny, kOpen, kCuda,
     [](const C& c) { return !c.env.enabled.cudnn; }, "{cuDNN} attention has been runtime disabled.",
     "cudnn disabled",
     "remove the sdpa_kernel(...) restriction or call torch.backends.cuda.enable_cudnn_sdp(True)", "§1.7 step 1"},
    {"cudnn.nested_unsupported", B::kCudnn, "check_for_nested_inputs", kAny, kUpTo26, kCuda,
     [](const C& c) { return c.in.nested; }, "CuDNN currently does not support nested inputs.", "nested",
     "use dense (padded) inputs", "§1.7 step 2"},
    {"cudnn.nested_experimental", B::kCudnn, "check_for_nested_inputs", kFrom27, kOpen, kCuda,
     [](const C& c) { return c.in.nested; }, "Experimental cuDNN SDPA nested tensor support is not enabled.",
     "nested", "set TORCH_CUDNN_SDPA_NESTED_TENSOR_ENABLED=1 (sm90/sm100) or use dense inputs", "§1.7 step 2"},
    {"cudnn.deterministic", B::kCudnn, "check_cudnn_deterministic", kFrom25, kOpen, kCuda,
     [](const C& c) { return c.env.deterministic; }, "cuDNN SDPA is not deterministic.",
     "use_deterministic_algorithms(True)", "use warn_only=True or accept flash/efficient", "§1.7 step 5"},
    {"cudnn.dtype", B::kCudnn, "check_tensor_dtype", kAny, kOpen, kCuda,
     [](const C& c) { return !c.half_type(); }, kMsgDtypeHalf, "dtype={dtype}",
     "run attention in bf16/fp16 (torch.autocast or model.to(torch.bfloat16))", "§1.7 step 6"},
    {"cudnn.mask_shape", B::kCudnn, "check_attn_mask_shape", kAny, kOpen, kCuda,
     [](const C& c) { return !c.mask_shape_ok(); }, kMsgMaskShape, "mask shape {mask_dims}", kFixMaskShape,
     "§1.4, §1.7 step 7"},
    {"cudnn.arch", B::kCudnn, "check_cudnn_hardware_support", kAny, kOpen, kCuda,
     [](const C& c) { return c.sm() < 80 || c.sm() > c.cudnn_max_sm(); },
     "cuDNN MHA only supports gpu architectures in the range [sm80, sm{cudnn_max_sm}]. Attempting to run on a "
     "sm {sm_dot} gpu.",
     "arch=sm{sm}", "run on sm80-sm{cudnn_max_sm}", "§1.7 step 8"},
    {"cudnn.dropout_resolution", B::kCudnn, "check_cudnn_dropout", kMain, kOpen, kCuda,
     [](const C& c) {
       const double sixteenths = c.in.dropout * 16;
       return c.in.dropout > 0 && sixteenths != static_cast<double>(static_cast<int64_t>(sixteenths));
     },
     "cuDNN dropout probability resolution is limited to 1/16.Use a dropout probability that is a multiple of "
     "1/16 to select the cuDNN backend",
     "dropout={dropout}", "use a dropout that is a multiple of 1/16 (0.0625, 0.125)", "§1.7 step 9"},
    {"cudnn.zero_seq_len", B::kCudnn, "check_nonzero_sequence_lengths_dense", kAny, kOpen, kCuda, zero_seq_len,
     kMsgZeroSeq, "Sq={Sq}, Skv={Skv}", "skip attention for empty sequences", "§1.4"},
    {"cudnn.last_dim_stride", B::kCudnn, "check_last_dim_stride_equals_1_dense", kAny, kOpen, kCuda,
     [](const C& c) { return !c.last_dim_stride_ok(true); }, kMsgStride,
     "stride(-1)={q_stride}/{k_stride}/{v_stride}", kFixStride, "§1.4"},
    {"cudnn.same_num_heads", B::kCudnn, "check_batch_size_and_num_heads_dense", kAny, kOpen, kCuda,
     [](const C& c) { return heads_mismatch(c, B::kCudnn); }, kMsgHeads, "Hq={Hq}, Hkv={Hkv}",
     "pass enable_gqa=True (cuDNN GQA from torch 2.9)", "§1.4"},
    {"cudnn.gqa_divisible", B::kCudnn, "check_grouped_query_attention", kFrom29, kOpen, kCuda,
     [](const C& c) { return gqa_not_divisible(c, B::kCudnn); }, kMsgGqaDivide, "Hq={Hq}, Hkv={Hkv}",
     kFixGqaDivide, "§1.4"},
    {"cudnn.batch_heads_max", B::kCudnn, "check_cudnn_tensor_shapes", kMain, kOpen, kCuda,
     [](const C& c) { return c.in.B > 65535 || c.in.Hq > 65535; },
     "cuDNN SDPA does not support batch size or num_heads greater than 65535. Got batch size: {B}, num_heads: {Hq}",
     "B={B}, H={Hq}", "split the batch into chunks of at most 65535", "§1.7 dense 4"},
    {"cudnn.head_dim_max", B::kCudnn, "check_cudnn_tensor_shapes", kAny, kOpen, kCuda,
     [](const C& c) { return c.in.D > c.cudnn_max_head_dim() || c.in.Dv > c.cudnn_max_head_dim(); },
     "head_dim should be no more than {cudnn_max_hd}", "head_dim={D}, v head_dim={Dv}",
     "use head_dim <= {cudnn_max_hd} (the cuDNN limit for this arch/version)", "§1.7 dense 4"},
    {"cudnn.head_dim_multiple_8", B::kCudnn, "check_cudnn_tensor_shapes", kAny, kOpen, kCuda,
     [](const C& c) { return c.in.D % 8 != 0 || c.in.Dv % 8 != 0; }, "head_dim should be a multiple of 8",
     "head_dim={D}", "pad head_dim to {D_pad8}", "§1.7 dense 4"},
    {"cudnn.seq_len_1", B::kCudnn, "check_cudnn_tensor_shapes", kAny, kUpTo26, kCuda,
     [](const C& c) { return c.in.Sq == 1 || c.in.Skv == 1; }, "cudnn SDPA does not support sequence length 1.",
     "Sq={Sq}, Skv={Skv}", "upgrade torch (cuDNN handles q_len 1 from 2.7)", "§1.7 dense 4"},
    {"cudnn.seq_kv_1", B::kCudnn, "check_cudnn_tensor_shapes", kFrom27, kOpen, kCuda,
     [](const C& c) { return c.in.Skv == 1; }, "cudnn SDPA does not support key/value sequence length 1.",
     "Skv=1", "flash or memory-efficient attention handle a single key", "§1.7 dense 4"},
    {"cudnn.seq_q_1_dropout", B::kCudnn, "check_cudnn_tensor_shapes", kFrom27, kOpen, kCuda,
     [](const C& c) { return c.in.Sq == 1 && c.in.dropout > 0; },
     "cudnn SDPA does not support query sequence length 1 with dropout.", "Sq=1, dropout={dropout}",
     "disable dropout at decode time (model.eval())", "§1.7 dense 4"},
    {"cudnn.d256_backward", B::kCudnn, "check_cudnn_d256_bprop_head_dim", kMain, kOpen, kCuda,
     [](const C& c) {
       if (!c.in.requires_grad || !c.cudnn_d256_capable()) return false;
       const int64_t d = c.in.D, dv = c.in.Dv;
       return !((d <= 128 && dv <= 128) || (d == 192 && dv == 128) || (d == 256 && dv == 256));
     },
     "cuDNN SDPA on SM 9.0/10.x does not support backward with these head dimensions. Got d_qk: {D}, d_v: {Dv}",
     "training with head_dim={D}/{Dv}", "train with head_dim <= 128, 192/128 or 256/256", "§1.7 dense 5"},

    // ---------------- math (every device) ----------------------------------------------------
    {"math.runtime_disabled", B::kMath, "select_sdp_backend", kAny, kOpen, kAll,
     [](const C& c) { return !c.env.enabled.math; }, "Math attention has been runtime disabled.", "math disabled",
     "keep SDPBackend.MATH in sdpa_kernel([...]) as a fallback", "§1.3"},

    // ---------------- CPU flash: use_flash_attention_cpp, §1.8 ------------------------------------
    {"cpu_flash.runtime_disabled", B::kCpuFlash, "check_runtime_disabled_flash", kAny, kOpen, kCpu,
     [](const C& c) { return !c.env.enabled.flash; }, "Flash attention has been runtime disabled.",
     "flash disabled", "remove the sdpa_kernel(...) restriction", "§1.8 step 1"},
    {"cpu_flash.nested", B::kCpuFlash, "check_nested_tensor", kAny, kOpen, kCpu,
     [](const C& c) { return c.in.nested; },
     "Both fused kernels of cpp version currently do not support Nested Tensor inputs.", "nested",
     "use dense (padded) inputs", "§1.8 step 2"},
    {"cpu_flash.dropout", B::kCpuFlash, "check_for_dropout", kAny, kOpen, kCpu,
     [](const C& c) { return c.in.dropout > 0; }, "Both fused kernels do not support non-zero dropout.",
     "dropout={dropout}", "set dropout to 0 (model.eval() for inference)", "§1.8 step 3"},
    {"cpu_flash.same_num_heads", B::kCpuFlash, "check_batch_size_and_num_heads_dense", kAny, kOpen, kCpu,
     [](const C& c) { return heads_mismatch(c, B::kCpuFlash); }, kMsgHeads, "Hq={Hq}, Hkv={Hkv}",
     "pass enable_gqa=True (torch >= 2.5)", "§1.8 step 5"},
    {"cpu_flash.gqa_divisible", B::kCpuFlash, "check_grouped_query_attention", kFrom25, kOpen, kCpu,
     [](const C& c) { return gqa_not_divisible(c, B::kCpuFlash); }, kMsgGqaDivide, "Hq={Hq}, Hkv={Hkv}",
     kFixGqaDivide, "§1.8 step 5"},
    {"cpu_flash.mask_shape", B::kCpuFlash, "check_attn_mask_shape", kAny, kOpen, kCpu,
     [](const C& c) { return !c.mask_shape_ok(); }, kMsgMaskShape, "mask shape {mask_dims}", kFixMaskShape,
     "§1.8 step 6"},
    {"cpu_flash.head_dim", B::kCpuFlash, "check_head_dim_size_cpp", kAny, kOpen, kCpu,
     [](const C& c) { return c.in.D != c.in.Dv; },
     "Flash attention requires q,k,v to have the same last dimension. Got Query.size(-1): {D}, Key.size(-1): "
     "{D}, Value.size(-1): {Dv} instead.",
     "head_dim={D}, v head_dim={Dv}", "use the same head_dim for q, k and v", "§1.8 step 7"},
    {"cpu_flash.zero_seq_len", B::kCpuFlash, "check_nonzero_sequence_lengths_dense", kAny, kOpen, kCpu,
     zero_seq_len, kMsgZeroSeq, "Sq={Sq}, Skv={Skv}", "skip attention for empty sequences", "§1.8 step 8"},
    {"cpu_flash.last_dim_stride", B::kCpuFlash, "check_last_dim_stride_equals_1_dense", kAny, kOpen, kCpu,
     [](const C& c) { return !c.last_dim_stride_ok(false); }, kMsgStride,
     "stride(-1)={q_stride}/{k_stride}/{v_stride}", kFixStride, "§1.8 step 9"},
    {"cpu_flash.dtype", B::kCpuFlash, "check_tensor_dtype", kAny, kOpen, kCpu,
     [](const C& c) { const auto& d = c.in.dtype; return !(d == "fp32" || d == "fp64" || d == "bf16" || d == "fp16"); },
     kMsgDtypeCpu, "dtype={dtype}", "use fp32, fp64, bf16 or fp16", "§1.8 step 10"},

    // ---------------- FlashAttention-2 (flash_attn package), §4.1 ---------------------------------
    {"fa2.arch", B::kFa2, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return !c.cuda() || c.sm() < 80; }, "FlashAttention only supports Ampere GPUs or newer.",
     "arch={arch}", "FlashAttention-2 needs an NVIDIA sm80+ GPU", "§4.1"},
    {"fa2.dtype", B::kFa2, "mha_fwd", kAny, kOpen, kAll, [](const C& c) { return !c.half_type(); },
     "FlashAttention only support fp16 and bf16 data type", "dtype={dtype}", "run attention in bf16/fp16", "§4.1"},
    {"fa2.head_dim_max", B::kFa2, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return c.in.D > 256 || c.in.D != c.in.Dv; },
     "FlashAttention forward only supports head dimension at most 256 (and the same for q, k, v)",
     "head_dim={D}, v head_dim={Dv}", "use one head_dim <= 256", "§4.1"},
    {"fa2.gqa_divisible", B::kFa2, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return c.in.Hkv == 0 || c.in.Hq % c.in.Hkv != 0; },
     "Number of heads in key/value must divide number of heads in query", "Hq={Hq}, Hkv={Hkv}", kFixGqaDivide,
     "§4.1"},
    {"fa2.attn_mask", B::kFa2, "flash_attn_func", kAny, kOpen, kAll, [](const C& c) { return c.has_mask(); },
     "FlashAttention-2 takes no attention-mask tensor (causal, sliding window, ALiBi and varlen only)",
     "attn_mask={mask}",
     "for padding, unpad and call flash_attn_varlen_func (transformers attn_implementation=\"flash_attention_2\" "
     "does this)",
     "§4.1, §5.3"},

    // ---------------- FlashAttention-3 (hopper/, flash_attn_3), §4.2 ------------------------------
    {"fa3.arch", B::kFa3, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return !c.cuda() || c.sm() < 80 || c.sm() >= 100; },
     "FlashAttention-3 runs on sm80-sm90 (built for Hopper); Blackwell needs FlashAttention-4", "arch={arch}",
     "run on an H100/H200 (sm90)", "§4.2"},
    {"fa3.dtype", B::kFa3, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return !(c.half_type() || (c.in.dtype == "fp8_e4m3" && c.sm() >= 90)); },
     "FlashAttention on Ampere/Ada cards only supports fp16 and bf16 data type", "dtype={dtype}",
     "use bf16/fp16 (fp8 e4m3 forward on sm90)", "§4.2"},
    {"fa3.fp8_backward", B::kFa3, "mha_bwd", kAny, kOpen, kAll,
     [](const C& c) { return c.in.dtype == "fp8_e4m3" && c.in.requires_grad; },
     "FA3 backward does not support fp8 - use inference only (torch.no_grad())", "fp8 with requires_grad",
     "train in bf16; use fp8 for inference only", "§3.3"},
    {"fa3.head_dim", B::kFa3, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return c.in.D > 256 || c.in.D % (c.in.dtype == "fp8_e4m3" ? 16 : 8) != 0; },
     "FlashAttention-3 needs head_dim <= 256 and a multiple of 8 (16 for fp8)", "head_dim={D}",
     "pad head_dim to {D_pad8} (<= 256)", "§4.2"},
    {"fa3.head_dim_v", B::kFa3, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) {
       if (c.in.D == c.in.Dv) return false;
       const bool pair = (c.in.D > 128 && c.in.D <= 192 && c.in.Dv > 96 && c.in.Dv <= 128) ||
                         (c.in.D <= 64 && c.in.Dv <= 512);
       return !(c.sm() == 90 && pair);
     },
     "Only Hopper supports different V headdim", "head_dim={D}, v head_dim={Dv}", "use the same head_dim for v",
     "§4.2"},
    {"fa3.dropout", B::kFa3, "flash_attn_func", kAny, kOpen, kAll, [](const C& c) { return c.in.dropout > 0; },
     "FlashAttention-3 has no dropout", "dropout={dropout}", "train without attention dropout", "§4.2"},
    {"fa3.attn_mask", B::kFa3, "flash_attn_func", kAny, kOpen, kAll, [](const C& c) { return c.has_mask(); },
     "FlashAttention-3 takes no attention-mask tensor (causal, window, varlen only)", "attn_mask={mask}",
     "for padding use flash_attn_varlen_func (cu_seqlens)", "§4.2"},
    {"fa3.gqa_divisible", B::kFa3, "mha_fwd", kAny, kOpen, kAll,
     [](const C& c) { return c.in.Hkv == 0 || c.in.Hq % c.in.Hkv != 0; },
     "Number of heads in key/value must divide number of heads in query", "Hq={Hq}, Hkv={Hkv}", kFixGqaDivide,
     "§4.2"},

    // ---------------- xFormers memory_efficient_attention, §4.3 -----------------------------------
    {"xformers.device", B::kXformers, "memory_efficient_attention", kAny, kOpen, kAll,
     [](const C& c) { return !c.cuda() && !c.rocm(); }, "xFormers fused attention needs a CUDA or ROCm device",
     "device={arch}", "run on a GPU", "§4.3"},
    {"xformers.dtype", B::kXformers, "memory_efficient_attention", kAny, kOpen, kAll,
     [](const C& c) { return !(c.half_type() || c.in.dtype == "fp32"); },
     "No operator found for `memory_efficient_attention_forward`: dtype not supported", "dtype={dtype}",
     "use fp16, bf16 or fp32", "§4.3"},
    {"xformers.newer_than_sm90", B::kXformers, "memory_efficient_attention", kAny, kOpen, kCuda,
     [](const C& c) {
       // cutlassF stops at CC 9.0; above it only the flash operator is left.
       const bool flash_op = c.half_type() && c.in.D <= 256 && c.in.D % 8 == 0 && c.in.D == c.in.Dv && !c.has_mask();
       return c.sm() > 90 && !flash_op;
     },
     "No operator found for `memory_efficient_attention_forward`: cutlassF supports up to CC 9.0 and fa2F needs "
     "fp16/bf16, head_dim <= 256 multiple of 8, no tensor bias",
     "sm{sm}, dtype={dtype}, head_dim={D}, mask={mask}", "use bf16/fp16 with head_dim <= 256 and no tensor bias",
     "§4.3"},

    // ---------------- FlexAttention, §4.4 ---------------------------------------------------------
    {"flex.torch_version", B::kFlex, "flex_attention", kAny, kOpen, kAll,
     [](const C& c) { return !c.torch_at_least(2, 5); }, "FlexAttention needs torch 2.5 or newer", "torch {torch}",
     "upgrade torch to >= 2.5", "§4.4"},
    {"flex.dropout", B::kFlex, "flex_attention", kAny, kOpen, kAll, [](const C& c) { return c.in.dropout > 0; },
     "flex_attention has no dropout argument", "dropout={dropout}", "train without attention dropout", "§4.4"},
});

}  // namespace

std::span<const Rule> all_rules() { return kRules; }

const Rule* find_rule(std::string_view id) {
  for (const Rule& r : kRules)
    if (id == r.id) return &r;
  return nullptr;
}

}  // namespace attnprof::rules
