// Multi-rank comparison (one Report from a directory of per-rank traces).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof {

struct RankSummary {
  int64_t rank = 0;
  std::string file;
  double attention_device_time_us = 0;
  double fused_time_fraction = 0;
  std::vector<double> layer_time_us;  // per layer index
};

struct RanksSection {
  std::vector<RankSummary> ranks;
  int64_t slowest_rank = -1;
  double slowest_over_median = 0;  // slowest attention time / median across ranks
};

}  // namespace attnprof
