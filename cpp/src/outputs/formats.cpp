// The format registry (formats.h): the rows that format_list.h names, in its order.
#include "attnprof/formats.h"

#include <array>

#include "attnprof/io.h"

namespace attnprof {

// Each row is defined in its format's own file; the list names them (format_list.h).
#define ATTNPROF_FORMAT(row) extern const OutputFormat row;
#include "outputs/format_list.h"
#undef ATTNPROF_FORMAT

namespace {

// Copies of the rows, made on first use (the rows are constant-initialised, so they are set
// before any code runs and the copy never sees an empty row).
const auto& registered_formats() {
  static const std::array formats = {
#define ATTNPROF_FORMAT(row) row,
#include "outputs/format_list.h"
#undef ATTNPROF_FORMAT
  };
  return formats;
}

std::string format_names() {
  std::string names;
  for (const OutputFormat& f : registered_formats()) names += (names.empty() ? "" : ", ") + std::string(f.name);
  return names;
}

}  // namespace

std::span<const OutputFormat> output_formats() { return registered_formats(); }

Result<const OutputFormat*> find_output_format(std::string_view name) {
  for (const OutputFormat& f : registered_formats())
    if (f.name == name) return &f;
  return make_error(ErrorCode::kInvalidArgument,
                    "unknown report format '" + std::string(name) + "' (" + format_names() + ")");
}

Result<const OutputFormat*> output_format_of_path(std::string_view path) {
  const OutputFormat* best = nullptr;
  for (const OutputFormat& f : registered_formats())
    if (!f.extension.empty() && path.ends_with(f.extension) && (!best || f.extension.size() > best->extension.size()))
      best = &f;
  if (best == nullptr)
    return make_error(ErrorCode::kInvalidArgument,
                      std::string(path) + ": no report format has this extension; name one (" + format_names() + ")");
  return best;
}

Result<std::string> render_output(const OutputFormat& format, const FormatInput& input) {
  if (format.render == nullptr)
    return make_error(ErrorCode::kInvalidArgument,
                      "report format '" + std::string(format.name) + "' copies the trace: it is written to a file only");
  return format.render(input);
}

Status write_output(const OutputFormat& format, const FormatInput& input, const std::string& path) {
  if (format.write != nullptr) return format.write(input, path);
  return write_file_atomic(path, format.render(input));
}

}  // namespace attnprof
