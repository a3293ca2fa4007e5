// What a rule condition sees: the input, the environment, and the facts derived from both
// (limits and alignments that depend on versions/arch). Private to cpp/src/rules.
#pragma once

#include <string>
#include <string_view>

#include "attnprof/rules.h"

namespace attnprof::rules {

struct RuleContext {
  const SdpaInput& in;
  const Env& env;

  bool cuda() const { return env.device.kind == DeviceKind::kCuda; }
  bool rocm() const { return env.device.kind == DeviceKind::kRocm; }
  int sm() const { return env.device.sm; }
  bool torch_at_least(int major, int minor) const { return env.torch >= Version{major, minor, 0}; }
  bool half_type() const { return in.dtype == "fp16" || in.dtype == "bf16"; }
  bool has_mask() const { return in.mask != MaskKind::kNone; }
  bool heads_differ() const { return in.Hq != in.Hkv; }

  // Version/arch dependent limits (docs/rules.md "Derived limits").
  int flash_max_sm() const;         // 90 up to torch 2.6, 121 from 2.7
  int mem_efficient_max_sm() const;
  int cudnn_max_sm() const;
  int64_t flash_max_head_dim() const;
  int64_t cudnn_max_head_dim() const;
  int64_t mem_efficient_alignment() const;  // minimum_gemm_alignment()
  bool cudnn_d256_capable() const;          // the torch>=2.14 d256 path is active

  // GQA/MQA acceptance of check_batch_size_and_num_heads_dense per backend and version.
  bool gqa_path_taken(Backend b) const;  // enable_gqa and the backend supports GQA here
  bool mqa_broadcast_ok(Backend b) const;

  bool mask_shape_ok() const;
  bool last_dim_stride_ok(bool ignore_singleton) const;
  bool rocm_aotriton_arch() const;

  // {name} placeholders of messages/fixes.
  std::string var(std::string_view name) const;
};

// Replaces every {name} in `text` by ctx.var(name).
std::string expand(std::string_view text, const RuleContext& ctx);

}  // namespace attnprof::rules
