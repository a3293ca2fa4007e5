// Output flags shared by every command that produces Reports (--json FILE, --md FILE, ...), one
// per row of the format registry (formats.h). A command adds them with add_output_options and
// writes them with write_outputs; each file is written atomically (no partial file on failure).
// Adding a format adds its flag here without an edit.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "attnprof/error.h"
#include "attnprof/formats.h"

namespace attnprof::cli {

struct OutputOptions {
  // Format name -> path given on the command line ("" = not asked for). Several traces: what
  // the format does with several Reports (a JSON array, Markdown sections, one multi-run page,
  // one TensorBoard run each; the annotated trace takes one).
  std::map<std::string, std::string, std::less<>> paths;
};

void add_output_options(CLI::App& cmd, OutputOptions& options);

// Writes every requested file, in registry order. Stops at the first failure and returns it.
Status write_outputs(const OutputOptions& options, const FormatInput& input);

}  // namespace attnprof::cli
