// Findings -> the fixes attnprof.verify applies, by rule id (never by the finding's text).
#include <algorithm>
#include <set>

#include "attnprof/verify.h"

namespace attnprof::verify {
namespace {

// The finding's forward calls as a saved gain keys them: one backend and one dtype, or "".
void set_gain_key(const Report& report, const Finding& f, FixPlan& p) {
  std::set<std::string> backends, dtypes;
  for (const Call& c : report.calls) {
    if (c.direction == direction::kBackward || std::find(f.layers.begin(), f.layers.end(), c.layer) == f.layers.end()) continue;
    backends.insert(c.backend);
    dtypes.insert(c.shape.dtype);
    p.seq_len = std::max(p.seq_len, c.shape.Sq);
  }
  if (backends.size() == 1) p.from_backend = *backends.begin();
  if (dtypes.size() == 1) p.dtype = *dtypes.begin();
  p.device = gain_device(report.source, report.summary.has_gpu);
}

}  // namespace

std::vector<FixPlan> plan_fixes(const Report& report) {
  std::vector<FixPlan> plans;
  for (const Finding& f : report.findings) {
    const std::string_view id = fix_for_finding(f.rule);
    if (id.empty()) continue;
    FixPlan p;
    p.fix = std::string(id);
    p.finding_rule = f.rule;
    p.layers = f.layers;
    p.predicted_speedup = f.expected_gain;
    if (id == fix::kManual) p.manual = f.detail;
    set_gain_key(report, f, p);
    plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace attnprof::verify
