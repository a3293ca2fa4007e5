// Number formats shared by diff's reasons and renderings ("1.12 ms", "5.02 GiB").
#pragma once

#include <fmt/format.h>

#include <string>

namespace attnprof::diff_format {

inline std::string time_text(double us) {
  if (us < 1000) return fmt::format("{:.1f} us", us);
  if (us < 1e6) return fmt::format("{:.2f} ms", us / 1e3);
  return fmt::format("{:.2f} s", us / 1e6);
}

inline std::string bytes_text(double b) {
  if (b >= double(1ull << 30)) return fmt::format("{:.2f} GiB", b / double(1ull << 30));
  if (b >= double(1ull << 20)) return fmt::format("{:.1f} MiB", b / double(1ull << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024);
  return fmt::format("{:.0f} B", b);
}

}  // namespace attnprof::diff_format
