// The format registry: every OutputFormat (output_format.h) that cpp/src/outputs/format_list.h
// names, in its order. The CLI's output flags and `--format`, the binding's render()/save() and
// Python's AttentionReport.save(path, fmt) all read it, so adding a format is its file (the
// renderer and its row) plus one line of that list (docs/architecture.md).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/output_format.h"

namespace attnprof {

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
