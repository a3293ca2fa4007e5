// Helpers for the analysis tests on the real H200 fixtures: ground truth and loaded runs.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/ingest.h"
#include "attnprof/scaling.h"

namespace attnprof::testing {

inline std::string h200_dir() { return std::string(ATTNPROF_FIXTURES_DIR) + "/h200-torch2.11"; }

inline std::string h200_trace(const std::string& name) { return h200_dir() + "/traces/" + name + ".pt.trace.json.gz"; }

// ground_truth.json run record by name.
inline nlohmann::json ground_truth(const std::string& name) {
  std::ifstream in(h200_dir() + "/ground_truth.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto all = nlohmann::json::parse(text.str());
  for (const auto& run : all["runs"])
    if (run["name"] == name) return run;
  ADD_FAILURE() << "no ground truth for " << name;
  return {};
}

inline ScalingRun load_run(const std::string& name) {
  auto trace = load_trace(h200_trace(name));
  EXPECT_TRUE(trace.ok()) << name;
  if (!trace.ok()) return {};
  const Report report = analyze_trace(*trace);
  auto run = scaling_run(report, *trace);
  EXPECT_TRUE(run.ok()) << name;
  return run.ok() ? *run : ScalingRun{};
}

inline std::vector<ScalingRun> load_sweep(const std::string& prefix) {
  std::vector<ScalingRun> runs;
  for (int s : {512, 1024, 2048, 4096}) runs.push_back(load_run(prefix + std::to_string(s)));
  return runs;
}

}  // namespace attnprof::testing
