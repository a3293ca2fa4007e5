// The memory timeline reads a device's [memory] events in time order: Kineto writes them so,
// and then nothing is sorted; events written out of order must give the same answers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "attnprof/cost.h"
#include "attnprof/ingest.h"

namespace attnprof {
namespace {

struct Alloc {
  int ts_us;
  int64_t bytes;
  int64_t total;
};

std::string memory_trace(const std::vector<Alloc>& events) {
  std::string json = R"({"traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) {
    const Alloc& e = events[i];
    if (i) json += ",";
    json += R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": )" + std::to_string(e.ts_us) +
            R"(, "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": )" + std::to_string(e.bytes) +
            R"(, "Total Allocated": )" + std::to_string(e.total) + R"(, "Total Reserved": )" +
            std::to_string(e.total + 1000) + "}}";
  }
  return json + "]}";
}

Call call_between(int64_t begin_us, int64_t end_us) {
  Call call;
  call.cpu_ts_ns = begin_us * 1000;
  call.cpu_dur_ns = (end_us - begin_us) * 1000;
  return call;
}

TEST(MemoryTimelineOrder, EventsOutOfTimeOrderGiveThePeaksOfTheOrderedOnes) {
  const std::vector<Alloc> ordered = {{10, 100, 1100}, {20, 400, 1500}, {30, -400, 1100}, {40, 50, 1150}};
  const std::vector<Alloc> shuffled = {ordered[2], ordered[0], ordered[3], ordered[1]};
  const Result<Trace> a = parse_trace(memory_trace(ordered), "ordered");
  const Result<Trace> b = parse_trace(memory_trace(shuffled), "shuffled");
  ASSERT_TRUE(a.ok() && b.ok());

  const PassMemory pa = pass_memory(*a), pb = pass_memory(*b);
  EXPECT_EQ(pa.baseline_bytes, 1000);  // before the first event in time, not in the file
  EXPECT_EQ(pa.peak_allocated_bytes, 1500);
  EXPECT_EQ(pa.peak_reserved_bytes, 2500);
  EXPECT_EQ(pb.baseline_bytes, pa.baseline_bytes);
  EXPECT_EQ(pb.peak_allocated_bytes, pa.peak_allocated_bytes);
  EXPECT_EQ(pb.peak_reserved_bytes, pa.peak_reserved_bytes);

  const std::vector<Call> calls = {call_between(15, 35)};
  const CostSection ca = analyze_cost(calls, {}, SourceInfo{}, true, *a);
  const CostSection cb = analyze_cost(calls, {}, SourceInfo{}, true, *b);
  EXPECT_EQ(ca.calls[0].peak_bytes_during, 400);  // 1500 at its highest, 1100 before it
  EXPECT_EQ(ca.calls[0].allocated_bytes, 0);      // +400 then -400
  EXPECT_EQ(cb.calls[0].peak_bytes_during, ca.calls[0].peak_bytes_during);
  EXPECT_EQ(cb.calls[0].allocated_bytes, ca.calls[0].allocated_bytes);
}

}  // namespace
}  // namespace attnprof
