// Multi-rank analysis: a directory of per-rank traces -> one Report with Report::ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/error.h"
#include "attnprof/fleet.h"
#include "attnprof/ingest.h"
#include "attnprof/report.h"

namespace attnprof {

// True for names torch.profiler / users give per-rank traces: *.pt.trace.json[.gz] and any
// *trace*.json[.gz] (rank0_trace.json.gz, trace_rank1.json, SGLang's *-TP-0.trace.json.gz),
// and accelerate's profile_<process index>.json.
// A name with ".json" inside it is a file derived from a trace (the capture sidecar
// <trace>.attnprof-capture.json, attnprof.trace_handler's <trace>.report.json), not a trace.
bool is_trace_file_name(std::string_view file_name);

// Trace files directly inside dir, sorted by name. Empty when dir holds none.
std::vector<std::string> find_trace_files(const std::string& dir);

// Progress of a directory analysis, summed over every rank's trace file.
struct DirectoryProgress {
  size_t files_done = 0;   // traces loaded and analysed (or failed)
  size_t files_total = 0;
  size_t bytes_done = 0;   // bytes read from the files (compressed bytes for .gz)
  size_t bytes_total = 0;  // sum of the file sizes
};
// Called from worker threads, one call at a time, with totals that never decrease; the last
// call has files_done == files_total and bytes_done == bytes_total.
using DirectoryProgressFn = std::function<void(const DirectoryProgress&)>;

// One rank's trace analysed for a fleet: its Report (a stage in the file name sets the phase of
// its calls) and what the trace says of its rank. The worker of attnprof.fleet runs this.
struct RankAnalysis {
  Report report;
  RankOrigin origin;
};
Result<RankAnalysis> analyze_rank_trace(const std::string& path, const AnalyzeOptions& options = {},
                                        IngestOptions ingest = {});

// Analyses every file in parallel (one worker per core, one trace in memory per worker), merges
// their summaries (plan_fleet, fleet_report) and returns one Report per profiling stage: the
// slowest rank's Report with the ranks section of all ranks. A trace that fails to load is a
// failed rank of the section, not an error; errors: those of plan_fleet (`label` names the
// input in them). options.progress is not used (it is per file); `progress` follows all files.
Result<std::vector<Report>> analyze_files_stages(const std::vector<std::string>& files, const std::string& label,
                                                 const AnalyzeOptions& options = {},
                                                 const DirectoryProgressFn& progress = {});

// The same over the trace files in dir (find_trace_files): files without a stage in their
// name first, then prefill, then decode (stage_of_file_name). Errors also: kFileNotFound (no such
// directory), kEmptyInput (no trace files).
Result<std::vector<Report>> analyze_directory_stages(const std::string& dir, const AnalyzeOptions& options = {},
                                                     const DirectoryProgressFn& progress = {});

// analyze_directory_stages for a directory of one stage; kUnsupported when it holds several.
Result<Report> analyze_directory(const std::string& dir, const AnalyzeOptions& options = {},
                                 const DirectoryProgressFn& progress = {});

}  // namespace attnprof
