#include "outputs.h"

#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"

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
}

Status write_outputs(const OutputOptions& options, const std::vector<Report>& reports) {
  if (!options.json_path.empty())
    if (Status s = write_file_atomic(options.json_path, reports_json(reports)); !s) return s;
  if (!options.markdown_path.empty())
    if (Status s = write_file_atomic(options.markdown_path, reports_markdown(reports)); !s) return s;
  return Ok{};
}

}  // namespace attnprof::cli
