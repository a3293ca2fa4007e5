// The Python core API: trace (+ capture sidecar) -> Report JSON, Report JSON -> text/Markdown/
// HTML, and the sidecar conventions the Python capture writes by. Reports cross the boundary as
// their JSON text (AttentionReport keeps it); errors become ValueError with the core's message.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attnprof/analyze.h"
#include "attnprof/capture.h"
#include "attnprof/formats.h"
#include "attnprof/io.h"
#include "attnprof/report_json.h"
#include "binding.h"
#include "attnprof/attention.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

Report report_of(const std::string& text) {
  auto report = report_from_json(text);
  if (!report) throw nb::value_error(report.error().message.c_str());
  return std::move(report).value();
}

// The Report as the registry's format `name` (formats.h); `path` picks it when `name` is "".
const OutputFormat& format_named(const std::string& name, const std::string& path = "") {
  auto format = name.empty() ? output_format_of_path(path) : find_output_format(name);
  if (!format) throw nb::value_error(format.error().message.c_str());
  return **format;
}

// The outputs that copy the trace, written from the trace the analysis kept: the file is not
// read again.
Status write_trace_copies(const std::vector<Report>& reports, const KeptTrace& trace, const std::string& chrome_path,
                          const std::string& tensorboard_dir) {
  const std::vector<ReportView> views = views_of(reports);
  const FormatInput input{reports, views, 1, std::span<const KeptTrace>(&trace, 1)};
  if (!chrome_path.empty())
    if (Status s = write_output(format_named("chrome"), input, chrome_path); !s) return s;
  if (!tensorboard_dir.empty())
    if (Status s = write_output(format_named("tensorboard"), input, tensorboard_dir); !s) return s;
  return Ok{};
}

// The Report of a trace file; with `chrome_path` or `tensorboard_dir`, also those outputs, from
// the one read of the trace (analyze_file_keeping_trace).
Result<Report> analyze_writing(const std::string& trace_path, const AnalyzeOptions& options,
                               const std::string& chrome_path, const std::string& tensorboard_dir) {
  if (chrome_path.empty() && tensorboard_dir.empty()) return analyze_file(trace_path, options);
  Result<AnalyzedFile> analyzed = analyze_file_keeping_trace(trace_path, options);
  if (!analyzed) return analyzed.error();
  std::vector<Report> reports;
  reports.push_back(std::move(analyzed->report));
  if (Status s = write_trace_copies(reports, analyzed->trace, chrome_path, tensorboard_dir); !s) return s.error();
  return std::move(reports.front());
}

std::string analyze_to_json(const std::string& trace_path, const std::string& sidecar_path,
                            const std::string& torch_version, const std::string& arch, const std::string& gains_path,
                            const std::string& gpu_spec_path, const std::string& kernels_path,
                            const std::string& chrome_path, const std::string& tensorboard_dir) {
  AnalyzeOptions options;
  options.sidecar_path = sidecar_path;
  if (Status s = apply_user_files({{gpu_spec_path, {}}, {kernels_path, {}}, {gains_path, {}}}, options); !s)
    throw nb::value_error(s.error().message.c_str());
  if (!torch_version.empty()) options.torch_version = torch_version;
  if (!arch.empty()) options.arch = arch;
  Result<Report> report = [&] {
    nb::gil_scoped_release release;  // ingest, analyses and outputs never touch Python objects
    return analyze_writing(trace_path, options, chrome_path, tensorboard_dir);
  }();
  if (!report) throw nb::value_error(report.error().message.c_str());
  return report_to_json(*report, /*pretty=*/false);
}

std::string render_as(const std::string& report_json, const std::string& format) {
  const std::vector<Report> reports{report_of(report_json)};
  const std::vector<ReportView> views = views_of(reports);
  auto text = render_output(format_named(format), FormatInput{reports, views});
  if (!text) throw nb::value_error(text.error().message.c_str());
  return std::move(text).value();
}

void save_as(const std::string& report_json, const std::string& path, const std::string& format) {
  const std::vector<Report> reports{report_of(report_json)};
  const std::vector<ReportView> views = views_of(reports);
  if (auto st = write_output(format_named(format, path), FormatInput{reports, views}, path); !st)
    throw nb::value_error(st.error().message.c_str());
}

void write_atomic(const std::string& path, const std::string& content) {
  if (auto st = write_file_atomic(path, content); !st) throw nb::value_error(st.error().message.c_str());
}

void bind_analyze(nb::module_& m) {
  m.def("analyze", &analyze_to_json, nb::arg("trace_path"), nb::arg("sidecar_path") = "",
        nb::arg("torch_version") = "", nb::arg("arch") = "", nb::arg("gains_path") = "",
        nb::arg("gpu_spec_path") = "", nb::arg("kernels_path") = "", nb::arg("chrome_path") = "",
        nb::arg("tensorboard_dir") = "",
        "Analyses a trace file (merging the capture sidecar given, or the one beside the trace; the expected "
        "gains, measured peaks and catalog additions from the gains, GPU-spec and kernels files given); "
        "returns the Report as compact JSON. chrome_path / tensorboard_dir: also writes the annotated trace "
        "and appends a TensorBoard run, from the one read of the trace.");
  m.def("render", &render_as, nb::arg("report_json"), nb::arg("format"),
        "Renders a Report (JSON text) in a format of the registry that is one text: 'json' (pretty), "
        "'text', 'markdown', 'html'.");
  m.def("save", &save_as, nb::arg("report_json"), nb::arg("path"), nb::arg("format") = "",
        "Writes a Report in a registry format (json, text, markdown, html, chrome, tensorboard; \"\" = by the "
        "path's extension), atomically (no partial file on failure).");
  m.def(
      "formats", [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const OutputFormat& f : output_formats()) out.emplace_back(f.name, f.extension);
        return out;
      },
      "The registry's formats as (name, extension) pairs, in the CLI's writing order.");
  m.def("write_file_atomic", &write_atomic, nb::arg("path"), nb::arg("content"));
  m.def("sidecar_path_for", &sidecar_path_for, nb::arg("trace_path"),
        "Where the capture sidecar of a trace lives.");
  m.def("has_attention_vocabulary", [](const std::string& name) { return has_attention_vocabulary(name); },
        nb::arg("name"),
        "Whether a word of the name is attention vocabulary (attn, attention, flash, sdpa, ...), as the "
        "kernel catalog judges names it does not know.");
  m.attr("CALL_ANNOTATION_PREFIX") = std::string(kCallAnnotationPrefix);
  m.attr("MODULE_ANNOTATION_PREFIX") = std::string(kModuleAnnotationPrefix);
  m.attr("SIDECAR_FORMAT_VERSION") = kSidecarFormatVersion;
}

const BindingRegistration registration(bind_analyze);

}  // namespace
}  // namespace attnprof::bindings
