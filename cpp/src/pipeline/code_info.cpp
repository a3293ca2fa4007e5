// Code provenance: which commit of the profiled project a trace came from (git, run by the
// pipeline only), and which of its source files hold the attention modules (so `diff` can
// name the commits that touched them; from the trace's python_function frames).
#include <algorithm>
#include <filesystem>

#include "attnprof/analyze.h"
#include "attnprof/git_command.h"

namespace attnprof {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

// Files of the python_function frames that enclose any attention call's CPU start, in the
// order of the first such frame in the file. The frames with a file are slices, or, when
// ingest kept only the module frames as slices, Trace::source_frames (never both).
std::vector<std::string> attention_source_files(const Trace& trace, const Report& report) {
  constexpr size_t kMaxFiles = 256;  // a bound for pathological traces, far above real stacks
  std::vector<int64_t> starts;
  for (const Call& c : report.calls) starts.push_back(c.cpu_ts_ns);
  std::sort(starts.begin(), starts.end());
  std::vector<std::string> files;
  const auto add_frame = [&](StrId name, int64_t ts_ns, int64_t end_ns) {
    const auto first = std::lower_bound(starts.begin(), starts.end(), ts_ns);
    if (first == starts.end() || *first >= end_ns) return;  // encloses no call
    const std::string_view file = python_frame_file(trace.strings.get(name));
    if (file.empty() || std::find(files.begin(), files.end(), file) != files.end()) return;
    files.emplace_back(file);
  };
  for (const Slice& s : trace.slices) {
    if (s.cat == Category::kPythonFunction) add_frame(s.name, s.ts_ns, s.end_ns());
    if (files.size() >= kMaxFiles) return files;
  }
  for (const SourceFrame& f : trace.source_frames) {
    add_frame(f.name, f.ts_ns, f.end_ns);
    if (files.size() >= kMaxFiles) break;
  }
  return files;
}

std::optional<CodeInfo> detect_code_info_in(const std::string& dir) {
  auto root = run_git(dir.empty() ? "." : dir, {"rev-parse", "--show-toplevel"});
  if (!root) return std::nullopt;
  CodeInfo info;
  info.git_root = trimmed(*root);
  if (auto head = run_git(info.git_root, {"rev-parse", "--verify", "-q", "HEAD"})) info.git_commit = trimmed(*head);
  if (auto status = run_git(info.git_root, {"status", "--porcelain", "--untracked-files=no"}))
    info.git_dirty = !trimmed(*status).empty();
  return info;
}

std::optional<CodeInfo> code_info_beside(const std::string& trace_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = trace_path.empty() ? fs::current_path(ec) : fs::absolute(fs::path(trace_path), ec).parent_path();
  if (ec || dir.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
  return detect_code_info_in(dir.string());
}

}  // namespace attnprof
