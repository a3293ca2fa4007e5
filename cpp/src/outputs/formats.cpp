// The format registry (formats.h): one row per output format.
#include "attnprof/formats.h"

#include <array>

#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/trace_outputs.h"

namespace attnprof {
namespace {

// One Report as its JSON; several as a JSON array, in argument order.
std::string json_of(const FormatInput& in) {
  if (in.reports.size() == 1) return report_to_json(in.reports.front());
  std::string out = "[\n";
  for (size_t i = 0; i < in.reports.size(); ++i) out += (i ? ",\n" : "") + report_to_json(in.reports[i]);
  return out + "\n]\n";
}

// The terminal report; several Reports one after the other, a blank line between them.
std::string text_of(const FormatInput& in) {
  std::string out;
  for (size_t i = 0; i < in.views.size(); ++i) out += (i ? "\n" : "") + render_text(in.views[i]);
  return out;
}

// Several Reports: sections separated by a rule.
std::string markdown_of(const FormatInput& in) {
  std::string out;
  for (size_t i = 0; i < in.views.size(); ++i) out += (i ? "\n---\n\n" : "") + render_markdown(in.views[i]);
  return out;
}

std::string html_of(const FormatInput& in) { return render_html(in.views); }

Status write_chrome(const FormatInput& in, const std::string& path) {
  if (in.reports.size() != 1)
    return make_error(ErrorCode::kInvalidArgument, "--chrome annotates one trace; give one trace file");
  return write_chrome_overlay(in.reports.front(), "", path);
}

// Each Report appends one run, with its Markdown report as the text summary.
Status write_tensorboard_runs(const FormatInput& in, const std::string& dir) {
  for (size_t i = 0; i < in.reports.size(); ++i) {
    TensorBoardOptions tb;
    tb.markdown = render_markdown(in.views[i]);
    if (auto step = write_tensorboard(in.reports[i], dir, tb); !step) return step.error();
  }
  return Ok{};
}

constexpr std::array kFormats = {
    OutputFormat{"json", ".json", "--json",
                 "write the Report as JSON (several traces: a JSON array of Reports, in argument order)", json_of, nullptr},
    OutputFormat{"text", ".txt", "--text", "write the terminal report to a file", text_of, nullptr},
    OutputFormat{"markdown", ".md", "--md,--markdown", "write the Report as Markdown", markdown_of, nullptr},
    OutputFormat{"html", ".html", "--html",
                 "write a self-contained HTML dashboard (several traces: one page with a multi-run view)", html_of,
                 nullptr},
    OutputFormat{"chrome", ".json.gz", "--chrome",
                 "write the trace plus an attention overlay track for chrome://tracing and Perfetto "
                 "(gzip when the name ends in .gz)",
                 nullptr, write_chrome},
    OutputFormat{"tensorboard", "", "--tensorboard",
                 "append this run to a TensorBoard log dir (scalars, the Markdown report, the trace)", nullptr,
                 write_tensorboard_runs},
};

std::string format_names() {
  std::string names;
  for (const OutputFormat& f : kFormats) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

}  // namespace

std::vector<ReportView> views_of(const std::vector<Report>& reports) {
  std::vector<ReportView> views;
  views.reserve(reports.size());
  for (const Report& r : reports) views.push_back(make_report_view(r));
  return views;
}

std::span<const OutputFormat> output_formats() { return kFormats; }

Result<const OutputFormat*> find_output_format(std::string_view name) {
  for (const OutputFormat& f : kFormats)
    if (f.name == name) return &f;
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown report format '" + std::string(name) + "' (" + format_names() + ")");
}

Result<const OutputFormat*> output_format_of_path(std::string_view path) {
  const OutputFormat* best = nullptr;
  for (const OutputFormat& f : kFormats)
    if (!f.extension.empty() && path.ends_with(f.extension) && (!best || f.extension.size() > best->extension.size()))
      best = &f;
  if (best == nullptr)
    return make_error(ErrorCode::kInvalidArgument,
                      std::string(path) + ": no report format has this extension; name one (" + format_names() + ")");
  return best;
}

Result<std::string> render_output(const OutputFormat& format, const FormatInput& input) {
  if (format.render == nullptr)
    return make_error(ErrorCode::kInvalidArgument,
                      "report format '" + std::string(format.name) + "' copies the trace: it is written to a file only");
  return format.render(input);
}

Status write_output(const OutputFormat& format, const FormatInput& input, const std::string& path) {
  if (format.write != nullptr) return format.write(input, path);
  return write_file_atomic(path, format.render(input));
}

}  // namespace attnprof
