// The rank-by-rank part of compare_runs (compare_ranks.cpp), and the one value-against-value
// use of the noise rule it shares with the totals (compare_reports.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attnprof/compare.h"

namespace attnprof {

// One sample a side (nullopt: unknown, e.g. a graph-captured rank), worse when it grows, by
// the noise rule of every other metric (limit = max_increase x before; noise 0).
MetricDelta growth_delta(std::optional<double> before, std::optional<double> after, double max_increase, bool gated);

// Each rank against the same rank, layer by layer; the fleet median; new stragglers.
RanksDelta compare_ranks(const RanksSection& baseline, const RanksSection& candidate, const DiffThresholds& thresholds);

// The gate's lines: the fleet median, then the ranks beyond the limit (worst first, each with
// the layer whose time grew most), at most a few named and the rest counted.
void add_rank_reasons(std::vector<std::string>& reasons, const RanksDelta& ranks, const DiffThresholds& thresholds);

// A fleet Report's calls are one rank's (its slowest); when the two sides' are different ranks
// the call-level comparison compares different ranks, and the note says which.
std::optional<std::string> body_rank_note(const RanksSection& baseline, const RanksSection& candidate);

}  // namespace attnprof
