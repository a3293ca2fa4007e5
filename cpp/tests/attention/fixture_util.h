// Loading the shared real traces for the attention tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "attnprof/analyze.h"

namespace attnprof::test {

inline std::string fixture(const std::string& relative) { return std::string(ATTNPROF_FIXTURES_DIR) + "/" + relative; }

inline std::string h200(const std::string& name) { return fixture("h200-torch2.11/traces/" + name + ".pt.trace.json.gz"); }

// Each fixture is analysed once per test binary.
inline const Report& analyzed(const std::string& path) {
  static std::map<std::string, Report> cache;
  auto it = cache.find(path);
  if (it == cache.end()) {
    Result<Report> r = analyze_file(path);
    if (!r) {
      ADD_FAILURE() << path << ": " << r.error().message;
      static const Report empty;
      return empty;
    }
    it = cache.emplace(path, std::move(*r)).first;
  }
  return it->second;
}

}  // namespace attnprof::test
