// attnprof: the command-line entry point. Subcommands register themselves (command.h).
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "command.h"

namespace attnprof::cli {
namespace {

struct Entry {
  int order;
  CommandFactory factory;
};

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

// Errors quote what the input held (tensor names, lines of a file): control characters are
// written as escapes so that the error stays one line and cannot move the terminal's cursor.
std::string one_line(std::string_view message) {
  std::string out;
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out;
}

// glibc raises its mmap threshold each time a large block is freed (up to 32 MiB), so that
// after ingest frees its working tables the index's and the calls' tables come from the
// heap, whose freed pages stay resident. A threshold fixed at 16 MiB keeps every table of
// that size or more in a mapping of its own, returned when freed (the 20 GB bench trace:
// 1,713 -> 1,656 MiB at the peak, the same as at 128 KiB), while the chunks' smaller tables
// still reuse heap pages (128 KiB, glibc's starting value, cost the 1 GB trace ~7% in page
// faults; 16 MiB costs nothing measurable: docs/performance.md, "Ninth round").
void keep_large_tables_in_own_mappings() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 16 * 1024 * 1024);
#endif
}

}  // namespace

Registration::Registration(int order, CommandFactory factory) {
  registry().push_back({order, std::move(factory)});
}

void fail(const std::string& command, const Error& error) {
  std::fprintf(stderr, "attnprof %s: error: %s\n", command.c_str(), one_line(error.message).c_str());
  throw CLI::RuntimeError(kExitBadInput);
}

void exit_with(int code) {
  if (code == 0) throw CLI::Success();
  throw CLI::RuntimeError(code);
}

std::function<void(size_t, size_t)> progress_bar(const std::string& label) {
  if (!::isatty(STDERR_FILENO)) return {};
  return [label, last = -1](size_t done, size_t total) mutable {
    if (total == 0) return;
    const int pct = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total));
    if (pct == last) return;
    last = pct;
    const int width = 30;
    const int filled = pct * width / 100;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3d%%", label.c_str(), filled,
                 "##############################", width - filled, "", pct);
    if (done >= total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

}  // namespace attnprof::cli

int main(int argc, char** argv) {
  using namespace attnprof::cli;
  keep_large_tables_in_own_mappings();
  CLI::App app{
      "attnprof: which attention kernel really ran, why a faster one did not, and what it costs.\n"
      "Reads torch.profiler (Kineto) traces from NVIDIA, AMD and CPU runs."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(ATTNPROF_VERSION));
  auto& entries = registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& e : entries) e.factory(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // Usage errors: one line and exit 2, same as any other bad input.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "attnprof: error: %s (see attnprof --help)\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnprof: internal error: %s\n", one_line(e.what()).c_str());
    return kExitBadInput;
  }
  return kExitOk;
}
