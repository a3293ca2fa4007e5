// The annotated trace: the original Kineto/Chrome trace, byte for byte, plus overlay
// tracks Chrome's trace viewer and Perfetto show. The original traceEvents bytes are
// stream-copied (never re-serialised); the overlay events are appended to the array:
//   - process "attention (attnprof)" with one slice per call named "L<layer> <backend>",
//     coloured by backend class through `cname`, args: explanation, shape, TFLOP/s, ...
//   - flow arrows (ph s/f, cat "attnprof") from each call's slice to each of its kernels,
//     bound to the kernel slices found in the trace by correlation id and name.
// Ingest says where the array and the kernels lie (scan_trace_layout); the outputs stage reads the
// file (cpp/src/outputs, trace_outputs.h: annotate_trace, write_chrome_overlay); this only formats.
#pragma once

#include <string>
#include <string_view>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/trace_layout.h"

namespace attnprof {

// Process id of the overlay track (chosen far from Kineto's pids: device ids and host pids).
inline constexpr int64_t kOverlayPid = 0x7a770000;

// Original trace text (already inflated) + where its events lie + Report -> annotated trace text.
std::string render_annotated_trace(std::string_view original_trace, const TraceEventsLayout& layout,
                                   const Report& report);

// gzip (libdeflate, level 6) of a whole buffer; also used for the TensorBoard trace copy.
Result<std::string> gzip_compress(std::string_view data);

}  // namespace attnprof
