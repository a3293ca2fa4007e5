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

// "models/llama.py(123): forward" -> "models/llama.py"; "" for builtins and module markers.
std::string frame_file(std::string_view name) {
  if (name.empty() || name.front() == '<' || name.starts_with("nn.Module:")) return "";
  const size_t colon = name.find("): ");
  if (colon == std::string_view::npos) return "";
  const size_t paren = name.rfind('(', colon);
  if (paren == std::string_view::npos || paren == 0) return "";
  return std::string(name.substr(0, paren));
}

}  // namespace

// Files of the python_function frames that enclose any attention call's CPU start.
std::vector<std::string> attention_source_files(const Trace& trace, const Report& report) {
  constexpr size_t kMaxFiles = 256;  // a bound for pathological traces, far above real stacks
  std::vector<int64_t> starts;
  for (const Call& c : report.calls) starts.push_back(c.cpu_ts_ns);
  std::sort(starts.begin(), starts.end());
  std::vector<std::string> files;
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kPythonFunction) continue;
    const auto first = std::lower_bound(starts.begin(), starts.end(), s.ts_ns);
    if (first == starts.end() || *first >= s.end_ns()) continue;  // encloses no call
    std::string file = frame_file(trace.name_of(s));
    if (file.empty() || std::find(files.begin(), files.end(), file) != files.end()) continue;
    files.push_back(std::move(file));
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
