#include "capture_ranges.h"

#include <charconv>

namespace attnprof {

CaptureRanges collect_ranges(const Trace& trace) {
  CaptureRanges out;
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kUserAnnotation && s.cat != Category::kCpuOp) continue;
    std::string_view name = trace.name_of(s);
    if (name.starts_with(kCallAnnotationPrefix)) {
      out.calls.add({s.ts_ns, s.end_ns(), name.substr(kCallAnnotationPrefix.size())});
    } else if (name.starts_with(kModuleAnnotationPrefix)) {
      out.modules.add({s.ts_ns, s.end_ns(), name.substr(kModuleAnnotationPrefix.size())});
    }
  }
  out.calls.finish();
  out.modules.finish();
  return out;
}

std::optional<int64_t> call_id_of(std::string_view label) {
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(label.data(), label.data() + label.size(), id);
  if (ec != std::errc{} || ptr == label.data()) return std::nullopt;
  return id;
}

}  // namespace attnprof
