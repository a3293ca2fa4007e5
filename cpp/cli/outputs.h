// The output flags of every command, one vocabulary (docs/cli.md, "Outputs"):
//   --json, --md, --html, --text [FILE]  (and --csv [FILE] where the answer is a table)
// write the command's answer in that form to FILE, or to stdout when FILE is '-' or left out
// (the terminal view is then not printed). --quiet prints no terminal view. A command whose
// answer is a set of Reports (analyze) also gets the format registry's formats that copy the
// trace (--chrome, --tensorboard). Each file is written atomically: no partial file on failure.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/document.h"
#include "attnprof/error.h"
#include "attnprof/formats.h"

namespace attnprof::cli {

struct OutputOptions {
  // Form or format name -> path as given ("" or "-" = stdout); absent = not asked for.
  std::map<std::string, std::optional<std::string>, std::less<>> paths;
  bool quiet = false;
  std::vector<std::pair<const CLI::Option*, std::string>> deprecated;  // old spelling -> its line

  // The paths that name a file, by format name (stdout requests left out).
  std::map<std::string, std::string, std::less<>> files() const;
  // The form asked for on stdout ("" = none): the terminal view is then not printed.
  std::string stdout_form() const;
};

// A command whose answer is a Document: --json/--md/--html/--text, --csv when `table`.
// `what` names the answer in the help: "write <what> as JSON ...".
void add_document_options(CLI::App& cmd, OutputOptions& options, std::string_view what, bool table);
// A command whose answer is Reports: every row of the format registry (formats.h).
void add_report_options(CLI::App& cmd, OutputOptions& options, std::string_view what);

// An older spelling that keeps working for one release: `attnprof: <old> is deprecated, use <new>`.
void add_deprecated(OutputOptions& options, CLI::Option* old, std::string_view replacement);

// Writes every asked-for form of `document`, then its terminal view unless a form went to stdout
// or --quiet. Stops at the first failure and returns it.
Status write_document_outputs(const OutputOptions& options, const Document& document);
// The same for Reports, through the format registry; the terminal view is `stdout_format`.
Status write_report_outputs(const OutputOptions& options, const FormatInput& input, std::string_view stdout_format);

}  // namespace attnprof::cli
