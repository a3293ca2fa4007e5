// Why a backend ran and what would be faster. Filled by cpp/src/rules.
#pragma once

#include <string>
#include <vector>

namespace attnprof {

struct RuleCheck {
  std::string rule;     // stable rule id, e.g. "flash.head_dim_limit"
  std::string message;  // PyTorch's own words where PyTorch has them
  std::string value;    // the value that failed the rule ("head_dim=100")
  std::string fix;      // what to change ("pad head_dim to 104 or 128")
};

struct BackendVerdict {
  std::string backend;             // "flash", "efficient", "cudnn", "math", ...
  bool eligible = false;
  std::vector<RuleCheck> failed;   // empty when eligible
};

struct Explanation {
  std::string predicted_backend;   // what the rules say SDPA dispatches to
  bool consistent = true;          // predicted == backend seen in the trace / capture
  std::string consistency_note;    // set when they disagree: names the rule or assumption
  std::vector<BackendVerdict> backends;
  std::vector<std::string> assumptions;  // "torch 2.11 assumed (trace has no version)"
  std::string fix;                 // the single most useful change, "" when already best
  double expected_speedup = 0;     // e.g. 3.5 for "~3.5x faster"; 0 when unknown
  double expected_memory_ratio = 0;
  std::string gain_basis;          // where the expected gain comes from (measured / model)
};

}  // namespace attnprof
