// Renderers for Python: the dashboard, the annotated trace and TensorBoard logs. Reports cross
// the boundary as their JSON text (AttentionReport keeps it), errors become ValueError.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attnprof/compare.h"
#include "attnprof/dashboard.h"
#include "attnprof/overlay.h"
#include "attnprof/report_json.h"
#include "attnprof/tensorboard.h"
#include "attnprof/trace_outputs.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

Report parse_report(const std::string& text) {
  auto report = report_from_json(text);
  if (!report) throw nb::value_error(report.error().message.c_str());
  return std::move(report).value();
}

void bind_render(nb::module_& m) {
  m.def(
      "render_html",
      [](const std::vector<std::string>& reports_json, const std::vector<std::string>& labels) {
        std::vector<Report> reports;
        for (const std::string& text : reports_json) reports.push_back(parse_report(text));
        compare_with_first(reports);  // the multi-run view: each later run against the first
        return render_html(reports, labels);
      },
      nb::arg("reports_json"), nb::arg("labels") = std::vector<std::string>{},
      "Self-contained HTML dashboard of one or several Reports (JSON texts); returns the page.");
  m.def(
      "write_chrome_overlay",
      [](const std::string& report_json, const std::string& trace_path, const std::string& out_path) {
        if (auto st = write_chrome_overlay(parse_report(report_json), trace_path, out_path); !st)
          throw nb::value_error(st.error().message.c_str());
      },
      nb::arg("report_json"), nb::arg("trace_path"), nb::arg("out_path"),
      "Writes the trace plus the attention overlay track (gzip when out_path ends in .gz).");
  m.def(
      "write_tensorboard",
      [](const std::string& report_json, const std::string& dir, const std::string& markdown,
         const std::string& trace_path, const std::string& worker) {
        TensorBoardOptions options;
        options.markdown = markdown;
        options.trace_path = trace_path;
        options.worker = worker;
        auto step = write_tensorboard(parse_report(report_json), dir, options);
        if (!step) throw nb::value_error(step.error().message.c_str());
        return *step;
      },
      nb::arg("report_json"), nb::arg("dir"), nb::arg("markdown") = "", nb::arg("trace_path") = "",
      nb::arg("worker") = "",
      "Appends one run (scalars, the Markdown text, the annotated trace) to a TensorBoard log dir; "
      "returns its step.");
}

const BindingRegistration registration(bind_render);

}  // namespace
}  // namespace attnprof::bindings
