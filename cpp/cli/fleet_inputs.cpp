#include "fleet_inputs.h"

#include <fmt/format.h>
#include <glob.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attnprof/ranks.h"

namespace attnprof::cli {
namespace {

namespace fs = std::filesystem;

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

Result<std::vector<std::string>> list_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kFileNotFound, fmt::format("{}: cannot read this list of traces", path));
  std::vector<std::string> files;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line.front() != '#') files.push_back(line);
  }
  if (files.empty()) return make_error(ErrorCode::kEmptyInput, fmt::format("{}: the list names no trace", path));
  return files;
}

Result<std::vector<std::string>> glob_files(const std::string& pattern) {
  glob_t matches{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &matches);  // sorted by the C library
  std::vector<std::string> files;
  if (rc == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i) files.emplace_back(matches.gl_pathv[i]);
  ::globfree(&matches);
  if (files.empty()) return make_error(ErrorCode::kFileNotFound, fmt::format("{}: no file matches", pattern));
  return files;
}

// The Python beside this binary (a virtualenv's bin/ holds both), else python3 on PATH;
// ATTNPROF_PYTHON overrides both.
std::string python_executable() {
  if (const char* env = std::getenv("ATTNPROF_PYTHON"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const char* name : {"python3", "python"})
      if (fs::exists(self.parent_path() / name, ec)) return (self.parent_path() / name).string();
  return "python3";
}

}  // namespace

Result<std::optional<std::vector<std::string>>> fleet_files(const std::string& input) {
  using Files = std::optional<std::vector<std::string>>;
  std::error_code ec;
  if (input.size() > 1 && input.front() == '@') {
    Result<std::vector<std::string>> files = list_file(input.substr(1));
    if (!files) return files.error();
    return Files(std::move(*files));
  }
  if (fs::is_directory(input, ec)) {
    std::vector<std::string> files = find_trace_files(input);
    if (files.empty())
      return make_error(ErrorCode::kEmptyInput,
                        fmt::format("{}: no trace files (*.pt.trace.json[.gz], *trace*.json[.gz]) in this directory", input));
    return Files(std::move(files));
  }
  if (has_glob_chars(input) && !fs::exists(input, ec)) {
    Result<std::vector<std::string>> files = glob_files(input);
    if (!files) return files.error();
    return Files(std::move(*files));
  }
  return Files();
}

bool looks_like_ray_address(const std::string& value) {
  if (value == "auto" || value == "local" || value.find("://") != std::string::npos) return true;
  const size_t colon = value.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size()) return false;
  return value.find_first_not_of("0123456789", colon + 1) == std::string::npos;
}

Error run_fleet_in_python(const FleetRequest& r) {
  nlohmann::json request = {{"inputs", r.inputs},   {"address", r.address},         {"out_dir", r.out_dir},
                            {"strict", r.strict},   {"print_format", r.print_format}, {"torch", r.torch_version},
                            {"arch", r.arch},       {"outputs", nlohmann::json::object()},
                            {"gpu_spec", r.gpu_spec}, {"kernels", r.kernels}};
  for (const auto& [format, path] : r.outputs)
    if (!path.empty()) request["outputs"][format] = path;
  const std::string python = python_executable();
  const std::string text = request.dump();
  std::vector<const char*> argv = {python.c_str(), "-m", "attnprof.fleet", "--request", text.c_str(), nullptr};
  ::execvp(python.c_str(), const_cast<char* const*>(argv.data()));
  return {ErrorCode::kUnsupported,
          fmt::format("--ray runs attnprof.fleet in Python, and {} cannot be started ({}): install the package "
                      "with `pip install 'attnprof[ray]'` or set ATTNPROF_PYTHON",
                      python, std::strerror(errno))};
}

}  // namespace attnprof::cli
