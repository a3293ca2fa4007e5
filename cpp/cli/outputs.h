// Output flags shared by every command that produces Reports (--json FILE, --md FILE, ...).
// A command adds them with add_output_options and writes them with write_outputs; each file
// is written atomically (no partial file on failure). To add a format: a field, one
// add_option line and one block in write_outputs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof::cli {

struct OutputOptions {
  std::string json_path;      // one Report as JSON; several traces -> a JSON array of Reports
  std::string markdown_path;  // Markdown; several traces -> sections separated by a rule
  std::string html_path;      // HTML dashboard; several traces -> one page with a multi-run view
  std::string chrome_path;    // annotated trace (.gz -> gzip); one Report only
  std::string tensorboard_dir;  // TensorBoard log dir; each Report appends one run (step)
};

void add_output_options(CLI::App& cmd, OutputOptions& options);

// Writes every requested file. Stops at the first failure and returns it.
Status write_outputs(const OutputOptions& options, const std::vector<Report>& reports);

}  // namespace attnprof::cli
