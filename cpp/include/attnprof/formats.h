// The output formats, one table (cpp/src/outputs/formats.cpp): a name, the file extension, the
// CLI flags, and how the format is rendered or written. The CLI's output flags and `--format`,
// the binding's render()/save() and Python's AttentionReport.save(path, fmt) all read it, so
// adding a format is its renderer's file plus one row there (docs/architecture.md).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/report_view.h"

namespace attnprof {

// What every format formats: the Reports and their views, computed once for all formats.
struct FormatInput {
  const std::vector<Report>& reports;
  const std::vector<ReportView>& views;  // views[i] is the view of reports[i]
};

std::vector<ReportView> views_of(const std::vector<Report>& reports);

struct OutputFormat {
  std::string_view name;       // "markdown": the binding's and Python's name for it
  std::string_view extension;  // ".md": how save() without a format recognises a path; "" = a directory
  std::string_view flags;      // "--md,--markdown": the CLI options that write it to a file
  std::string_view help;
  // The whole output as one text; null for formats that copy the original trace (write only).
  std::string (*render)(const FormatInput& input);
  // Writes `path`; null = write render's text atomically (no partial file on failure).
  Status (*write)(const FormatInput& input, const std::string& path);
};

// Every format, in the order the CLI writes them.
std::span<const OutputFormat> output_formats();

// The format named `name`; the error lists the names there are.
Result<const OutputFormat*> find_output_format(std::string_view name);

// The format whose extension ends `path` (the longest that does), else an error naming the path.
Result<const OutputFormat*> output_format_of_path(std::string_view path);

// The format as text; an error for a format that is only written (chrome, tensorboard).
Result<std::string> render_output(const OutputFormat& format, const FormatInput& input);

Status write_output(const OutputFormat& format, const FormatInput& input, const std::string& path);

}  // namespace attnprof
