#include "analysis/memory_timeline.h"

#include <algorithm>
#include <map>
#include <utility>

namespace attnprof::analysis {

MemoryTimeline::MemoryTimeline(const Trace& trace) {
  constexpr int32_t kCpu = 0;
  std::map<std::pair<int32_t, int32_t>, size_t> counts;  // (device type, id) -> events
  for (const auto& e : trace.memory)
    if (e.total_allocated >= 0) ++counts[{e.device_type, e.device_id}];
  if (counts.empty()) return;
  std::pair<int32_t, int32_t> chosen = counts.begin()->first;
  size_t best = 0;
  bool best_is_device = false;
  for (const auto& [device, n] : counts) {
    const bool is_device = device.first != kCpu;
    if ((is_device && !best_is_device) || (is_device == best_is_device && n > best)) {
      chosen = device;
      best = n;
      best_is_device = is_device;
    }
  }
  for (const auto& e : trace.memory)
    if (e.total_allocated >= 0 && e.device_type == chosen.first && e.device_id == chosen.second)
      events_.push_back(&e);
  std::stable_sort(events_.begin(), events_.end(),
                   [](const MemoryEvent* a, const MemoryEvent* b) { return a->ts_ns < b->ts_ns; });
}

int64_t MemoryTimeline::baseline() const {
  if (events_.empty()) return -1;
  return events_.front()->total_allocated - events_.front()->bytes;
}

size_t MemoryTimeline::first_at_or_after(int64_t ts_ns) const {
  return static_cast<size_t>(
      std::lower_bound(events_.begin(), events_.end(), ts_ns,
                       [](const MemoryEvent* e, int64_t t) { return e->ts_ns < t; }) -
      events_.begin());
}

int64_t MemoryTimeline::allocated_before(int64_t ts_ns) const {
  const size_t i = first_at_or_after(ts_ns);
  return i == 0 ? baseline() : events_[i - 1]->total_allocated;
}

int64_t MemoryTimeline::max_allocated_in(int64_t begin_ns, int64_t end_ns) const {
  int64_t best = -1;
  for (size_t i = first_at_or_after(begin_ns); i < events_.size() && events_[i]->ts_ns <= end_ns; ++i)
    best = std::max(best, events_[i]->total_allocated);
  return best;
}

int64_t MemoryTimeline::net_bytes_in(int64_t begin_ns, int64_t end_ns) const {
  int64_t sum = 0;
  for (size_t i = first_at_or_after(begin_ns); i < events_.size() && events_[i]->ts_ns <= end_ns; ++i)
    sum += events_[i]->bytes;
  return sum;
}

const MemoryEvent* MemoryTimeline::peak() const {
  if (events_.empty()) return nullptr;
  return *std::max_element(events_.begin(), events_.end(), [](const MemoryEvent* a, const MemoryEvent* b) {
    return a->total_allocated < b->total_allocated;
  });
}

}  // namespace attnprof::analysis
