// The comparison of runs: two sides (each one or more runs of one configuration) -> per-layer
// and total deltas with a noise rule, backend changes and their explanations, and the input,
// environment and code causes. A pure function of Reports (no git, no file loading), below
// `attnprof diff` (diff.h, which loads the runs and lists the commits). Its result is the
// Report's diff section (sections/diff.h), which every renderer reads, the dashboard's
// multi-run view included (compare_with_first). How every number and the noise rule are
// computed: docs/diff.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "attnprof/report.h"
#include "attnprof/sections/diff.h"  // the verdict types

namespace attnprof {

// One side of the comparison: one or more runs of the same configuration.
struct DiffSide {
  std::string label;
  std::vector<Report> runs;
};

// Pure comparison (no I/O, no git): per-layer and total deltas, backend changes, input and
// environment causes, the code range recorded in SourceInfo::code (commits not listed), and
// rank by rank when both first runs have a ranks section.
DiffVerdict compare_reports(const DiffSide& baseline, const DiffSide& candidate,
                            const DiffThresholds& thresholds);
// The same on runs held elsewhere (the dashboard's views): the labels are left empty.
DiffVerdict compare_runs(std::span<const Report> baseline, std::span<const Report> candidate,
                         const DiffThresholds& thresholds);

// Several runs shown together (analyze of several traces, a dashboard of several Reports):
// each run after the first gets a diff section holding its comparison with the first
// (compare_runs, default thresholds, the runs' first files as labels, named "against the first
// run"). The first run keeps its own section, if any.
void compare_with_first(std::vector<Report>& runs);

// The exact noise rule, as printed in the JSON verdict and docs/diff.md.
extern const char* const kNoiseRule;

}  // namespace attnprof
