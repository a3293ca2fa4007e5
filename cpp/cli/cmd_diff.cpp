// attnprof diff BASELINE CANDIDATE : did attention get worse, where, and why.
// Exit status: 0 = no regression, 1 = regression, 2 = bad input (command.h).
#include <cstdio>
#include <memory>

#include "attnprof/diff.h"
#include "attnprof/document.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/table.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct DiffCommandOptions {
  std::string baseline, candidate;
  std::vector<std::string> extra_baseline, extra_candidate;
  double max_fused_drop = 5;
  std::string max_time_increase = "10%", max_memory_increase = "10%";
  std::string config_path, repo;
  OutputOptions outputs;
  std::string torch_version, cudnn_version, arch;
  bool time_given = false, memory_given = false, fused_given = false;
};

// Defaults, then the config file, then flags given on the command line.
Result<DiffThresholds> thresholds_of(const DiffCommandOptions& o) {
  DiffThresholds t;
  if (!o.config_path.empty()) {
    Result<DiffThresholds> from_file = load_diff_config(o.config_path, t);
    if (!from_file) return from_file.error();
    t = *from_file;
  }
  if (o.fused_given) {
    if (o.max_fused_drop < 0)
      return make_error(ErrorCode::kInvalidArgument, "--max-fused-drop must be >= 0 (percentage points)");
    t.max_fused_drop_pp = o.max_fused_drop;
  }
  if (o.time_given) {
    Result<double> v = parse_percent(o.max_time_increase);
    if (!v) return make_error(ErrorCode::kInvalidArgument, "--max-time-increase: " + v.error().message);
    t.max_time_increase = *v;
  }
  if (o.memory_given) {
    Result<double> v = parse_percent(o.max_memory_increase);
    if (!v) return make_error(ErrorCode::kInvalidArgument, "--max-memory-increase: " + v.error().message);
    t.max_memory_increase = *v;
  }
  return t;
}

int run_diff(const DiffCommandOptions& o) {
  Result<DiffThresholds> thresholds = thresholds_of(o);
  if (!thresholds) fail("diff", thresholds.error());
  DiffOptions options;
  options.thresholds = *thresholds;
  options.repo_dir = o.repo;
  options.extra_baseline = o.extra_baseline;
  options.extra_candidate = o.extra_candidate;
  if (!o.torch_version.empty()) options.analyze.torch_version = o.torch_version;
  if (!o.cudnn_version.empty()) options.analyze.cudnn_version = o.cudnn_version;
  if (!o.arch.empty()) options.analyze.arch = o.arch;
  options.analyze.progress = progress_bar("reading");

  // Everything is read and compared before any file is written.
  Result<DiffSection> diff = diff_paths(o.baseline, o.candidate, options);
  if (!diff) fail("diff", diff.error());
  const Report report = diff_report(std::move(*diff));
  Document doc = report_document(report, {.labels = {}, .sections = {"diff"}});
  doc.title = "attnprof diff";
  doc.csv = [&report] { return tables_csv(diff_tables(*report.diff)); };
  if (Status s = write_document_outputs(o.outputs, doc); !s) fail("diff", s.error());
  return report.diff->regression() ? kExitRegression : kExitOk;
}

void setup_diff(CLI::App& app) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two runs (traces or Reports, or two directories of them matched by file name): fused share, "
      "backends per layer, attention time, TFLOP/s and memory, and what changed (inputs, environment, git "
      "commits). Exit 1 on a regression, for CI gates.");
  cmd->add_option("baseline", o->baseline, "baseline trace, Report (.json) or directory")->required();
  cmd->add_option("candidate", o->candidate, "candidate trace, Report (.json) or directory")->required();
  auto* fused = cmd->add_option("--max-fused-drop", o->max_fused_drop,
                                "largest allowed drop of the fused share, in percentage points (default 5)");
  auto* time = cmd->add_option("--max-time-increase", o->max_time_increase,
                               "largest allowed growth of attention device time (default 10%)");
  auto* memory = cmd->add_option("--max-memory-increase", o->max_memory_increase,
                                 "largest allowed growth of peak memory during attention (default 10%)");
  cmd->add_option("--thresholds", o->config_path,
                  "JSON file with max_fused_drop / max_time_increase / max_memory_increase (flags win)")
      ->check(CLI::ExistingFile);
  add_document_options(*cmd, o->outputs, "the verdict (docs/diff.md)", true);
  add_deprecated(o->outputs,
                 cmd->add_option("--config", o->config_path, "old spelling of --thresholds")
                     ->check(CLI::ExistingFile)
                     ->group(""),
                 "--thresholds");
  cmd->add_option("--baseline-run", o->extra_baseline,
                  "another run of the baseline (repeatable): runs and steps give the noise estimate")
      ->allow_extra_args(false)  // one file per flag: never swallow the positionals
      ->check(CLI::ExistingFile);
  cmd->add_option("--candidate-run", o->extra_candidate, "another run of the candidate (repeatable)")
      ->allow_extra_args(false)
      ->check(CLI::ExistingFile);
  cmd->add_option("--repo", o->repo,
                  "git repository to list commits from when the Reports' recorded one is absent (default: cwd)");
  add_word(*cmd, kTorchFlag, o->torch_version);
  add_word(*cmd, kCudnnFlag, o->cudnn_version);
  add_word(*cmd, kArchFlag, o->arch);
  cmd->footer(
      "Exit status: 0 = no regression, 1 = regression, 2 = bad input or output error.\n"
      "A change smaller than the spread of the steps/runs of either side is not a regression (docs/diff.md).");
  cmd->callback([o, fused, time, memory] {
    o->fused_given = fused->count() > 0;
    o->time_given = time->count() > 0;
    o->memory_given = memory->count() > 0;
    exit_with(run_diff(*o));
  });
}

const Registration kRegistration(70, setup_diff);

}  // namespace
}  // namespace attnprof::cli
