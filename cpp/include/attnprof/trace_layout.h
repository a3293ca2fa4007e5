// Where things lie in a trace's original text, for outputs that copy the trace byte for byte
// and add to it (the annotated trace). Ingest finds them (scan_trace_layout, ingest.h); the
// renderers only format from them and never parse a trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnprof {

// One device event (kernel, memcpy, memset) of the original trace.
struct DeviceEventSite {
  std::string name;
  std::string pid, tid;  // their JSON tokens as written (a number or a string), trimmed
  double ts_us = 0;
};

struct TraceEventsLayout {
  size_t array_begin = 0, array_end = 0;  // the traceEvents array: '[' .. one past ']'
  bool array_empty = true;
  // Device events by correlation id, only for the ids scan_trace_layout was asked for.
  std::unordered_map<int64_t, std::vector<DeviceEventSite>> device_events;
};

}  // namespace attnprof
