// The user's files for one analysis (analyze.h, apply_user_files): every front end (the CLI, the
// binding, a fleet worker) reads them here, so they are checked the same way everywhere.
#include "attnprof/analyze.h"
#include "attnprof/io.h"

namespace attnprof {
namespace {

// Parses the file's text (read now unless given) into `target`.
template <typename T, typename Parse>
Status apply(const UserFile& file, Parse parse, std::optional<T>& target) {
  if (file.path.empty()) return Ok{};
  Result<std::string> text = file.text ? Result<std::string>(*file.text) : read_text_file(file.path);
  if (!text) return text.error();
  Result<T> parsed = parse(*text, file.path);
  if (!parsed) return parsed.error();
  target = std::move(*parsed);
  return Ok{};
}

}  // namespace

Status apply_user_files(const UserFiles& files, AnalyzeOptions& options) {
  if (Status s = apply(files.gpu_spec, parse_measured_peaks, options.measured_peaks); !s) return s;
  if (Status s = apply(files.kernels, parse_catalog_extension, options.kernels); !s) return s;
  std::optional<std::vector<rules::MeasuredGain>> gains;
  if (Status s = apply(files.gains, parse_measured_gains, gains); !s) return s;
  if (gains) options.measured_gains = std::move(*gains);
  return Ok{};
}

}  // namespace attnprof
