// The [memory] events of one device, in time order: what pass_memory and the per-call
// attribution read. Internal to cpp/src/analysis.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof::analysis {

// Reads the Trace's packed events (MemoryEvents) through a one-block cache: an in-order walk
// decodes each event once, a lookup a few blocks. Not for use from two threads at once.
class MemoryTimeline {
 public:
  // Picks the device that allocated most: a non-CPU device when any has events, else CPU.
  explicit MemoryTimeline(const Trace& trace);

  bool empty() const { return rows_.empty(); }
  size_t size() const { return rows_.size(); }
  // The i-th event in time order.
  MemoryEvent operator[](size_t i) const;
  // Total Allocated before the first event.
  int64_t baseline() const;
  // Total Allocated just before `ts_ns` (baseline when no event precedes it).
  int64_t allocated_before(int64_t ts_ns) const;
  // Largest Total Allocated over events with ts in [begin, end]; -1 when none.
  int64_t max_allocated_in(int64_t begin_ns, int64_t end_ns) const;
  // Sum of Bytes over events in [begin, end] (allocations minus frees).
  int64_t net_bytes_in(int64_t begin_ns, int64_t end_ns) const;
  // The event with the largest Total Allocated (the first of equals); nullopt when empty.
  std::optional<MemoryEvent> peak() const;

 private:
  // Rows of Trace::memory, sorted by ts, Total Allocated known: 4 bytes per event of the
  // device, held beside the whole trace while the analyses run; and the time of every
  // kStride-th, where a lookup starts.
  static constexpr size_t kStride = MemoryEvents::kBlock;
  const MemoryEvents* memory_;
  std::vector<uint32_t> rows_;
  std::vector<int64_t> stride_ts_;
  // The block of Trace::memory decoded last.
  mutable size_t cached_block_ = SIZE_MAX;
  mutable std::array<MemoryEvent, MemoryEvents::kBlock> cache_;
  size_t first_at_or_after(int64_t ts_ns) const;
};

}  // namespace attnprof::analysis
