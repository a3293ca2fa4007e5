// Shared by the capture stage's files: the record_function ranges the live capture leaves in
// the trace ("attnprof.call#<id> <path>", "attnprof.module <path>"), found by time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "attnprof/capture.h"
#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

struct Range {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::string_view label;  // what follows the prefix: call id or module path
};

// Ranges sorted by start. Properly nested per thread, so the latest-starting range that
// contains an interval is the innermost one.
class RangeIndex {
 public:
  void add(Range r) { ranges_.push_back(r); }
  void finish() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.begin_ns < b.begin_ns; });
  }
  const Range* innermost_containing(int64_t begin_ns, int64_t end_ns) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), begin_ns,
                               [](int64_t ts, const Range& r) { return ts < r.begin_ns; });
    while (it != ranges_.begin()) {
      --it;
      if (it->end_ns >= end_ns) return &*it;
    }
    return nullptr;
  }
  size_t size() const { return ranges_.size(); }
  const std::vector<Range>& all() const { return ranges_; }

 private:
  std::vector<Range> ranges_;
};

struct CaptureRanges {
  RangeIndex calls;
  RangeIndex modules;
};

CaptureRanges collect_ranges(const Trace& trace);

// "12 model.layers.0.self_attn" -> 12 (the id is the leading integer).
std::optional<int64_t> call_id_of(std::string_view label);

// Sets everything a captured record knows on a call (capture info, module, exact arguments,
// the backend when the trace named none) and marks it "trace+capture".
void apply_captured(Call& call, const CapturedCall& c);

}  // namespace attnprof
