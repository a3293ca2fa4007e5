// What the live capture (python/attnprof) recorded about one call. Filled by cpp/src/capture.
#pragma once

#include <string>

namespace attnprof {

struct CaptureInfo {
  std::string pytorch_choice;  // torch._fused_sdp_choice: "FLASH_ATTENTION", "MATH", ...
  std::string module_path;     // from forward pre-hooks
  std::string interface;       // "F.scaled_dot_product_attention", "transformers.eager", ...
  bool requires_grad = false;
  bool enable_gqa = false;
  bool last_dim_contiguous = true;
};

}  // namespace attnprof
