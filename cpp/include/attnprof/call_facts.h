// How every output and the run comparison name a call's facts: its shape, its explanation, its
// backend class, its window verdicts, its kernels' correlation ids. One spelling each, in the
// report stage, so that the renderers, the comparison (compare.h) and the analyses that group
// calls by shape (scaling) or verdict (heads) all read the same words.
#pragma once

#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "attnprof/report.h"

namespace attnprof {

// "B4 H32/8 S2048x2048 D128 bf16" from what is known of the shape; "" when nothing is.
std::string shape_text(const Shape& shape);

// One call's explanation, a line per fact: the rules' prediction, the consistency note, each
// failed rule of each backend with its value, message and fix, the fix with its gain, the
// assumptions. Empty for a call without one.
std::vector<std::string> explanation_lines(const Call& call);

// "~2.8x faster, ~2.2x less activation memory (basis)" (the memory part only where estimated);
// "" when no gain is estimated.
std::string expected_gain_text(const Explanation& e);

// The lines of explanation_lines that say why the call did not run one of `backends`: each
// failed rule of those backends; when the rules rejected none of them, the consistency note
// and the fix. Empty for a call without an explanation.
std::vector<std::string> rejection_lines(const Call& call, std::span<const std::string> backends);

// How a call is coloured everywhere attnprof draws it (dashboard, annotated trace, the run
// comparison): "fused" (one fused attention kernel: flash, efficient, cudnn, cpu_flash, flex,
// ...), "eager" (the model's own matmul/softmax code), "fallback" (SDPA's unfused math path and
// anything else that is not fused).
namespace backend_class {
inline constexpr const char* kFused = "fused";
inline constexpr const char* kFallback = "fallback";
inline constexpr const char* kEager = "eager";
}  // namespace backend_class
const char* backend_class_of(const Call& call);

// The slower of two backend classes ("" = none yet): eager over fallback over fused.
std::string worse_backend_class(const std::string& a, const std::string& b);

// The layer's first call, or nullptr when the layer names no valid call (a Report read back
// from JSON may be inconsistent).
const Call* first_call_of(const std::vector<Call>& calls, const Layer& layer);

// Sliding-window verdicts with the same text (the same mask on every layer, usually) merged:
// the first of each in order, with the layers that share it. The outputs list them so, and the
// heads stage makes one finding per group.
struct WindowVerdictGroup {
  const WindowEffectiveness* first;
  std::vector<int64_t> layers;
};
std::vector<WindowVerdictGroup> group_window_verdicts(const std::vector<WindowEffectiveness>& verdicts);

// The correlation ids of the Report's kernels: the device events the annotated trace draws an
// arrow to (scan_trace_layout, ingest.h).
std::unordered_set<int64_t> kernel_correlations(const Report& report);

}  // namespace attnprof
