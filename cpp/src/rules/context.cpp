#include "rules/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>

#include "attnprof/vocabulary.h"

namespace attnprof::rules {
namespace {

constexpr Version kTorchMain{2, 14, 0};  // first release assumed to carry the main-2026 checks

std::string sizes(int64_t b, int64_t h, int64_t s, int64_t d) {
  return fmt::format("[{}, {}, {}, {}]", b, h, s, d);
}

// How PyTorch prints a TypeMeta in dtype messages.
std::string type_meta_name(std::string_view dtype) {
  const DtypeWord* w = dtype_word(dtype);
  return std::string(w ? w->type_meta : dtype);
}

// Saturates rather than overflows: head dims come from the command line and batch files.
int64_t round_up(int64_t v, int64_t m) {
  int64_t sum = 0;
  if (__builtin_add_overflow(v, m - 1, &sum)) return std::numeric_limits<int64_t>::max() / m * m;
  return sum / m * m;
}

}  // namespace

int RuleContext::flash_max_sm() const { return torch_at_least(2, 7) ? 121 : 90; }
int RuleContext::mem_efficient_max_sm() const { return torch_at_least(2, 7) ? 121 : 90; }
int RuleContext::cudnn_max_sm() const { return torch_at_least(2, 7) ? 121 : 90; }

int64_t RuleContext::flash_max_head_dim() const {
  // AOTriton >= 0.9 (assumed from torch 2.9) raises the ROCm limit to 512.
  if (rocm() && torch_at_least(2, 9)) return 512;
  return 256;
}

bool RuleContext::cudnn_d256_capable() const {
  if (!cuda() || env.torch < kTorchMain) return false;
  const int code = cudnn_code(env.cudnn);
  const bool arch = sm() == 90 || sm() / 10 == 10;
  const bool sm107_old = sm() == 107 && code <= 92500;
  return arch && !sm107_old && code > 92200;
}

int64_t RuleContext::cudnn_max_head_dim() const {
  const int code = cudnn_code(env.cudnn);
  if (!torch_at_least(2, 5)) return code >= 90000 ? 256 : 128;
  if (!torch_at_least(2, 9)) return 128;
  if (env.torch < kTorchMain) return (code >= 91000 && sm() == 90) ? 256 : 128;
  if (cudnn_d256_capable()) return 256;
  const bool arch = sm() == 90 || sm() / 10 == 10;
  if (arch && code >= 91100 && in.D == 192 && in.Dv == 128) return 192;
  return 128;
}

int64_t RuleContext::mem_efficient_alignment() const {
  const int64_t bits = in.dtype == "fp32" ? 32 : in.dtype == "fp64" ? 64 : 16;
  if (rocm()) return bits == 16 ? 8 : 4;
  if (sm() >= 80) return std::max<int64_t>(4, 128 / bits);
  if (sm() >= 70) return bits == 16 ? 8 : 1;
  return 1;
}

bool RuleContext::gqa_path_taken(Backend b) const {
  if (!in.enable_gqa || !torch_at_least(2, 5)) return false;
  switch (b) {
    case Backend::kFlash:
    case Backend::kCpuFlash: return true;
    case Backend::kCudnn: return torch_at_least(2, 9);
    case Backend::kEfficient: return cuda() && env.torch >= kTorchMain;
    default: return false;
  }
}

bool RuleContext::mqa_broadcast_ok(Backend b) const {
  if (in.Hkv != 1 || env.torch < kTorchMain) return false;
  return b != Backend::kEfficient || cuda();
}

bool RuleContext::mask_shape_ok() const {
  if (!has_mask() || in.mask_dims.empty()) return true;
  const auto& d = in.mask_dims;
  auto fits = [](int64_t v, int64_t full) { return v == full || v == 1; };
  if (d.size() == 2) return fits(d[0], in.Sq) && fits(d[1], in.Skv);
  if (d.size() == 4)
    return fits(d[0], in.B) && fits(d[1], in.Hq) && fits(d[2], in.Sq) && fits(d[3], in.Skv);
  return false;
}

bool RuleContext::last_dim_stride_ok(bool ignore_singleton) const {
  auto ok = [&](int64_t stride, int64_t size) { return stride == 1 || (ignore_singleton && size == 1); };
  return ok(in.q_stride_last, in.D) && ok(in.k_stride_last, in.D) && ok(in.v_stride_last, in.Dv);
}

bool RuleContext::rocm_aotriton_arch() const {
  static constexpr std::array<std::string_view, 2> kStable = {"gfx90a", "gfx942"};
  const std::string& g = env.device.gfx;
  if (std::find(kStable.begin(), kStable.end(), g) != kStable.end()) return true;
  return g == "gfx950" && torch_at_least(2, 8);
}

// long: one line per placeholder the rule messages use (rule_table.cpp); the list is the table
std::string RuleContext::var(std::string_view name) const {
  const int64_t kv_heads = in.Hkv;
  if (name == "B") return std::to_string(in.B);
  if (name == "Hq") return std::to_string(in.Hq);
  if (name == "Hkv") return std::to_string(kv_heads);
  if (name == "Sq") return std::to_string(in.Sq);
  if (name == "Skv") return std::to_string(in.Skv);
  if (name == "D") return std::to_string(in.D);
  if (name == "Dv") return std::to_string(in.Dv);
  if (name == "D_pad8") return std::to_string(round_up(in.D, 8));
  if (name == "D_pad_align") return std::to_string(round_up(in.D, mem_efficient_alignment()));
  if (name == "q_sizes") return sizes(in.B, in.Hq, in.Sq, in.D);
  if (name == "k_sizes") return sizes(in.B, kv_heads, in.Skv, in.D);
  if (name == "v_sizes") return sizes(in.B, kv_heads, in.Skv, in.Dv);
  if (name == "q_dtype") return type_meta_name(in.dtype);
  if (name == "dtype") return in.dtype;
  if (name == "dropout") return fmt::format("{}", in.dropout);
  if (name == "mask") return mask_kind_name(in.mask);
  if (name == "mask_dims") return fmt::format("[{}]", fmt::join(in.mask_dims, ", "));
  if (name == "q_stride") return std::to_string(in.q_stride_last);
  if (name == "k_stride") return std::to_string(in.k_stride_last);
  if (name == "v_stride") return std::to_string(in.v_stride_last);
  if (name == "sm") return std::to_string(sm());
  if (name == "sm_dot") return fmt::format("{}.{}", sm() / 10, sm() % 10);
  if (name == "gfx") return env.device.gfx;
  if (name == "arch") return env.device.str();
  if (name == "flash_max_sm") return std::to_string(flash_max_sm());
  if (name == "mem_max_sm") return std::to_string(mem_efficient_max_sm());
  if (name == "cudnn_max_sm") return std::to_string(cudnn_max_sm());
  if (name == "flash_max_hd") return std::to_string(flash_max_head_dim());
  if (name == "cudnn_max_hd") return std::to_string(cudnn_max_head_dim());
  if (name == "mem_align") return std::to_string(mem_efficient_alignment());
  if (name == "flash_dtypes") return sm() >= 80 || rocm() ? "{Half, BFloat16}" : "{Half}";
  if (name == "mem_dtypes") return sm() >= 80 || rocm() ? "{Half, Float, BFloat16}" : "{Half, Float}";
  if (name == "cpu_dtypes") return "{Float, Double, BFloat16, Half}";
  if (name == "cudnn_code") return std::to_string(cudnn_code(env.cudnn));
  if (name == "torch") return env.torch.str();
  if (name == "cuDNN") return torch_at_least(2, 7) ? "cuDNN" : "CuDNN";
  return "{" + std::string(name) + "}";
}

std::string expand(std::string_view text, const RuleContext& ctx) {
  std::string out;
  out.reserve(text.size() + 32);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') {
      const size_t close = text.find('}', i);
      const std::string_view name = close == std::string_view::npos ? "" : text.substr(i + 1, close - i - 1);
      // Only identifiers are placeholders: "{Half, BFloat16}" in a message stays literal.
      const bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (ident) {
        out += ctx.var(name);
        i = close;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

}  // namespace attnprof::rules
