#include "outputs.h"

#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/overlay.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/tensorboard.h"
#include "attnprof/trace_outputs.h"

namespace attnprof::cli {
namespace {

std::string reports_json(const std::vector<Report>& reports) {
  if (reports.size() == 1) return report_to_json(reports.front());
  std::string out = "[\n";
  for (size_t i = 0; i < reports.size(); ++i) out += (i ? ",\n" : "") + report_to_json(reports[i]);
  return out + "\n]\n";
}

std::string reports_markdown(const std::vector<Report>& reports) {
  std::string out;
  for (size_t i = 0; i < reports.size(); ++i) out += (i ? "\n---\n\n" : "") + render_markdown(reports[i]);
  return out;
}

}  // namespace

void add_output_options(CLI::App& cmd, OutputOptions& options) {
  cmd.add_option("--json", options.json_path,
                 "write the Report as JSON (several traces: a JSON array of Reports, in argument order)");
  cmd.add_option("--md,--markdown", options.markdown_path, "write the Report as Markdown");
  cmd.add_option("--html", options.html_path,
                 "write a self-contained HTML dashboard (several traces: one page with a multi-run view)");
  cmd.add_option("--chrome", options.chrome_path,
                 "write the trace plus an attention overlay track for chrome://tracing and Perfetto "
                 "(gzip when the name ends in .gz)");
  cmd.add_option("--tensorboard", options.tensorboard_dir,
                 "append this run to a TensorBoard log dir (scalars, the Markdown report, the trace)");
}

Status write_outputs(const OutputOptions& options, const std::vector<Report>& reports) {
  if (!options.json_path.empty())
    if (Status s = write_file_atomic(options.json_path, reports_json(reports)); !s) return s;
  if (!options.markdown_path.empty())
    if (Status s = write_file_atomic(options.markdown_path, reports_markdown(reports)); !s) return s;
  if (!options.html_path.empty())
    if (Status s = write_file_atomic(options.html_path, render_html(reports)); !s) return s;
  if (!options.chrome_path.empty()) {
    if (reports.size() != 1)
      return make_error(ErrorCode::kInvalidArgument, "--chrome annotates one trace; give one trace file");
    if (Status s = write_chrome_overlay(reports.front(), "", options.chrome_path); !s) return s;
  }
  if (!options.tensorboard_dir.empty()) {
    for (const Report& r : reports) {
      TensorBoardOptions tb;
      tb.markdown = render_markdown(r);
      if (auto step = write_tensorboard(r, options.tensorboard_dir, tb); !step) return step.error();
    }
  }
  return Ok{};
}

}  // namespace attnprof::cli
