// Spread per shape group (docs/cost.md, "Spread per shape group"): the calls that ran the same
// attention the same way (backend, library, shape, mask, direction, phase), and how far their time, TFLOP/s and bandwidth scatter, so that a
// slow outlier step shows beside the mean.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "attnprof/call_facts.h"
#include "attnprof/cost.h"

namespace attnprof {
namespace {

constexpr size_t kSlowestShown = 3;

using GroupKey = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>;

// Which pairs the kernel computes: a sliding-window kernel of the same shape as a causal one
// runs different work (gpt-oss alternates them layer by layer), so they are groups apart.
std::string mask_of(const Call& call) {
  if (call.mask.pattern == mask_pattern::kSlidingWindow || (call.kernel_template && call.kernel_template->local == 1))
    return mask_pattern::kSlidingWindow;
  return call.causal_alignment.empty() ? call.mask.pattern : mask_pattern::kCausal;
}

GroupKey key_of(const Call& call) {
  return {call.backend, call.library, shape_text(call.shape), mask_of(call), call.direction, call.phase};
}

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.count = static_cast<int64_t>(n);
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(n);
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / static_cast<double>(n));
  return s;
}

struct Members {
  std::vector<size_t> calls;
};

ShapeGroup group_of(const GroupKey& key, const Members& members, const std::vector<Call>& calls,
                    const std::vector<CallCost>& costs) {
  ShapeGroup g;
  std::tie(g.backend, g.library, g.shape, g.mask, g.direction, g.phase) = key;
  std::vector<double> times, tflops, bandwidths;
  for (size_t i : members.calls) {
    const Call& c = calls[i];
    times.push_back(c.device_time_us);
    g.total_time_us += c.device_time_us;
    if (c.tflops > 0) tflops.push_back(c.tflops);
    g.tflops_upper_bound = g.tflops_upper_bound || (c.tflops > 0 && c.flops_upper_bound);
    if (i < costs.size() && costs[i].bandwidth_gbs > 0) bandwidths.push_back(costs[i].bandwidth_gbs);
  }
  g.count = static_cast<int64_t>(members.calls.size());
  g.device_time_us = spread_of(times);
  g.tflops = spread_of(tflops);
  g.bandwidth_gbs = spread_of(bandwidths);
  std::vector<size_t> order = members.calls;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return calls[a].device_time_us > calls[b].device_time_us; });
  for (size_t k = 0; k < std::min(kSlowestShown, order.size()); ++k) {
    const Call& c = calls[order[k]];
    g.slowest.push_back({c.id, c.step, c.layer, c.device_time_us});
  }
  return g;
}

}  // namespace

std::vector<ShapeGroup> shape_groups(const std::vector<Call>& calls, const std::vector<CallCost>& costs) {
  std::map<GroupKey, Members> members;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& c = calls[i];
    if (c.device_time_unknown || c.device_time_us <= 0) continue;  // no time to spread
    members[key_of(c)].calls.push_back(i);
  }
  std::vector<ShapeGroup> groups;
  for (const auto& [key, m] : members) groups.push_back(group_of(key, m, calls, costs));
  std::stable_sort(groups.begin(), groups.end(),
                   [](const ShapeGroup& a, const ShapeGroup& b) { return a.total_time_us > b.total_time_us; });
  return groups;
}

}  // namespace attnprof
