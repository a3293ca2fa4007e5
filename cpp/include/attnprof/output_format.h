// One output format: a row that its own file defines beside its renderer (text.cpp,
// markdown.cpp, html_dashboard.cpp, json_format.cpp; trace_outputs.cpp for the formats that
// copy the trace) and that one line of cpp/src/outputs/format_list.h registers (formats.h).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/report_view.h"
#include "attnprof/trace_layout.h"

namespace attnprof {

// What every format formats: the Reports and their views, computed once for all formats.
struct FormatInput {
  const std::vector<Report>& reports;
  const std::vector<ReportView>& views;  // views[i] is the view of reports[i]
  size_t threads = 1;                    // threads a format may write on (the text is the same for any value)
  // traces[i]: the trace reports[i] came from, as its analysis kept it (analyze_file_keeping_trace),
  // for the formats that copy the trace; empty, or a trace with no text, where none was kept,
  // and those formats then read the file the Report names.
  std::span<const KeptTrace> traces = {};
};

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

}  // namespace attnprof
