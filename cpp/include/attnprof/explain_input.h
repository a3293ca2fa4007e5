// What `attnprof explain` reads: shape arguments ("B,H,S,D"), dtype and mask names, and a
// batch of JSON lines (the fields of the grid rows in shared/fixtures/h200-torch2.11/
// sdpa_grid_cuda_sample.json), and the JSON it writes per decision.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/rules.h"

namespace attnprof::rules {

// "2,8,1024,64": comma-separated non-negative integers; `want` of them unless 0. `flag` names
// the argument in errors ("--q").
Result<std::vector<int64_t>> parse_dims(std::string_view text, std::string_view flag, size_t want);
Result<MaskKind> parse_mask(std::string_view mask);
Result<std::string> parse_dtype(std::string_view dtype);  // "float16" -> "fp16", ...

// The shapes of q, k, v and the mask are tensors PyTorch could hold: every numel fits int64_t.
Status check_shapes(const SdpaInput& input);

// One decision as JSON (fused_choice, can_use_*_attention), with `fix` when non-empty.
std::string decision_json_text(const Decision& decision, const Env& env, const std::string& fix);

// A batch: one JSON object per line in, one JSON line per row out (the decision, and the row's
// "row" field when it has one). Errors name `label`, the line and the field.
Result<std::string> explain_batch(std::string_view text, const std::string& label, const Env& base);

}  // namespace attnprof::rules
