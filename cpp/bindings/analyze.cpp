// The Python core API: trace (+ capture sidecar) -> Report JSON, Report JSON -> text/Markdown/
// HTML, and the sidecar conventions the Python capture writes by. Reports cross the boundary as
// their JSON text (AttentionReport keeps it); errors become ValueError with the core's message.
#include <nanobind/stl/string.h>

#include "attnprof/analyze.h"
#include "attnprof/capture.h"
#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

Report report_of(const std::string& text) {
  auto report = report_from_json(text);
  if (!report) throw nb::value_error(report.error().message.c_str());
  return std::move(report).value();
}

std::string analyze_to_json(const std::string& trace_path, const std::string& sidecar_path,
                            const std::string& torch_version, const std::string& arch) {
  AnalyzeOptions options;
  options.sidecar_path = sidecar_path;
  if (!torch_version.empty()) options.torch_version = torch_version;
  if (!arch.empty()) options.arch = arch;
  Result<Report> report = [&] {
    nb::gil_scoped_release release;  // ingest and analyses never touch Python objects
    return analyze_file(trace_path, options);
  }();
  if (!report) throw nb::value_error(report.error().message.c_str());
  return report_to_json(*report, /*pretty=*/false);
}

std::string render_as(const std::string& report_json, const std::string& format) {
  if (format == "json") return report_to_json(report_of(report_json), /*pretty=*/true);
  if (format == "text") return render_text(report_of(report_json));
  if (format == "markdown") return render_markdown(report_of(report_json));
  if (format == "html") return render_html({report_of(report_json)});
  throw nb::value_error(("unknown report format '" + format + "' (json, text, markdown, html)").c_str());
}

void write_atomic(const std::string& path, const std::string& content) {
  if (auto st = write_file_atomic(path, content); !st) throw nb::value_error(st.error().message.c_str());
}

void bind_analyze(nb::module_& m) {
  m.def("analyze", &analyze_to_json, nb::arg("trace_path"), nb::arg("sidecar_path") = "",
        nb::arg("torch_version") = "", nb::arg("arch") = "",
        "Analyses a trace file (merging the capture sidecar given, or the one beside the trace); "
        "returns the Report as compact JSON.");
  m.def("render", &render_as, nb::arg("report_json"), nb::arg("format"),
        "Renders a Report (JSON text) as 'json' (pretty), 'text', 'markdown' or 'html'.");
  m.def(
      "save",
      [](const std::string& report_json, const std::string& path, const std::string& format) {
        write_atomic(path, render_as(report_json, format));
      },
      nb::arg("report_json"), nb::arg("path"), nb::arg("format"),
      "Renders and writes atomically (no partial file on failure).");
  m.def("write_file_atomic", &write_atomic, nb::arg("path"), nb::arg("content"));
  m.def("sidecar_path_for", &sidecar_path_for, nb::arg("trace_path"),
        "Where the capture sidecar of a trace lives.");
  m.attr("CALL_ANNOTATION_PREFIX") = std::string(kCallAnnotationPrefix);
  m.attr("MODULE_ANNOTATION_PREFIX") = std::string(kModuleAnnotationPrefix);
  m.attr("SIDECAR_FORMAT_VERSION") = kSidecarFormatVersion;
}

const BindingRegistration registration(bind_analyze);

}  // namespace
}  // namespace attnprof::bindings
