// The real traces under ATTNPROF_FIXTURES_DIR (../shared/fixtures), for the tests that check a
// property on every fixture: every .json.gz below it, sorted, so failures name the same file
// in the same order on every machine.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace attnprof::testing {

inline std::vector<std::string> fixture_traces() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(ATTNPROF_FIXTURES_DIR))
    if (entry.is_regular_file() && entry.path().string().ends_with(".json.gz")) paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace attnprof::testing
