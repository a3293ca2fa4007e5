// Findings -> the fixes attnprof.verify applies, by rule id (never by the finding's text).
#include <string_view>

#include "attnprof/verify.h"

namespace attnprof::verify {
namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// The fix that answers a finding's rule; "" for findings that report without asking for a
// change (roofline, memory share, steps, ...).
std::string_view fix_for_rule(std::string_view rule) {
  if (rule == finding::kEagerAttention) return fix::kUseSdpa;
  if (rule == finding::kForcedBackend) return fix::kUnforceBackend;
  if (rule == finding::kCausalMask) return fix::kIsCausal;
  if (rule == finding::kSlidingWindow) return fix::kFlexAttention;
  // A rules finding whose first rejection is the dtype ("flash.dtype"): the half-precision fix.
  if (ends_with(rule, ".dtype")) return fix::kAutocastBf16;
  // Changes verify cannot make in the process: the inputs (padding, documents) or the code.
  if (rule == finding::kPaddingMask || rule == finding::kBlockMask || rule == finding::kArbitraryMask ||
      rule == finding::kBiasMask || rule == finding::kNonKernelTime || rule == finding::kRecompute)
    return fix::kManual;
  return "";
}

// The SDPBackend member of the backend the finding's layers ran ("MATH"), "" when unknown.
std::string forced_member(const Report& report, const Finding& f) {
  for (const Call& c : report.calls) {
    if (f.layers.empty() || c.layer != f.layers.front() || c.direction == "backward") continue;
    if (const BackendWord* w = backend_word(c.backend)) return std::string(w->sdp_backend);
  }
  return "";
}

}  // namespace

std::vector<FixPlan> plan_fixes(const Report& report) {
  std::vector<FixPlan> plans;
  for (const Finding& f : report.findings) {
    const std::string_view id = fix_for_rule(f.rule);
    if (id.empty()) continue;
    FixPlan p{std::string(id), f.rule, f.layers, f.expected_gain, "", ""};
    if (id == fix::kUnforceBackend) p.backend = forced_member(report, f);
    if (id == fix::kManual) p.manual = f.detail;
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace attnprof::verify
