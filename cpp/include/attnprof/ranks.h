// Multi-rank analysis: a directory of per-rank traces -> one Report with Report::ranks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

// True for names torch.profiler / users give per-rank traces: *.pt.trace.json[.gz] and any
// *trace*.json[.gz] (rank0_trace.json.gz, trace_rank1.json).
bool is_trace_file_name(std::string_view file_name);

// Trace files directly inside dir, sorted by name. Empty when dir holds none.
std::vector<std::string> find_trace_files(const std::string& dir);

// Analyses every trace file in dir in parallel (one worker per core, one trace in memory per
// worker) and returns the slowest rank's Report with Report::ranks filled for all ranks and
// a finding naming the slowest rank. Errors: kFileNotFound (no such directory), kEmptyInput
// (no trace files), or the first trace's load error (names the file).
Result<Report> analyze_directory(const std::string& dir, const AnalyzeOptions& options = {});

}  // namespace attnprof
