// Outputs that copy the original trace: the annotated trace (--chrome) and the TensorBoard run
// with its trace copy. Each writes from the trace its analysis kept (KeptTrace, trace_layout.h:
// the text and where its events lie, from the one ingest pass), or, for a Report read back from
// JSON, reads the file and asks ingest where its events lie; the renderers (overlay.h,
// tensorboard.h) only format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "attnprof/error.h"
#include "attnprof/overlay.h"
#include "attnprof/report.h"
#include "attnprof/tensorboard.h"
#include "attnprof/trace_layout.h"

namespace attnprof {

// Original trace text (already inflated) + Report -> annotated trace text (overlay.h).
// Errors: kMalformedJson, kNotATrace.
Result<std::string> annotate_trace(std::string_view original_trace, const Report& report);

// Writes `out_path` atomically, gzip-compressed when `out_path` ends in ".gz": from `trace`, the
// analysis's kept trace (no file is read), or from the file at `trace_path` (.json or .json.gz;
// "" = the Report's first source file).
Status write_chrome_overlay(const Report& report, const KeptTrace& trace, const std::string& out_path);
Status write_chrome_overlay(const Report& report, const std::string& trace_path, const std::string& out_path);

// Writes one TensorBoard run into `dir` (tensorboard.h) with the annotated trace: from `trace`,
// the analysis's kept trace (no file is read), or from options.trace_path, or the Report's first
// source file when that file exists.
Result<int64_t> write_tensorboard(const Report& report, const KeptTrace& trace, const std::string& dir,
                                  const TensorBoardOptions& options = {});
Result<int64_t> write_tensorboard(const Report& report, const std::string& dir, const TensorBoardOptions& options = {});

}  // namespace attnprof
