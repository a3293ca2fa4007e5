// The annotated trace: the original Kineto/Chrome trace, byte for byte, plus overlay
// tracks Chrome's trace viewer and Perfetto show. The original traceEvents bytes are
// stream-copied (never re-serialised); the overlay events are appended to the array:
//   - process "attention (attnprof)" with one slice per call named "L<layer> <backend>",
//     coloured by backend class through `cname`, args: explanation, shape, TFLOP/s, ...
//   - flow arrows (ph s/f, cat "attnprof") from each call's slice to each of its kernels,
//     bound to the kernel slices found in the trace by correlation id and name.
#pragma once

#include <string>
#include <string_view>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

// Process id of the overlay track (chosen far from Kineto's pids: device ids and host pids).
inline constexpr int64_t kOverlayPid = 0x7a770000;

// Original trace text (already inflated) + Report -> annotated trace text.
Result<std::string> annotate_trace(std::string_view original_trace, const Report& report);

// Reads `trace_path` (.json or .json.gz), writes `out_path` atomically, gzip-compressed when
// `out_path` ends in ".gz".
Status write_chrome_overlay(const Report& report, const std::string& trace_path,
                            const std::string& out_path);

// gzip (libdeflate, level 6) of a whole buffer; also used for the TensorBoard trace copy.
Result<std::string> gzip_compress(std::string_view data);

}  // namespace attnprof
