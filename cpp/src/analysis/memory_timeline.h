// The [memory] events of one device, in time order: what pass_memory and the per-call
// attribution read. Internal to cpp/src/analysis.
#pragma once

#include <cstdint>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof::analysis {

class MemoryTimeline {
 public:
  // Picks the device that allocated most: a non-CPU device when any has events, else CPU.
  explicit MemoryTimeline(const Trace& trace);

  bool empty() const { return rows_.empty(); }
  size_t size() const { return rows_.size(); }
  // The i-th event in time order.
  const MemoryEvent& operator[](size_t i) const { return (*memory_)[rows_[i]]; }
  // Total Allocated before the first event.
  int64_t baseline() const;
  // Total Allocated just before `ts_ns` (baseline when no event precedes it).
  int64_t allocated_before(int64_t ts_ns) const;
  // Largest Total Allocated over events with ts in [begin, end]; -1 when none.
  int64_t max_allocated_in(int64_t begin_ns, int64_t end_ns) const;
  // Sum of Bytes over events in [begin, end] (allocations minus frees).
  int64_t net_bytes_in(int64_t begin_ns, int64_t end_ns) const;
  // The event with the largest Total Allocated (nullptr when empty).
  const MemoryEvent* peak() const;

 private:
  // Rows of Trace::memory, sorted by ts, Total Allocated known: 4 bytes per event of the
  // device, held beside the whole trace while the analyses run (pointers took 8, grown by
  // doubling, and a sort buffer of as many when the events were already in order).
  const std::vector<MemoryEvent>* memory_;
  std::vector<uint32_t> rows_;
  size_t first_at_or_after(int64_t ts_ns) const;
};

}  // namespace attnprof::analysis
