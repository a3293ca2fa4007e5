// Outputs that copy the original trace (trace_outputs.h): from the trace the analysis kept, or
// read here and located by ingest; formatted by the renderers.
#include "attnprof/trace_outputs.h"

#include <filesystem>

#include "attnprof/call_facts.h"
#include "attnprof/ingest.h"
#include "attnprof/io.h"
#include "attnprof/output_format.h"
#include "attnprof/render.h"

namespace attnprof {
namespace {

// The annotated text of the trace file at `path`; errors name the file.
Result<std::string> annotate_file(const std::string& path, const Report& report) {
  auto text = read_trace_text(path);
  if (!text) return text.error();
  auto layout = scan_trace_layout(*text, kernel_correlations(report));  // in place: no second copy
  if (!layout) return make_error(layout.error().code, path + ": " + layout.error().message);
  return render_annotated_trace(*text, *layout, report);
}

Status write_annotated(std::string_view annotated, const std::string& out_path) {
  if (!std::string_view(out_path).ends_with(".gz")) return write_file_atomic(out_path, annotated);
  auto compressed = gzip_compress(annotated);
  if (!compressed) return compressed.error();
  return write_file_atomic(out_path, *compressed);
}

}  // namespace

Result<std::string> annotate_trace(std::string_view original, const Report& report) {
  auto layout = scan_trace_layout(original, kernel_correlations(report));
  if (!layout) return layout.error();
  return render_annotated_trace(original, *layout, report);
}

Status write_chrome_overlay(const Report& report, const KeptTrace& trace, const std::string& out_path) {
  return write_annotated(render_annotated_trace(trace.text, trace.layout, report), out_path);
}

Status write_chrome_overlay(const Report& report, const std::string& trace_path, const std::string& out_path) {
  std::string path = trace_path;
  if (path.empty() && !report.source.files.empty()) path = report.source.files.front();
  if (path.empty())
    return make_error(ErrorCode::kInvalidArgument, "--chrome needs the original trace, and the report names none");
  auto annotated = annotate_file(path, report);
  if (!annotated) return annotated.error();
  return write_annotated(*annotated, out_path);
}

Result<int64_t> write_tensorboard(const Report& report, const KeptTrace& trace, const std::string& dir,
                                  const TensorBoardOptions& options) {
  TensorBoardOptions named = options;
  if (named.trace_path.empty()) named.trace_path = trace.path;
  return write_tensorboard_events(report, dir, named, render_annotated_trace(trace.text, trace.layout, report));
}

Result<int64_t> write_tensorboard(const Report& report, const std::string& dir, const TensorBoardOptions& options) {
  TensorBoardOptions resolved = options;
  std::error_code ec;
  if (resolved.trace_path.empty() && !report.source.files.empty() &&
      std::filesystem::is_regular_file(report.source.files.front(), ec))
    resolved.trace_path = report.source.files.front();
  std::string annotated;
  if (!resolved.trace_path.empty()) {
    auto text = annotate_file(resolved.trace_path, report);
    if (!text) return text.error();
    annotated = std::move(*text);
  }
  return write_tensorboard_events(report, dir, resolved, annotated);
}

namespace {

// The trace reports[i]'s analysis kept, nullptr when it kept none.
const KeptTrace* kept_trace(const FormatInput& in, size_t i) {
  return i < in.traces.size() && !in.traces[i].text.empty() ? &in.traces[i] : nullptr;
}

Status write_chrome(const FormatInput& in, const std::string& path) {
  if (in.reports.size() != 1)
    return make_error(ErrorCode::kInvalidArgument, "--chrome annotates one trace; give one trace file");
  if (const KeptTrace* kept = kept_trace(in, 0)) return write_chrome_overlay(in.reports.front(), *kept, path);
  return write_chrome_overlay(in.reports.front(), "", path);
}

// Each Report appends one run, with its Markdown report as the text summary.
Status write_tensorboard_runs(const FormatInput& in, const std::string& dir) {
  for (size_t i = 0; i < in.reports.size(); ++i) {
    TensorBoardOptions tb;
    tb.markdown = render_markdown(in.views[i]);
    const KeptTrace* kept = kept_trace(in, i);
    auto step = kept ? write_tensorboard(in.reports[i], *kept, dir, tb) : write_tensorboard(in.reports[i], dir, tb);
    if (!step) return step.error();
  }
  return Ok{};
}

}  // namespace

extern const OutputFormat kChromeFormat{"chrome", ".json.gz", "--chrome",
                                        "write the trace plus an attention overlay track for chrome://tracing and "
                                        "Perfetto (gzip when the name ends in .gz)",
                                        nullptr, write_chrome};

extern const OutputFormat kTensorBoardFormat{
    "tensorboard", "", "--tensorboard",
    "append this run to a TensorBoard log dir (scalars, the Markdown report, the trace)", nullptr,
    write_tensorboard_runs};

}  // namespace attnprof
