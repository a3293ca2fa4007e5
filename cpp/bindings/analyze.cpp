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

std::string analyze_to_json(const std::string& trace_path, const std::string& sidecar_path,
                            const std::string& torch_version, const std::string& arch, const std::string& gains_path,
                            const std::string& gpu_spec_path, const std::string& kernels_path) {
  AnalyzeOptions options;
  options.sidecar_path = sidecar_path;
  if (Status s = apply_user_files({{gpu_spec_path, {}}, {kernels_path, {}}, {gains_path, {}}}, options); !s)
    throw nb::value_error(s.error().message.c_str());
  if (!torch_version.empty()) options.torch_version = torch_version;
  if (!arch.empty()) options.arch = arch;
  Result<Report> report = [&] {
    nb::gil_scoped_release release;  // ingest and analyses never touch Python objects
    return analyze_file(trace_path, options);
  }();
  if (!report) throw nb::value_error(report.error().message.c_str());
  return report_to_json(*report, /*pretty=*/false);
}

// The Report as the registry's format `name` (formats.h); `path` picks it when `name` is "".
const OutputFormat& format_named(const std::string& name, const std::string& path = "") {
  auto format = name.empty() ? output_format_of_path(path) : find_output_format(name);
  if (!format) throw nb::value_error(format.error().message.c_str());
  return **format;
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
        nb::arg("gpu_spec_path") = "", nb::arg("kernels_path") = "",
        "Analyses a trace file (merging the capture sidecar given, or the one beside the trace; the expected "
        "gains, measured peaks and catalog additions from the gains, GPU-spec and kernels files given); "
        "returns the Report as compact JSON.");
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
