// Runs `git` as a subprocess (argv, no shell) and returns what it printed. The only place
// attnprof starts another program.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attnprof {

// `git -C dir args...`; stdout when git exits 0, nullopt when it fails or is not installed.
// stderr is discarded: callers say in their own words what could not be found.
std::optional<std::string> run_git(const std::string& dir, const std::vector<std::string>& args);

// Splits git's output into lines, dropping the final empty one.
std::vector<std::string> split_lines(const std::string& text);

}  // namespace attnprof
