// MemoryEvents stores [memory] events packed (varints of differences within blocks of 16):
// every value must come back exactly, in order and at any index, whatever its range.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof {
namespace {

bool same(const MemoryEvent& a, const MemoryEvent& b) {
  return a.ts_ns == b.ts_ns && a.addr == b.addr && a.bytes == b.bytes && a.total_allocated == b.total_allocated &&
         a.total_reserved == b.total_reserved && a.thread == b.thread && a.device_type == b.device_type &&
         a.device_id == b.device_id;
}

// A caching allocator's events: time and Total Allocated rising, frees, a second device, the
// -1 of fields Kineto did not write, and the extremes of every field.
std::vector<MemoryEvent> sample_events() {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  std::vector<MemoryEvent> events;
  int64_t total = 1 << 20;
  for (int i = 0; i < 40; ++i) {
    const int64_t bytes = i % 3 == 2 ? -4096 * i : 512 * (i + 1);
    total += bytes;
    events.push_back({.ts_ns = 1'700'000'000'000'000'000 + 1500 * i, .addr = 0x7f0000000000 + 8192 * (i % 7),
                      .bytes = bytes, .total_allocated = total, .total_reserved = 2 << 20,
                      .thread = static_cast<uint32_t>(i % 2), .device_type = 1, .device_id = 0});
  }
  events.push_back({.ts_ns = 5, .addr = 1, .bytes = 64, .total_allocated = -1, .total_reserved = -1, .thread = 3,
                    .device_type = 0, .device_id = -1});
  events.push_back({.ts_ns = kMin, .addr = kMax, .bytes = kMin, .total_allocated = kMax, .total_reserved = kMin,
                    .thread = std::numeric_limits<uint32_t>::max(), .device_type = INT16_MIN, .device_id = INT16_MAX});
  events.push_back({.ts_ns = kMax, .addr = kMin, .bytes = kMax, .total_allocated = kMin, .total_reserved = kMax,
                    .thread = 0, .device_type = INT16_MAX, .device_id = INT16_MIN});
  events.push_back(MemoryEvent{});
  return events;
}

TEST(MemoryEvents, EveryValueComesBackInOrderAndAtAnyIndex) {
  const std::vector<MemoryEvent> events = sample_events();
  MemoryEvents packed;
  for (const MemoryEvent& e : events) packed.push_back(e);
  ASSERT_EQ(packed.size(), events.size());
  EXPECT_TRUE(same(packed.back(), events.back()));
  size_t i = 0;
  for (const MemoryEvent& e : packed) {
    ASSERT_LT(i, events.size());
    EXPECT_TRUE(same(e, events[i])) << "in order, event " << i;
    ++i;
  }
  EXPECT_EQ(i, events.size());
  for (size_t k = events.size(); k-- > 0;) EXPECT_TRUE(same(packed[k], events[k])) << "at index " << k;
  // From each block's start to the end.
  for (size_t block = 0; block * MemoryEvents::kBlock < events.size(); ++block) {
    size_t at = block * MemoryEvents::kBlock;
    for (auto it = packed.at_block(block); it != packed.end(); ++it, ++at) EXPECT_TRUE(same(*it, events[at]));
    EXPECT_EQ(at, events.size());
  }
}

TEST(MemoryEvents, AnAllocatorsEventsTakeAFractionOfTheStructsBytes) {
  MemoryEvents packed;
  const std::vector<MemoryEvent> events = sample_events();
  for (int i = 0; i < 40; ++i) packed.push_back(events[static_cast<size_t>(i)]);
  EXPECT_LT(packed.encoded_bytes(), 40 * sizeof(MemoryEvent) / 2);
  packed.clear();
  EXPECT_TRUE(packed.empty());
  EXPECT_EQ(packed.begin(), packed.end());
  packed.push_back(events[3]);
  EXPECT_TRUE(same(packed[0], events[3]));  // a cleared column starts a block afresh
}

}  // namespace
}  // namespace attnprof
