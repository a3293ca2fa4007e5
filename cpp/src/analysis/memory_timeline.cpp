#include "analysis/memory_timeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

namespace attnprof::analysis {

namespace {

// The device whose allocator the timeline follows: among those with events that record a
// total, a GPU before the CPU, then the one with the most events; its event count.
struct ChosenDevice {
  std::pair<int32_t, int32_t> device;  // (device type, id)
  size_t events = 0;
};

std::optional<ChosenDevice> chosen_device(const Trace& trace) {
  constexpr int32_t kCpu = 0;
  std::map<std::pair<int32_t, int32_t>, size_t> counts;  // (device type, id) -> events
  for (const MemoryEvent& e : trace.memory)
    if (e.total_allocated >= 0) ++counts[{e.device_type, e.device_id}];
  if (counts.empty()) return std::nullopt;
  ChosenDevice chosen{counts.begin()->first, 0};
  bool best_is_device = false;
  for (const auto& [device, n] : counts) {
    const bool is_device = device.first != kCpu;
    if ((is_device && !best_is_device) || (is_device == best_is_device && n > chosen.events)) {
      chosen = {device, n};
      best_is_device = is_device;
    }
  }
  return chosen;
}

}  // namespace

MemoryTimeline::MemoryTimeline(const Trace& trace) : memory_(&trace.memory) {
  const std::optional<ChosenDevice> picked = chosen_device(trace);
  if (!picked) return;
  const std::pair<int32_t, int32_t> chosen = picked->device;
  rows_.reserve(picked->events);
  bool in_order = true;
  int64_t last_ts = INT64_MIN;
  uint32_t row = 0;
  for (const MemoryEvent& e : trace.memory) {
    if (e.total_allocated >= 0 && e.device_type == chosen.first && e.device_id == chosen.second) {
      rows_.push_back(row);
      in_order = in_order && e.ts_ns >= last_ts;
      last_ts = e.ts_ns;
    }
    ++row;
  }
  // A device's events usually come in time order; when not, they are sorted by time (stable:
  // file order among equal times), with the keys read in one pass.
  if (!in_order) {
    std::vector<std::pair<int64_t, uint32_t>> keyed;
    keyed.reserve(rows_.size());
    for (const uint32_t r : rows_) keyed.emplace_back((*this->memory_)[r].ts_ns, r);
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) rows_[i] = keyed[i].second;
  }
  stride_ts_.reserve(rows_.size() / kStride + 1);
  for (size_t i = 0; i < rows_.size(); i += kStride) stride_ts_.push_back((*this)[i].ts_ns);
}

MemoryEvent MemoryTimeline::operator[](size_t i) const {
  const size_t row = rows_[i];
  const size_t block = row / MemoryEvents::kBlock;
  if (block != cached_block_) {
    memory_->read_block(block, cache_.data());
    cached_block_ = block;
  }
  return cache_[row % MemoryEvents::kBlock];
}

int64_t MemoryTimeline::baseline() const {
  if (rows_.empty()) return -1;
  const MemoryEvent first = (*this)[0];
  return first.total_allocated - first.bytes;
}

size_t MemoryTimeline::first_at_or_after(int64_t ts_ns) const {
  // The stride before the first one at or after ts_ns, then event by event inside it.
  const size_t stride = static_cast<size_t>(std::lower_bound(stride_ts_.begin(), stride_ts_.end(), ts_ns) - stride_ts_.begin());
  size_t i = stride == 0 ? 0 : (stride - 1) * kStride;
  while (i < rows_.size() && (*this)[i].ts_ns < ts_ns) ++i;
  return i;
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

std::optional<MemoryEvent> MemoryTimeline::peak() const {
  if (rows_.empty()) return std::nullopt;
  MemoryEvent best = (*this)[0];
  for (size_t i = 1; i < size(); ++i)
    if (const MemoryEvent e = (*this)[i]; e.total_allocated > best.total_allocated) best = e;
  return best;
}

}  // namespace attnprof::analysis
