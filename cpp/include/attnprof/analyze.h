// The facade: trace file(s) -> Report. Runs the stages in order; each stage lives in its
// own folder under cpp/src and can be called and tested on its own.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/ingest.h"
#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

struct AnalyzeOptions {
  // Environment facts the trace may lack; explicit values override what the trace says.
  std::optional<std::string> torch_version;  // "2.11"
  std::optional<std::string> cudnn_version;  // "9.19"
  std::optional<std::string> arch;           // "sm90", "gfx942", "cpu"
  std::string sidecar_path;                  // live-capture sidecar; "" = look beside the trace
  std::function<void(size_t, size_t)> progress;  // ingest progress (bytes done, total)
  size_t ingest_threads = 0;  // threads parsing one trace file (IngestOptions::threads; 0 = one per core)
};

// Builds the Report of one already-loaded trace (all stages).
Report analyze_trace(const Trace& trace, const AnalyzeOptions& options = {});

// Loads and analyses one file.
Result<Report> analyze_file(const std::string& path, const AnalyzeOptions& options = {});

// What `options` asks of ingest (progress callback, threads), for callers that load the
// trace themselves.
IngestOptions ingest_options_of(const AnalyzeOptions& options);

}  // namespace attnprof
