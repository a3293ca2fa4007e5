// attnprof analyze TRACE [TRACE ...] : which attention kernel ran, per layer, fused or not.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "attnprof/analyze.h"
#include "attnprof/compare.h"
#include "attnprof/ingest.h"
#include "attnprof/ranks.h"
#include "attnprof/formats.h"
#include "attnprof/text_format.h"
#include "command.h"
#include "fleet_inputs.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct AnalyzeCommandOptions {
  std::vector<std::string> traces;
  OutputOptions outputs;
  std::string stdout_format = "text";
  std::string torch_version, cudnn_version, arch, gpu_spec, kernels, gains;
  size_t threads = 0;
  std::optional<std::string> ray;  // --ray [ADDRESS]: "" = start a local Ray
  std::string out_dir;
  bool strict = false;
};

// CLI11 gives `--ray DIR` the DIR as its value: an input that is no Ray address goes back to
// the inputs.
void take_back_ray_value(AnalyzeCommandOptions& o) {
  if (o.ray && !o.ray->empty() && !looks_like_ray_address(*o.ray)) {
    o.traces.insert(o.traces.begin(), *o.ray);
    o.ray = "";
  }
}

// What the fleet driver prints: a form asked for on stdout, else the terminal view (--format),
// nothing with --quiet.
std::string printed_format(const AnalyzeCommandOptions& o) {
  if (o.outputs.quiet) return "";
  const std::string asked = o.outputs.stdout_form();
  return asked.empty() ? o.stdout_format : asked;
}

[[noreturn]] void hand_to_ray(const AnalyzeCommandOptions& o) {
  FleetRequest request{o.traces,        *o.ray,          o.out_dir, o.strict, o.outputs.files(),
                       printed_format(o), o.torch_version, o.arch,  o.gpu_spec, o.kernels};
  fail("analyze", run_fleet_in_python(request));
}

// --strict: a rank that could not be analysed fails the command before anything is written.
void check_strict(const AnalyzeCommandOptions& o, const std::vector<Report>& reports) {
  if (!o.strict) return;
  for (const Report& r : reports)
    if (r.ranks && !r.ranks->failed.empty())
      fail("analyze", {ErrorCode::kInvalidArgument,
                       fmt::format("--strict: {} rank trace(s) failed; first: {}", r.ranks->failed.size(),
                                   r.ranks->failed.front().error)});
}

// One bar for a whole directory of rank traces: the bar is the bytes read over all files, the
// label counts files done and bytes read. Same helper as one file, so also silent when stderr is
// not a terminal; a changed label gets a fresh bar, which redraws the same line.
DirectoryProgressFn directory_progress_bar(const std::string& dir) {
  if (!progress_bar(dir)) return {};
  return [dir, label = std::string(), bar = std::function<void(size_t, size_t)>()](const DirectoryProgress& p) mutable {
    std::string now = fmt::format("reading {} ({}/{} files, {}/{})", dir, p.files_done, p.files_total,
                                  bytes_text(static_cast<double>(p.bytes_done)), bytes_text(static_cast<double>(p.bytes_total)));
    if (now != label) label = std::move(now), bar = progress_bar(label);
    // The helper ends the line at 100%: hold it at 99% until the last file is analysed too.
    const bool finished = p.files_done == p.files_total;
    bar(finished || p.bytes_done < p.bytes_total ? p.bytes_done : p.bytes_total - 1, p.bytes_total);
  };
}

// The flags as the pipeline's options; the files they name are read here (bad file: exit 2).
AnalyzeOptions analyze_options_of(const AnalyzeCommandOptions& o) {
  AnalyzeOptions options;
  if (!o.torch_version.empty()) options.torch_version = o.torch_version;
  if (!o.cudnn_version.empty()) options.cudnn_version = o.cudnn_version;
  if (!o.arch.empty()) options.arch = o.arch;
  options.ingest_threads = o.threads;
  if (Status s = apply_user_files({{o.gpu_spec, {}}, {o.kernels, {}}, {o.gains, {}}}, options); !s)
    fail("analyze", s.error());
  return options;
}

// Whether an output asked for copies the trace (the registry's formats that are written only:
// the annotated trace, TensorBoard): then each trace's text is kept from its one read.
bool copies_trace(const OutputOptions& outputs) {
  const auto files = outputs.files();
  for (const OutputFormat& f : output_formats())
    if (f.render == nullptr && files.contains(f.name)) return true;
  return false;
}

// The Reports of one input: one per profiling stage for a directory, glob or @list of rank
// traces (cpp/src/pipeline/ranks.cpp, cpp/src/fleet), else the one trace's. `kept` (when not
// null) gets the trace of each Report, as its analysis read it (none for a fleet's Reports).
void analyze_input(const std::string& path, AnalyzeOptions& options, std::vector<Report>& reports,
                   std::vector<KeptTrace>* kept) {
  Result<std::optional<std::vector<std::string>>> fleet = fleet_files(path);
  if (!fleet) fail("analyze", fleet.error());
  if (*fleet) {
    options.progress = nullptr;
    Result<std::vector<Report>> stages = analyze_files_stages(**fleet, path, options, directory_progress_bar(path));
    if (!stages) fail("analyze", stages.error());
    for (Report& r : *stages) reports.push_back(std::move(r));
    if (kept) kept->resize(reports.size());
    return;
  }
  if (path.find("://") != std::string::npos)
    fail("analyze", {ErrorCode::kInvalidArgument,
                     fmt::format("{}: a trace in remote storage is read by the fleet's workers: add --ray", path)});
  options.progress = progress_bar("reading " + path);
  // Each Trace is freed once analysed, before the next trace is read and the outputs are
  // built: several traces then hold one Trace at a time, and the Report's JSON (1.7 GB at
  // 20 GB) does not come on top of a Trace. With only the rows the analyses read, freeing it
  // is a few large blocks (docs/performance.md, "Where the memory goes"). An output that copies
  // the trace keeps its text from that one read instead of reading the file again.
  if (kept) {
    Result<AnalyzedFile> analyzed = analyze_file_keeping_trace(path, options);
    if (!analyzed) fail("analyze", analyzed.error());
    reports.push_back(std::move(analyzed->report));
    kept->push_back(std::move(analyzed->trace));
    return;
  }
  Result<Report> report = analyze_file(path, options);
  if (!report) fail("analyze", report.error());
  reports.push_back(std::move(*report));
}

int run_analyze(AnalyzeCommandOptions& o) {
  take_back_ray_value(o);
  if (o.traces.empty())
    fail("analyze", {ErrorCode::kInvalidArgument, "traces is required: a trace, a directory, a glob or @FILE of traces"});
  if (o.ray) hand_to_ray(o);
  if (!o.out_dir.empty())
    fail("analyze", {ErrorCode::kInvalidArgument, "--out-dir is where the fleet's workers write each rank's Report: add --ray"});
  AnalyzeOptions options = analyze_options_of(o);
  // Every trace is read before anything is written: bad input leaves no output file.
  std::vector<Report> reports;
  std::vector<KeptTrace> traces;  // reports[i]'s, when an output copies the trace
  std::vector<KeptTrace>* kept = copies_trace(o.outputs) ? &traces : nullptr;
  const FreeCoresProbe cores;  // for the outputs' threads
  for (const std::string& path : o.traces) analyze_input(path, options, reports, kept);
  check_strict(o, reports);
  compare_with_first(reports);  // several runs: each later one carries its comparison with the first
  const std::vector<ReportView> views = views_of(reports);  // once, for every output
  const FormatInput input{reports, views, cores.threads_for(o.threads), traces};
  if (Status s = write_report_outputs(o.outputs, input, o.stdout_format); !s) fail("analyze", s.error());
  return kExitOk;
}

void setup_analyze(CLI::App& app) {
  auto o = std::make_shared<AnalyzeCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Read torch.profiler (Kineto) traces and show, per attention layer, the backend and kernel that ran, "
      "its device time and whether it was fused; unfused calls first.");
  // Not ->required(): CLI11 may have handed the only input to --ray (take_back_ray_value).
  cmd->add_option("traces", o->traces,
                  "trace files (.json or .json.gz) written by torch.profiler; a directory, quoted glob or @FILE of "
                  "per-rank traces");
  add_report_options(*cmd, o->outputs, "the Report");
  std::vector<std::string> printable;  // the formats that are one text (formats.h)
  std::string names;
  for (const OutputFormat& f : output_formats()) {
    if (f.render == nullptr) continue;
    printable.emplace_back(f.name);
    names += (names.empty() ? "" : ", ") + std::string(f.name);
  }
  cmd->add_option("--format", o->stdout_format, "what to print on stdout (default text): " + names)
      ->check(CLI::IsMember(printable));
  add_word(*cmd, kTorchFlag, o->torch_version);
  add_word(*cmd, kCudnnFlag, o->cudnn_version);
  add_word(*cmd, kArchFlag, o->arch);
  cmd->add_option("--gpu-spec", o->gpu_spec,
                  "JSON file of ceilings you measured on your GPU, replacing the datasheet peaks of the roofline and "
                  "the compute/memory-bound verdicts: {\"bandwidth_gbs\": 4000, \"tflops\": {\"bf16\": 700}} "
                  "(fields: name, bandwidth_gbs, tflops.bf16/fp16/fp8/tf32/fp32; TOML when the name ends in .toml; "
                  "docs/cost.md)");
  cmd->add_option("--kernels", o->kernels,
                  "JSON or TOML file of kernel and op names to add to the catalogs (library, backend, vendor, "
                  "direction, and where an op's arguments give the shape), so a custom kernel gets a call and a cost "
                  "(docs/cost.md, \"Kernels and ops of your own\")");
  cmd->add_option("--gains", o->gains,
                  "JSON file of gains attnprof.verify measured on your model (attnprof.verify(..., gains=FILE)): "
                  "the findings' expected gains then come from your measurements where the fix, backend, dtype and "
                  "device match and the sequence length is within 2x (docs/verify.md)");
  add_word(*cmd, kThreadsFlag, o->threads)->check(CLI::Range(0, 256));
  cmd->add_option("--ray", o->ray,
                  "analyse the rank traces on Ray, one task per trace (pip install 'attnprof[ray]'): no ADDRESS = "
                  "a local Ray on this machine, else an existing cluster (auto, ray://head:10001, head:6379); "
                  "inputs may then be fsspec URLs (s3://bucket/run/, gs://...) read by the workers (docs/fleet.md)")
      ->expected(0, 1);
  cmd->add_option("--out-dir", o->out_dir,
                  "with --ray: each rank's full Report, <trace name>.report.json and .html, written by its worker "
                  "(a local path or an fsspec URL every worker can reach)");
  cmd->add_flag("--strict", o->strict,
                "a rank trace that cannot be analysed fails the command (exit 2, nothing written); by default it "
                "is listed as a failed rank and the other ranks are merged");
  cmd->footer(
      "Exit status: 0 = analysed (also when no attention is found), 2 = bad input or output error.\n"
      "Several traces: one Report each, printed in order; --json then writes a JSON array.\n"
      "A directory of per-rank traces (*trace*.json[.gz]), a quoted glob ('run/*.json.gz') or @FILE (a trace per line):\n"
      "one fleet Report, the slowest rank's, with a ranks section (stragglers, disagreements, groups, failed ranks);\n"
      "one such Report per stage when SGLang wrote a file per stage (<id>-TP-<N>-prefill / -decode).");
  cmd->callback([o] { exit_with(run_analyze(*o)); });
}

const Registration kRegistration(10, setup_analyze);

}  // namespace
}  // namespace attnprof::cli
