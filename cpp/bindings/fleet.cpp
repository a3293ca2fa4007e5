// The fleet's core calls for python/attnprof/fleet.py: a worker analyses one rank trace into its
// summary (and Report where asked), the driver plans the merge, fetches the bodies it names and
// merges. Summaries and Reports cross as JSON text; the engine runs with the GIL released.
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>

#include "attnprof/compare.h"
#include "attnprof/fleet.h"
#include "attnprof/formats.h"
#include "attnprof/ranks.h"
#include "attnprof/report_json.h"
#include "attnprof/report_view.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

[[noreturn]] void raise(const Error& e) { throw nb::value_error(e.message.c_str()); }

// The (name, text) pairs Python sends as the core's user files, already read.
UserFiles user_files_of(const std::pair<std::string, std::string>& gpu_spec,
                        const std::pair<std::string, std::string>& kernels) {
  return {{gpu_spec.first, gpu_spec.second}, {kernels.first, kernels.second}, {}};
}

// (summary JSON, Report JSON or "" unless want_report). A trace that fails to load gives a
// failed summary, not an exception: a bad rank is a row of the fleet Report. `read_path` is the
// local copy of a remote trace; `file` is what the Report names (the URL).
std::pair<std::string, std::string> analyze_rank(const std::string& read_path, const std::string& file, bool want_report,
                                                 const std::string& torch_version, const std::string& arch,
                                                 size_t threads, const std::pair<std::string, std::string>& gpu_spec,
                                                 const std::pair<std::string, std::string>& kernels) {
  AnalyzeOptions options;
  if (!torch_version.empty()) options.torch_version = torch_version;
  if (!arch.empty()) options.arch = arch;
  // The driver read the user's files (name, text): a worker on another node need not see them.
  if (Status s = apply_user_files(user_files_of(gpu_spec, kernels), options); !s) raise(s.error());
  IngestOptions ingest;
  ingest.threads = threads;
  nb::gil_scoped_release release;
  Result<RankAnalysis> analysed = analyze_rank_trace(read_path, options, std::move(ingest));
  if (!analysed) {
    std::string message = analysed.error().message;
    if (read_path != file) message = file + ": " + message;  // the local copy's name means nothing to the user
    return {rank_summary_to_json(failed_rank(file, message)), ""};
  }
  analysed->origin.file = file;
  if (file != read_path) analysed->report.source.files = {file};
  std::string summary = rank_summary_to_json(summarize_rank(analysed->report, analysed->origin));
  return {std::move(summary), want_report ? report_to_json(analysed->report, /*pretty=*/false) : std::string()};
}

std::vector<RankSummary> summaries_of(const std::vector<std::string>& texts) {
  std::vector<RankSummary> out;
  for (const std::string& t : texts) {
    Result<RankSummary> s = rank_summary_from_json(t);
    if (!s) raise(s.error());
    out.push_back(std::move(*s));
  }
  return out;
}

std::vector<std::string> body_files(const std::vector<std::string>& summaries, const std::string& label) {
  Result<std::vector<FleetStage>> stages = plan_fleet(summaries_of(summaries), label);
  if (!stages) raise(stages.error());
  std::vector<std::string> out;
  for (const FleetStage& s : *stages) out.push_back(s.body_file);
  return out;
}

// One Report JSON per stage; `bodies` maps each body file (body_files) to its Report JSON.
std::vector<std::string> merge(const std::vector<std::string>& summaries, const std::map<std::string, std::string>& bodies,
                               const std::string& label, const std::string& reports_dir) {
  Result<std::vector<FleetStage>> stages = plan_fleet(summaries_of(summaries), label);
  if (!stages) raise(stages.error());
  std::vector<std::string> out;
  for (FleetStage& stage : *stages) {
    stage.reports_dir = reports_dir;
    auto body = bodies.find(stage.body_file);
    if (body == bodies.end()) raise({ErrorCode::kInvalidArgument, "no Report given for " + stage.body_file});
    Result<Report> report = report_from_json(body->second);
    if (!report) raise(report.error());
    out.push_back(report_to_json(fleet_report(std::move(*report), std::move(stage)), /*pretty=*/false));
  }
  return out;
}

// Writes every (format name -> path) asked for, in registry order, and returns the Reports in
// `print_format` ("" = nothing printed): what `attnprof analyze` does with its Reports.
std::string write_reports(const std::vector<std::string>& report_jsons, const std::map<std::string, std::string>& outputs,
                          const std::string& print_format) {
  std::vector<Report> reports;
  for (const std::string& text : report_jsons) {
    Result<Report> r = report_from_json(text);
    if (!r) raise(r.error());
    reports.push_back(std::move(*r));
  }
  compare_with_first(reports);  // as `attnprof analyze` does with several Reports
  const std::vector<ReportView> views = views_of(reports);
  const FormatInput input{reports, views};
  for (const OutputFormat& format : output_formats()) {
    auto path = outputs.find(std::string(format.name));
    if (path == outputs.end() || path->second.empty()) continue;
    if (Status s = write_output(format, input, path->second); !s) raise(s.error());
  }
  if (print_format.empty()) return "";
  auto format = find_output_format(print_format);
  if (!format) raise(format.error());
  auto text = render_output(**format, input);
  if (!text) raise(text.error());
  return std::move(*text);
}

void bind_fleet(nb::module_& m) {
  m.def(
      "check_user_files",
      [](const std::pair<std::string, std::string>& gpu_spec, const std::pair<std::string, std::string>& kernels) {
        AnalyzeOptions checked;
        if (Status s = apply_user_files(user_files_of(gpu_spec, kernels), checked); !s) raise(s.error());
      },
      nb::kw_only(), nb::arg("gpu_spec") = std::pair<std::string, std::string>{},
      nb::arg("kernels") = std::pair<std::string, std::string>{},
      "Raises ValueError with the core's one line when a (name, text) user file is not valid.");
  m.def("analyze_rank", &analyze_rank, nb::arg("read_path"), nb::arg("file"), nb::arg("want_report") = false,
        nb::arg("torch_version") = "", nb::arg("arch") = "", nb::arg("threads") = 1,
        nb::arg("gpu_spec") = std::pair<std::string, std::string>{}, nb::arg("kernels") = std::pair<std::string, std::string>{},
        "Analyses one rank trace: (summary JSON, Report JSON or \"\" unless want_report). A trace that cannot "
        "be read gives a failed summary with its error.");
  m.def(
      "failed_rank", [](const std::string& file, const std::string& error) { return rank_summary_to_json(failed_rank(file, error)); },
      nb::arg("file"), nb::arg("error"), "The summary of a rank that could not be analysed.");
  m.def("fleet_body_files", &body_files, nb::arg("summaries"), nb::arg("label"),
        "The trace whose Report is the body of each stage's fleet Report (the slowest rank's).");
  m.def("merge_fleet", &merge, nb::arg("summaries"), nb::arg("bodies"), nb::arg("label"), nb::arg("reports_dir") = "",
        "Merges rank summaries into one fleet Report JSON per stage, each around its body Report; reports_dir: "
        "where each rank's own Report was written (its dashboard is linked from the ranks section).");
  m.def(
      "rank_report_stem", [](const std::string& file) { return rank_report_stem(file); }, nb::arg("trace_file"),
      "The name a rank's own Report is written under (rank3 for run/rank3.pt.trace.json.gz).");
  m.def(
      "analyze_files",
      [](const std::vector<std::string>& files, const std::string& label) {
        Result<std::vector<Report>> reports = [&] {
          nb::gil_scoped_release release;
          return analyze_files_stages(files, label);
        }();
        if (!reports) raise(reports.error());
        std::vector<std::string> out;
        for (const Report& r : *reports) out.push_back(report_to_json(r, /*pretty=*/false));
        return out;
      },
      nb::arg("files"), nb::arg("label"), "The in-process fleet path (local cores): one Report JSON per stage.");
  m.def("write_reports", &write_reports, nb::arg("reports"), nb::arg("outputs"), nb::arg("print_format") = "",
        "Writes Reports to the registry formats asked for ({name: path}) and returns them in print_format.");
  m.def(
      "find_trace_files", [](const std::string& dir) { return find_trace_files(dir); }, nb::arg("dir"),
      "Trace files directly inside a local directory, sorted by name.");
  m.def(
      "is_trace_file_name", [](const std::string& name) { return is_trace_file_name(name); }, nb::arg("name"),
      "Whether a file name is one torch.profiler or a serving engine gives a per-rank trace.");
  m.def(
      "rank_task_memory_bytes", [](size_t bytes, bool gzip) { return rank_task_memory_bytes(bytes, gzip); },
      nb::arg("file_bytes"), nb::arg("gzip"), "Memory to declare to Ray for analysing one trace of that size.");
}

const BindingRegistration registration(bind_fleet);

}  // namespace
}  // namespace attnprof::bindings
