// Regression detection: two runs (Reports, or traces analysed on the fly) -> a Report whose diff
// section holds the verdict on what got worse in attention, and why; the renderers of every
// Report format it (text, Markdown, JSON, the dashboard). The comparison itself
// (compare_reports, compare.h) is a pure function of two Reports; git history and file loading
// are the separate steps here so each can be tested on its own. How every number and the
// noise rule are computed: docs/diff.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/compare.h"
#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

// "10%" -> 0.10, "10" -> 0.10 (a bare number is a percentage), "0.5%" -> 0.005.
Result<double> parse_percent(std::string_view text);

// Reads thresholds from a JSON file, e.g. {"max_fused_drop": 5, "max_time_increase": "10%",
// "max_memory_increase": 15}; keys it lacks keep the values of `defaults`.
Result<DiffThresholds> load_diff_config(const std::string& path, const DiffThresholds& defaults);

// Lists the commits between the two recorded commits with `git log` (subprocess), restricted
// to the files of the attention modules when the Reports know them. Runs in the repository
// recorded in CodeInfo::git_root, else in `fallback_repo` (the cwd for the CLI). Never fails:
// what it could not do is said in change.note.
void attach_git_history(CodeChange& change, const std::vector<std::string>& source_files,
                        const std::string& fallback_repo);

// Loads the runs in one file: a Report JSON (one run), a JSON array of Reports (`attnprof
// analyze --json` of several traces: several runs), or a trace analysed with `analyze`.
Result<std::vector<Report>> load_runs(const std::string& path, const AnalyzeOptions& analyze);
// The Report or JSON array of Reports in `text` (read from `path`, which errors name).
Result<std::vector<Report>> reports_from_text(const std::string& path, const std::string& text);

struct DiffOptions {
  DiffThresholds thresholds;
  AnalyzeOptions analyze;
  std::string repo_dir;                       // fallback git repository ("" = cwd)
  std::vector<std::string> extra_baseline;    // further runs of the baseline (files)
  std::vector<std::string> extra_candidate;   // further runs of the candidate (files)
};

// The whole `attnprof diff`: files or directories (matched by file stem) -> verdicts with
// git history attached, as the diff section of an otherwise empty Report. Errors: bad paths,
// unreadable inputs, directories with no common name.
Result<DiffSection> diff_paths(const std::string& baseline, const std::string& candidate,
                               const DiffOptions& options);

// The Report `attnprof diff` writes: this tool's version and the diff section, nothing else.
Report diff_report(DiffSection section);

}  // namespace attnprof
