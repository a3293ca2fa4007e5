#include "analysis/memory_timeline.h"

#include <algorithm>
#include <map>
#include <utility>

namespace attnprof::analysis {

MemoryTimeline::MemoryTimeline(const Trace& trace) : memory_(&trace.memory) {
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
  rows_.reserve(best);
  for (size_t i = 0; i < trace.memory.size(); ++i) {
    const MemoryEvent& e = trace.memory[i];
    if (e.total_allocated >= 0 && e.device_type == chosen.first && e.device_id == chosen.second)
      rows_.push_back(static_cast<uint32_t>(i));
  }
  const auto earlier = [&](uint32_t a, uint32_t b) { return trace.memory[a].ts_ns < trace.memory[b].ts_ns; };
  // A device's events usually come in time order: sorting is then a check.
  if (!std::is_sorted(rows_.begin(), rows_.end(), earlier)) std::stable_sort(rows_.begin(), rows_.end(), earlier);
}

int64_t MemoryTimeline::baseline() const {
  if (rows_.empty()) return -1;
  return (*this)[0].total_allocated - (*this)[0].bytes;
}

size_t MemoryTimeline::first_at_or_after(int64_t ts_ns) const {
  return static_cast<size_t>(
      std::lower_bound(rows_.begin(), rows_.end(), ts_ns,
                       [&](uint32_t row, int64_t t) { return (*memory_)[row].ts_ns < t; }) -
      rows_.begin());
}

int64_t MemoryTimeline::allocated_before(int64_t ts_ns) const {
  const size_t i = first_at_or_after(ts_ns);
  return i == 0 ? baseline() : (*this)[i - 1].total_allocated;
}

int64_t MemoryTimeline::max_allocated_in(int64_t begin_ns, int64_t end_ns) const {
  int64_t best = -1;
  for (size_t i = first_at_or_after(begin_ns); i < size() && (*this)[i].ts_ns <= end_ns; ++i)
    best = std::max(best, (*this)[i].total_allocated);
  return best;
}

int64_t MemoryTimeline::net_bytes_in(int64_t begin_ns, int64_t end_ns) const {
  int64_t sum = 0;
  for (size_t i = first_at_or_after(begin_ns); i < size() && (*this)[i].ts_ns <= end_ns; ++i)
    sum += (*this)[i].bytes;
  return sum;
}

const MemoryEvent* MemoryTimeline::peak() const {
  if (rows_.empty()) return nullptr;
  const auto row = std::max_element(rows_.begin(), rows_.end(), [&](uint32_t a, uint32_t b) {
    return (*memory_)[a].total_allocated < (*memory_)[b].total_allocated;
  });
  return &(*memory_)[*row];
}

}  // namespace attnprof::analysis
