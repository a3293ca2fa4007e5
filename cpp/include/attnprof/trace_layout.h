// Where things lie in a trace's original text, for outputs that copy the trace byte for byte
// and add to it (the annotated trace). Ingest finds them (scan_trace_layout, ingest.h); the
// renderers only format from them and never parse a trace. Plain data in the bottom stage, so
// the pipeline can hand a kept trace to the renderers, which reach no trace stage.
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

// The original trace as the analysis read it, kept for the outputs that copy it (--chrome,
// --tensorboard) so that they need not open and inflate the file again: its text, inflated,
// and where the traceEvents array and the Report's kernels lie in it
// (analyze_file_keeping_trace, analyze.h).
struct KeptTrace {
  std::string path;  // the file it was read from
  std::string text;
  TraceEventsLayout layout;
};

}  // namespace attnprof
