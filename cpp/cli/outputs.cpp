#include "outputs.h"

namespace attnprof::cli {

void add_output_options(CLI::App& cmd, OutputOptions& options) {
  for (const OutputFormat& f : output_formats())
    cmd.add_option(std::string(f.flags), options.paths[std::string(f.name)], std::string(f.help));
}

Status write_outputs(const OutputOptions& options, const FormatInput& input) {
  for (const OutputFormat& f : output_formats()) {
    const auto it = options.paths.find(f.name);
    if (it == options.paths.end() || it->second.empty()) continue;
    if (Status s = write_output(f, input, it->second); !s) return s;
  }
  return Ok{};
}

}  // namespace attnprof::cli
