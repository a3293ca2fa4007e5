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
#include "attnprof/table.h"

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

// One `explain` question as every front end spells it (the CLI's flags, attnprof.explain's
// keywords): shapes as "B,H,S,D", names as in the vocabulary. k defaults to q, v to k.
struct ExplainRequest {
  std::string q, k, v, dtype = "bf16", mask = "none", mask_shape, backends;
  bool causal = false, gqa = false, grad = false, nested = false, deterministic = false;
  double dropout = 0;
  std::string arch = "sm90", torch = "2.11", cudnn = "9.19";
};

// "flash,efficient,cudnn,math" as sdpa_kernel([...]) enables them; "" = all.
Result<EnabledBackends> parse_backends(std::string_view list);
Result<Env> env_of(const ExplainRequest& request);
Result<SdpaInput> input_of(const ExplainRequest& request);

// SDPA's decision for one request, with the explanation the Report would give.
struct ExplainAnswer {
  SdpaInput input;
  Env env;
  Decision decision;
  Explanation explanation;
  // Every backend's verdict, SDPA's first: one row per rule a backend failed, one for an eligible
  // backend (backend, verdict, rule, value, why, fix). The Markdown and CSV forms show it.
  Table verdicts;
};
Result<ExplainAnswer> explain_request(const ExplainRequest& request);
std::string explain_text(const ExplainAnswer& answer);
std::string explain_markdown(const ExplainAnswer& answer);
std::string explain_json(const ExplainAnswer& answer);  // decision_json_text with the fix

}  // namespace attnprof::rules
