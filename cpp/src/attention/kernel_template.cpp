// What a templated kernel name spells: the library's own name for the kernel (a wrapper such as
// cutlass::device_kernel<X> is named by X) and the facts its template arguments or its name fix
// (head dim, tile, dtype, causal, split-KV, paged, varlen). docs/backends.md, "Kernel names and
// their templates", lists the families with the source files their parameter orders come from.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/attention.h"
#include "attnprof/kernel_names.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

using kernel_names::cute_dsl_class;
using kernel_names::flag;
using kernel_names::kCuteDslMarker;
using kernel_names::number;
using kernel_names::template_args;
using kernel_names::unwrapped;

// The arguments of the first template named `tmpl` anywhere in `name`.
std::vector<std::string_view> args_of(std::string_view name, std::string_view tmpl) {
  for (size_t at = name.find(tmpl); at != std::string_view::npos; at = name.find(tmpl, at + 1)) {
    const size_t after = at + tmpl.size();
    if (after < name.size() && name[after] == '<') return template_args(name.substr(at));
  }
  return {};
}

// The dtype of the first element type the template names (CUTLASS, CUDA, HIP and c10 spellings).
std::string dtype_in(std::string_view name) {
  struct Spelling {
    std::string_view text, dtype;
  };
  constexpr Spelling kSpellings[] = {{"cutlass::bfloat16_t", "bf16"}, {"__nv_bfloat16", "bf16"}, {"__hip_bfloat16", "bf16"},
                                     {"c10::BFloat16", "bf16"},       {"cutlass::half_t", "fp16"}, {"__half", "fp16"},
                                     {"c10::Half", "fp16"},           {"cutlass::float_e4m3_t", "fp8_e4m3"},
                                     {"__nv_fp8_e4m3", "fp8_e4m3"},   {"cutlass::float_e5m2_t", "fp8_e5m2"},
                                     {"ck_tile::bf16_t", "bf16"},      {"ck_tile::fp16_t", "fp16"},
                                     {"ck_tile::fp8_t", "fp8_e4m3"}};
  size_t best = std::string_view::npos;
  std::string dtype;
  for (const Spelling& s : kSpellings)
    if (const size_t at = name.find(s.text); at < best) best = at, dtype = std::string(s.dtype);
  return dtype;
}

// Words of a name as has_attention_vocabulary splits them ("QkvE4m3OBfloat16H64Paged" -> Qkv E 4
// m 3 O Bfloat 16 H 64 Paged), for names that spell facts in words (TensorRT-LLM, aiter).
std::vector<std::string_view> words(std::string_view s) {
  auto kind = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return std::isdigit(u) ? 1 : std::isupper(u) ? 2 : std::islower(u) ? 3 : 0;
  };
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    const int here = i < s.size() ? kind(s[i]) : 0;
    const int before = i > 0 ? kind(s[i - 1]) : 0;
    const bool boundary = here == 0 || (i > 0 && ((here == 1) != (before == 1) || (here == 2 && before == 3)));
    if (!boundary) continue;
    if (i > start && kind(s[start]) != 0) out.push_back(s.substr(start, i - start));
    start = here == 0 ? i + 1 : i;
  }
  return out;
}

// The number word right after word `w` (a "H", "64" pair), 0 when none.
int64_t number_after(const std::vector<std::string_view>& ws, std::string_view w) {
  for (size_t i = 0; i + 1 < ws.size(); ++i)
    if (ws[i] == w)
      if (auto n = number(ws[i + 1])) return *n;
  return 0;
}

bool has_word(const std::vector<std::string_view>& ws, std::string_view w) {
  return std::find(ws.begin(), ws.end(), w) != ws.end();
}

// FlashAttention 2 and PyTorch's vendored copy: Flash_fwd_kernel_traits<kHeadDim, kBlockM,
// kBlockN, kNWarps, ...> (csrc/flash_attn/src/kernel_traits.h); flash_fwd_kernel<Kernel_traits,
// Is_dropout, Is_causal, Is_local, ...> (flash_fwd_launch_template.h); flash_fwd_splitkv_kernel<
// Kernel_traits, Is_causal, Is_local, ...>.
bool read_fa2(std::string_view name, KernelTemplate& t) {
  std::vector<std::string_view> traits = args_of(name, "Flash_fwd_kernel_traits");
  if (traits.empty()) traits = args_of(name, "Flash_bwd_kernel_traits");
  if (traits.size() < 3) return false;
  t.head_dim = number(traits[0]).value_or(0);
  t.tile_m = number(traits[1]).value_or(0);
  t.tile_n = number(traits[2]).value_or(0);
  const std::string_view function = name.substr(0, name.find('<'));
  const std::vector<std::string_view> args = template_args(name);
  if (function.ends_with("flash_fwd_splitkv_kernel")) {
    t.split_kv = 1;
    if (args.size() > 1) t.causal = flag(args[1]);
    if (args.size() > 2) t.local = flag(args[2]);
  } else if (function.ends_with("flash_fwd_kernel") && args.size() > 2) {
    t.split_kv = 0;
    t.causal = flag(args[2]);
    if (args.size() > 3) t.local = flag(args[3]);
  }
  return true;
}

// FlashAttention 3 (hopper/): the mainloop's TileShape_MNK, cute::tuple<cute::C<kBlockM>,
// cute::C<kBlockN>, cute::C<kHeadDim>> (flash_fwd_launch_template.h, flash_bwd_launch_template.h),
// beside a ClusterShape of the same form (1 or 2 x 1 x 1): the tile is the larger. The forward
// mainloop's next argument is kHeadDimV (mainloop_fwd_sm90_tma_gmma_ws.hpp: CollectiveMainloopFwdSm90<
// Stages, ClusterShape, TileShape_MNK, kHeadDimV, Element, ...>).
bool read_fa3(std::string_view name, KernelTemplate& t) {
  if (name.find("FlashAttn") == std::string_view::npos) return false;
  auto c = [](std::string_view a) {
    const std::vector<std::string_view> v = template_args(a);
    return a.starts_with("cute::C<") && v.size() == 1 ? number(v[0]).value_or(0) : 0;
  };
  int64_t best = 0;
  for (size_t at = name.find("cute::tuple<"); at != std::string_view::npos; at = name.find("cute::tuple<", at + 1)) {
    const std::vector<std::string_view> tile = template_args(name.substr(at));
    if (tile.size() != 3) continue;
    const int64_t m = c(tile[0]), n = c(tile[1]), k = c(tile[2]);
    if (m * n * k <= best) continue;
    best = m * n * k;
    t.tile_m = m, t.tile_n = n, t.head_dim = k;
  }
  const std::vector<std::string_view> fwd = args_of(name, "flash::CollectiveMainloopFwdSm90");
  if (fwd.size() > 3) t.head_dim_v = number(fwd[3]).value_or(0);
  return t.head_dim > 0;
}

// vLLM's paged attention (csrc/attention/attention_kernels.cuh): paged_attention_v1_kernel<scalar_t,
// cache_t, HEAD_SIZE, BLOCK_SIZE, NUM_THREADS, KV_DTYPE, ...>; v2 splits the keys into partitions.
bool read_vllm_paged(std::string_view name, KernelTemplate& t) {
  const std::string_view function = name.substr(0, name.find('<'));
  const bool v1 = function.ends_with("paged_attention_v1_kernel"), v2 = function.ends_with("paged_attention_v2_kernel");
  if (!v1 && !v2) return false;
  const std::vector<std::string_view> args = template_args(name);
  if (args.size() > 2) t.head_dim = number(args[2]).value_or(0);
  t.paged = 1;
  t.split_kv = v2 ? 1 : 0;
  return true;
}

void read_trtllm_words(std::string_view name, const std::vector<std::string_view>& ws, KernelTemplate& t) {
  t.head_dim = number_after(ws, "H");
  t.tile_m = number_after(ws, "Q");
  t.tile_n = number_after(ws, "Kv");
  if (has_word(ws, "Paged")) t.paged = 1;
  if (has_word(ws, "Causal")) t.causal = 1;
  if (has_word(ws, "Sliding")) t.local = 1;  // "SlidingOrChunkedCausal": the window is a runtime argument
  if (has_word(ws, "Var") && has_word(ws, "Seq")) t.varlen = 1;
  const size_t qkv = name.find("Qkv");
  const std::string_view after = qkv == std::string_view::npos ? std::string_view() : name.substr(qkv + 3);
  if (after.starts_with("E4m3")) t.dtype = "fp8_e4m3";
  else if (after.starts_with("Bfloat16")) t.dtype = "bf16";
  else if (after.starts_with("Fp16")) t.dtype = "fp16";
}

void read_aiter_words(const std::vector<std::string_view>& ws, KernelTemplate& t) {
  t.head_dim = number_after(ws, "hd");
  if (has_word(ws, "bf")) t.dtype = "bf16";
  else if (has_word(ws, "fp") && number_after(ws, "fp") == 16) t.dtype = "fp16";
}

// Names that spell their facts in words: TensorRT-LLM's generated fmha kernels
// (fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext:
// QKV dtype, head dim H, paged KV, causal, varlen, tile Q x Kv) and aiter's (fmha_fwd_hd128_bf16).
bool read_words(std::string_view name, KernelTemplate& t) {
  const std::vector<std::string_view> ws = words(name);
  const bool trtllm = name.starts_with("fmhaSm") || name.find("fmha_v2_") != std::string_view::npos;
  const bool aiter = name.find("aiter::") != std::string_view::npos;
  if (!trtllm && !aiter) return false;
  if (trtllm) read_trtllm_words(name, ws, t);
  else read_aiter_words(ws, t);
  return t.head_dim > 0 || t.paged > 0 || !t.dtype.empty();
}

// vLLM's ROCm paged attention (csrc/rocm/attention.cu): paged_attention_ll4mi_QKV_mfma16_kernel and
// _mfma4_kernel<scalar_t, cache_t, KV_DTYPE, OUTT, BLOCK_SIZE, HEAD_SIZE, NUM_THREADS,
// ALIBI_ENABLED, GQA_RATIO>; the keys are always cut into 256-token partitions that
// paged_attention_ll4mi_reduce_kernel merges, so the kernel is split-KV.
bool read_vllm_ll4mi(std::string_view name, KernelTemplate& t) {
  const std::string_view function = name.substr(0, name.find('<'));
  if (function.find("paged_attention_ll4mi_QKV") == std::string_view::npos) return false;
  const std::vector<std::string_view> args = template_args(name);
  if (args.size() > 5) t.head_dim = number(args[5]).value_or(0);
  t.paged = 1;
  t.split_kv = 1;
  return true;
}

// PyTorch's memory-efficient attention, vendored from xFormers (aten/src/ATen/native/transformers/
// cuda/mem_eff_attention/kernel_forward.h: AttentionKernel<scalar_t, ArchTag, isAligned,
// kQueriesPerBlock, kKeysPerBlock, kMaxK, ...>; kernel_backward.h: AttentionBackwardKernel<ArchTag,
// scalar_t, kIsAligned, kApplyDropout, kPreload, kBlockSizeI, kBlockSizeJ, kMaxK, ...>). kMaxK is
// an upper bound of the head dim, not the head dim, so only the tile is read. The kernel's own
// name spells the dtype: fmha_cutlassF_bf16_aligned_64x128_rf_sm80.
bool read_cutlass_fmha(std::string_view full_name, KernelTemplate& t) {
  if (std::vector<std::string_view> f = args_of(full_name, "AttentionKernel"); f.size() > 4) {
    t.tile_m = number(f[3]).value_or(0);
    t.tile_n = number(f[4]).value_or(0);
  } else if (std::vector<std::string_view> b = args_of(full_name, "AttentionBackwardKernel"); b.size() > 6) {
    t.tile_m = number(b[5]).value_or(0);
    t.tile_n = number(b[6]).value_or(0);
  } else {
    return false;
  }
  const std::vector<std::string_view> ws = words(full_name.substr(0, full_name.find('(')));
  if (has_word(ws, "bf")) t.dtype = "bf16";
  else if (number_after(ws, "f") == 16) t.dtype = "fp16";
  else if (number_after(ws, "f") == 32) t.dtype = "fp32";
  return true;
}

// CK-tile's fused attention (composable_kernel include/ck_tile/ops/fmha/pipeline/tile_fmha_shape.hpp):
// TileFmhaShape<sequence<kM0, kN0, kK0, kN1, kK1, kQKHeaddim>, ...>: kM0 x kN0 the query x key
// tile, the sixth entry the whole QK head dim.
bool read_ck_tile(std::string_view name, KernelTemplate& t) {
  if (name.find("ck_tile::Fmha") == std::string_view::npos) return false;
  const std::vector<std::string_view> shape = args_of(name, "ck_tile::TileFmhaShape");
  if (shape.empty() || !shape[0].starts_with("ck_tile::sequence<")) return false;
  const std::vector<std::string_view> tile = template_args(shape[0]);
  if (tile.size() < 6) return false;
  t.tile_m = number(tile[0]).value_or(0);
  t.tile_n = number(tile[1]).value_or(0);
  t.head_dim = number(tile[5]).value_or(0);
  return true;
}

// FlashInfer (include/flashinfer/attention/decode.cuh): BatchDecodeWithPagedKVCacheKernel<
// POS_ENCODING_MODE, num_stages_smem, tile_size_per_bdx, vec_size, bdx, bdy, bdz, ...>, head dim =
// bdx * vec_size; prefill.cuh: Batch/SinglePrefillWith...Kernel<KernelTraits<MASK_MODE, CTA_TILE_Q,
// NUM_MMA_Q, NUM_MMA_KV, NUM_MMA_D_QK, NUM_MMA_D_VO, NUM_WARPS_Q, NUM_WARPS_KV, ...>, ...>, head
// dims = NUM_MMA_D_* x 16, key tile = NUM_MMA_KV x NUM_WARPS_KV x 16, MaskMode 1 = kCausal (mask.cuh).
bool read_flashinfer(std::string_view name, KernelTemplate& t) {
  const std::string_view function = name.substr(0, name.find('<'));
  const bool decode = function.find("DecodeWith") != std::string_view::npos;
  const bool prefill = function.find("PrefillWith") != std::string_view::npos;
  if (!decode && !prefill) return false;
  if (function.find("Paged") != std::string_view::npos) t.paged = 1;
  if (function.find("Ragged") != std::string_view::npos) t.varlen = 1;
  if (decode) {
    const std::vector<std::string_view> args = template_args(name);
    auto pos = std::find_if(args.begin(), args.end(), [](std::string_view a) { return a.find("PosEncodingMode") != a.npos; });
    if (args.end() - pos > 4) t.head_dim = number(pos[3]).value_or(0) * number(pos[4]).value_or(0);
    return true;
  }
  const std::vector<std::string_view> traits = args_of(name, "KernelTraits");
  if (traits.size() < 8) return true;
  t.causal = number(traits[0]) == 1 ? 1 : 0;
  t.tile_m = number(traits[1]).value_or(0);
  t.tile_n = number(traits[3]).value_or(0) * number(traits[7]).value_or(0) * 16;
  t.head_dim = number(traits[4]).value_or(0) * 16;
  t.head_dim_v = number(traits[5]).value_or(0) * 16;
  return true;
}


// The readable prefix of a CuTe DSL kernel name, '_'-separated.
std::vector<std::string_view> cute_dsl_labels(std::string_view name) {
  std::vector<std::string_view> labels;
  std::string_view prefix = name.substr(0, name.find(kCuteDslMarker));
  for (size_t at = prefix.find('_'); !prefix.empty(); at = prefix.find('_')) {
    labels.push_back(prefix.substr(0, at));
    prefix.remove_prefix(at == std::string_view::npos ? prefix.size() : at + 1);
  }
  return labels;
}

// The fact label `i` (with the two after it) spells, if any.
void read_cute_dsl_label(const std::vector<std::string_view>& labels, size_t i, KernelTemplate& t) {
  const std::string_view label = labels[i];
  const std::string_view next = i + 1 < labels.size() ? labels[i + 1] : std::string_view();
  const std::string_view after = i + 2 < labels.size() ? labels[i + 2] : std::string_view();
  if (label == "head" && next.starts_with("dim") && next.size() > 3) {  // head_dim128
    t.head_dim = number(next.substr(3)).value_or(0);
  } else if (label == "head" && next == "dim" && after.starts_with("v")) {  // head_dim_v64
    t.head_dim_v = number(after.substr(1)).value_or(0);
  } else if (label.starts_with("tile") && label.find('x') != std::string_view::npos) {  // tile128x128
    t.tile_m = number(label.substr(4, label.find('x') - 4)).value_or(0);
    t.tile_n = number(label.substr(label.find('x') + 1)).value_or(0);
  } else if (label == "causal") {
    t.causal = 1;
  } else if (label == "bf16" || label == "fp16") {
    t.dtype = std::string(label);
  } else if (label == "e4m3") {
    t.dtype = "fp8_e4m3";
  }
}

bool read_cute_dsl(std::string_view name, KernelTemplate& t) {
  if (cute_dsl_class(name).empty()) return false;
  const std::vector<std::string_view> labels = cute_dsl_labels(name);
  for (size_t i = 0; i < labels.size(); ++i) read_cute_dsl_label(labels, i, t);
  return true;
}

}  // namespace


std::optional<KernelTemplate> read_kernel_template(std::string_view kernel_name, const CatalogExtension* extension) {
  const std::string_view function = unwrapped(kernel_function_name(kernel_name));
  KernelTemplate t;
  const bool read = read_fa3(function, t) || read_fa2(function, t) || read_vllm_paged(function, t) ||
                    read_vllm_ll4mi(function, t) || read_ck_tile(function, t) || read_flashinfer(function, t) ||
                    read_cute_dsl(function, t) || read_cutlass_fmha(kernel_name, t) || read_words(function, t);
  if (!read) return std::nullopt;
  t.name = kernel_display_name(kernel_name);
  if (const KernelPattern* p = classify_kernel(kernel_name, extension)) t.library = std::string(p->library);
  if (t.dtype.empty()) t.dtype = dtype_in(function);
  return t;
}

void apply_kernel_template(Call& call, KernelTemplates* known, const CatalogExtension* extension) {
  KernelTemplates local;
  KernelTemplates& templates = known ? *known : local;
  for (const KernelRef& k : call.kernels) {
    if (k.component != component::kFused) continue;
    auto [it, added] = templates.try_emplace(k.name);
    if (added) {  // a main kernel's name, read once per name; an auxiliary kernel's stays unread
      const KernelPattern* p = classify_kernel(k.name, extension);
      it->second.main = p && p->part == KernelPart::kMain;
      if (it->second.main) it->second.facts = read_kernel_template(k.name, extension);
    }
    if (!it->second.main) continue;
    std::optional<KernelTemplate> t = it->second.facts;
    if (!t) return;
    // Recorded Input Dims win; the template fills only what the trace lacks.
    if (call.shape.D == 0 && t->head_dim > 0) call.shape.D = t->head_dim;
    if (call.shape.Dv == 0 && t->head_dim_v > 0) call.shape.Dv = t->head_dim_v;
    if (call.shape.dtype.empty()) call.shape.dtype = t->dtype;
    // A kernel compiled causal applies the mask whatever the op records (serving ops pass it
    // in their metadata, not as an argument).
    if (t->causal == 1) call.causal = true;
    call.kernel_template = std::move(*t);
    return;
  }
}

}  // namespace attnprof
