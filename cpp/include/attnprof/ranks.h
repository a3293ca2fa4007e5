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
#include "attnprof/report.h"

namespace attnprof {

// True for names torch.profiler / users give per-rank traces: *.pt.trace.json[.gz] and any
// *trace*.json[.gz] (rank0_trace.json.gz, trace_rank1.json, SGLang's *-TP-0.trace.json.gz),
// and accelerate's profile_<process index>.json.
// A name with ".json" inside it is a file derived from a trace (the capture sidecar
// <trace>.attnprof-capture.json, attnprof.trace_handler's <trace>.report.json), not a trace.
bool is_trace_file_name(std::string_view file_name);

// The rank a per-rank trace's file name spells (docs/cli.md, "Directories"), -1 where absent:
// `rank` from "rank3" / "rank_3" / "rank-3" (torch's tensorboard_trace_handler worker names,
// vLLM's "<instance>-rank-<N>"), `tp` / `pp` from SGLang's "<id>-TP-<N>[-DP-..][-PP-<M>]".
struct NameRank {
  int64_t rank = -1;
  int64_t tp = -1;
  int64_t pp = 0;
};
NameRank rank_of_file_name(std::string_view file_name);

// The profiling stage a file name ends with, "" when none: SGLang's profile_by_stage writes
// one trace per stage and rank, "<id>-TP-<N>[-..]-<stage>.trace.json.gz" with <stage> "prefill"
// / "decode" (profile_utils.py), "EXTEND" / "DECODE" or "ForwardMode.EXTEND" / "ForwardMode.DECODE"
// (scheduler_profiler_mixin.py, by release). Returns "prefill" (also for EXTEND) or "decode".
std::string stage_of_file_name(std::string_view file_name);

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

// Analyses every trace file in dir in parallel (one worker per core, one trace in memory per
// worker) and returns the slowest rank's Report with Report::ranks filled for all ranks and
// a finding naming the slowest rank. Errors: kFileNotFound (no such directory), kEmptyInput
// (no trace files), or the first trace's load error (names the file). options.progress is not
// used (it is per file); `progress`, when set, follows all files together.
// Errors also: kUnsupported when the directory holds several stages (analyze_directory_stages).
Result<Report> analyze_directory(const std::string& dir, const AnalyzeOptions& options = {},
                                 const DirectoryProgressFn& progress = {});

// The same, one Report per profiling stage (stage_of_file_name), each over that stage's files
// with its own ranks section and Call::phase set to the stage where the analysis left it empty:
// files without a stage first, then prefill, then decode. One Report for a directory without
// stages. Two files of the same stage and rank remain an error that names both.
Result<std::vector<Report>> analyze_directory_stages(const std::string& dir, const AnalyzeOptions& options = {},
                                                     const DirectoryProgressFn& progress = {});

}  // namespace attnprof
