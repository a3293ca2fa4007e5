// Work inside a fused attention call that is not its attention kernel (docs/cost.md, "Kernel
// time and call time"): SDPA converts a bool mask on every call (fill, where, memset), copies
// a mask or an input into the layout the kernel takes, casts a dtype. The call's TFLOP/s then
// hides that the kernel is fast and this work is the waste; the mask the calls pass says what
// removes it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "attnprof/cost.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

constexpr size_t kKernelsNamed = 3;

enum class Fix { kCausalFlag, kBlockMask, kFloatMaskOnce, kMaskLayout, kInputLayout };

Fix fix_for(const Call& call) {
  const MaskInfo& m = call.mask;
  if (!m.present) return Fix::kInputLayout;
  if (m.pattern == mask_pattern::kCausal) return Fix::kCausalFlag;
  if (m.pattern == mask_pattern::kSlidingWindow || m.pattern == mask_pattern::kBlock) return Fix::kBlockMask;
  if (m.kind == mask_kind::kBool) return Fix::kFloatMaskOnce;
  return Fix::kMaskLayout;
}

const char* fix_text(Fix fix) {
  switch (fix) {
    case Fix::kCausalFlag:
      return "the mask is causal: pass is_causal=True and no attn_mask, so nothing is converted and the kernel "
             "skips the masked tiles";
    case Fix::kBlockMask:
      return "the mask is a sliding window or blocks: build it once per forward as a FlexAttention BlockMask "
             "(torch.nn.attention.flex_attention.create_block_mask) and call flex_attention, which converts "
             "nothing per call and skips the masked blocks";
    case Fix::kFloatMaskOnce:
      return "the bool mask is converted on every call: convert it once per forward to an additive float mask "
             "in the attention dtype (0 where kept, -inf where masked) and pass that to every layer; where the mask "
             "is causal, is_causal=True instead; where it is a sliding window or blocks, a FlexAttention BlockMask "
             "(create_block_mask) built once";
    case Fix::kMaskLayout:
      return "the mask is copied or cast on every call: build it once per forward in the attention dtype, "
             "contiguous, in a shape that broadcasts to (B, Hq, Sq, Skv), and reuse it in every layer";
    case Fix::kInputLayout:
      return "no mask is passed, so the work is copies or casts of the inputs: give the kernel contiguous "
             "(B, H, S, D) Q, K, V in the dtype it runs";
  }
  return "";
}

// A kernel's name without its return type, template arguments or parameter list, what a user
// recognises: "at::native::elementwise_kernel"; a runtime activity ("Memset (Device)") whole.
std::string short_name(std::string name) {
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  size_t cut = name.find('<');
  const size_t paren = name.find('(');
  if (paren != std::string::npos && paren > 0 && name[paren - 1] != ' ') cut = std::min(cut, paren);
  if (cut != std::string::npos && cut > 0) name.resize(cut);
  return name;
}

struct Waste {
  double other_us = 0, call_us = 0;
  int64_t calls = 0;
  std::vector<int64_t> layers;
  std::map<std::string, double> kernel_us;  // short name -> time
};

Finding finding_of(Fix fix, const Waste& w, double attention_us) {
  std::vector<std::pair<std::string, double>> kernels(w.kernel_us.begin(), w.kernel_us.end());
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string named;
  for (size_t i = 0; i < std::min(kKernelsNamed, kernels.size()); ++i)
    named += fmt::format("{}{} {}", i ? ", " : "", kernels[i].first, time_text(kernels[i].second));
  const double share = w.other_us / w.call_us;
  const double of_attention = attention_us > 0 ? w.other_us / attention_us : 0;
  Finding f;
  f.severity = of_attention >= 0.10 ? "medium" : "low";
  f.rule = finding::kNonKernelTime;
  f.cause = "non_kernel_time";
  f.layers = w.layers;
  f.title = fmt::format("{} of {} fused attention call{}' time is not the attention kernel ({}, {} of "
                        "all attention time)",
                        percent_text(share), w.calls, w.calls == 1 ? "" : "s", time_text(w.other_us),
                        percent_text(of_attention));
  f.detail = fmt::format("{}: kernels launched by the attention op beside its fused kernel: {}. Fix: {}. Without them "
                         "these calls take {} instead of {} (kernel time alone, calls[].kernel_time_us).",
                         format_index_ranges(w.layers, "layer", "layers"), named, fix_text(fix),
                         time_text(w.call_us - w.other_us), time_text(w.call_us));
  f.expected_gain = w.call_us > w.other_us ? w.call_us / (w.call_us - w.other_us) : 0;
  return f;
}

}  // namespace

std::vector<Finding> non_kernel_time_findings(const std::vector<Call>& calls) {
  std::map<Fix, Waste> by_fix;
  double attention_us = 0;
  for (const Call& c : calls) {
    if (c.device_time_unknown || c.device_time_us <= 0) continue;
    attention_us += c.device_time_us;
    if (!c.fused || c.other_time_us < kNonKernelShare * c.device_time_us) continue;
    Waste& w = by_fix[fix_for(c)];
    w.other_us += c.other_time_us;
    w.call_us += c.device_time_us;
    ++w.calls;
    if (c.layer >= 0 && std::find(w.layers.begin(), w.layers.end(), c.layer) == w.layers.end())
      w.layers.push_back(c.layer);
    for (const KernelRef& k : c.kernels)
      if (k.component == component::kOther) w.kernel_us[short_name(k.name)] += k.device_time_us;
  }
  std::vector<Finding> out;
  for (auto& [fix, w] : by_fix) {
    std::sort(w.layers.begin(), w.layers.end());
    out.push_back(finding_of(fix, w, attention_us));
  }
  return out;
}

}  // namespace attnprof
