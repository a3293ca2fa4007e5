// Fleet analysis: each rank's Report reduced to a compact RankSummary, and the one merge of
// summaries into a ranks section. The in-process directory analysis (cpp/src/pipeline/ranks.cpp)
// and attnprof.fleet on Ray (python/attnprof/fleet.py) both go through these functions, so both
// paths give the same Report for the same traces, in any completion order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

// What a per-rank trace's file name says.
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

// The host torch's tensorboard_trace_handler names a trace by ("<host>_<pid>.<ms>.pt.trace.json",
// its default worker name is "<hostname>_<pid>"); "" for any other name.
std::string host_of_file_name(std::string_view file_name);

// What the trace says about the rank that wrote it (distributedInfo), beside its Report.
struct RankOrigin {
  std::string file;
  int64_t trace_rank = -1;
  int64_t world_size = -1;
  std::vector<RankGroupRef> groups;  // the process groups whose member list holds trace_rank
};

// One rank's summary: O(layers) facts, never its calls.
RankSummary summarize_rank(const Report& report, const RankOrigin& origin);
// A rank whose trace could not be analysed: its file and one-line error.
RankSummary failed_rank(const std::string& file, const std::string& error);

// A summary travels as compact JSON: rank_summary_to_json / rank_summary_from_json (report_json.h).

// The ranks of one profiling stage, numbered and sorted, and the file whose Report is the body
// of the stage's Report: the slowest measured rank's, else the first analysed rank's.
struct FleetStage {
  std::string stage;                // "" (no stage in the file names), "prefill", "decode"
  std::vector<RankSummary> ranks;   // analysed, by rank
  std::vector<RankSummary> failed;  // by file name
  std::string body_file;
  // Where each rank's own Report was written (--out-dir), "" when nowhere: fleet_report then
  // sets every rank's report_html to <reports_dir>/<rank_report_stem(file)>.html.
  std::string reports_dir;
};

// The name a rank's own Report is written under: the trace's file name without its directory and
// without ".pt.trace.json[.gz]" / ".trace.json[.gz]" / ".json[.gz]" ("rank3" for
// "run/rank3.pt.trace.json.gz").
std::string rank_report_stem(std::string_view trace_file);

// Numbers the ranks (distributedInfo.rank, else the rank the file name spells, else the next
// free number; file names decide where traces disagree), splits them by stage (no stage first,
// then prefill, then decode) and picks each stage's body. The result does not depend on the
// order of `summaries`. Errors: kEmptyInput (no summaries), kUnsupported (two files of the same
// stage and rank, named; `label` names the input), and kEmptyInput naming the first failure when
// every rank of a stage failed.
Result<std::vector<FleetStage>> plan_fleet(std::vector<RankSummary> summaries, const std::string& label);

// The stage's Report: `body` (the analysis of stage.body_file) with every rank's file in
// source.files, the ranks section (stragglers, disagreements, groups, failed ranks) and its
// findings first. Deterministic: the same stage and body give the same Report.
Report fleet_report(Report body, FleetStage stage);

// Memory to declare to a scheduler for analysing one trace of `file_bytes` (compressed size for
// .gz): the engine's measured peak per input byte, plus a worker's fixed footprint
// (docs/fleet.md, "Memory").
size_t rank_task_memory_bytes(size_t file_bytes, bool gzip);

}  // namespace attnprof
