// TensorBoard output: event files written by the C++ core, readable by the tensorboard
// package (scalars and text dashboards) and by the PyTorch profiler plugin (the trace).
//
// DIR/events.out.tfevents.<unix time>.<host>.attnprof.<run>   one file per run: TFRecord
//     framing (uint64 length, masked CRC32C of length, Event bytes, masked CRC32C of bytes),
//     Event protobufs encoded with libprotobuf (cpp/src/render/proto/tensorboard_event.proto).
// DIR/<worker>.<run>.pt.trace.json.gz   the trace, where torch-tb-profiler looks: any
//     directory holding ^(.*?)(\.\d+)?\.pt\.trace\.json(\.gz)?$ is a run; <run> is its span.
// <run> (the Event step) = number of attnprof event files already in DIR, so repeated runs
// into one DIR form a time series.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

struct TensorBoardOptions {
  std::string markdown;    // the Markdown report, written as a text summary ("" = none)
  std::string trace_path;  // trace to copy for the profiler plugin ("" = source.files[0], if it exists)
  std::string worker;      // worker name in the trace file name ("" = from the trace name)
  double wall_time = 0;    // seconds since the epoch (0 = now)
};

// The scalars written for a Report, tag -> value, in writing order. Tags:
//   attention/fused_time_fraction, attention/fused_call_fraction, attention/device_time_us,
//   attention/share_of_gpu_time (GPU traces), attention/calls, memory/peak_bytes (when known),
//   layer/<index>/device_time_us, layer/<index>/fused_time_fraction, layer/<index>/peak_bytes.
std::vector<std::pair<std::string, double>> tensorboard_scalars(const Report& report);

// Masked CRC32C as TFRecord uses it: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t crc32c(std::string_view data);
uint32_t masked_crc32c(std::string_view data);

// One TFRecord frame around `payload`.
std::string tfrecord_frame(std::string_view payload);

// Writes one run into `dir` (created when missing): the event file and, when `annotated_trace`
// is not empty, that trace (gzip) named after options.trace_path. Returns the step used. Reads
// no file: write_tensorboard (trace_outputs.h) reads and annotates the trace.
Result<int64_t> write_tensorboard_events(const Report& report, const std::string& dir,
                                         const TensorBoardOptions& options, std::string_view annotated_trace);

}  // namespace attnprof
