// The diff section of a Report: the verdicts of `attnprof diff` (each pair of runs compared,
// with its per-layer deltas, backend changes and causes), and, on the second and later runs of
// a multi-run dashboard, that run's comparison with the first. Filled by the compare stage
// (compare_reports / compare_runs, compare.h) and the diff stage (diff_paths, diff.h); read by
// every renderer. How every number and the noise rule are computed: docs/diff.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/sections/ranks.h"

namespace attnprof {

// What counts as a regression. Percentages are stored as fractions (0.10 = 10%).
struct DiffThresholds {
  double max_fused_drop_pp = 5;        // fused share may drop by this many percentage points
  double max_time_increase = 0.10;     // attention device time may grow by this fraction
  double max_memory_increase = 0.10;   // peak memory during attention may grow by this fraction
};

// One metric before and after, summarised over every sample (step of every run) of a side.
struct MetricDelta {
  bool known = false;           // both sides have samples, none of them unknown
  double before = 0;            // median of the baseline samples
  double after = 0;             // median of the candidate samples
  int64_t before_samples = 0;   // samples with a value
  int64_t after_samples = 0;
  // Samples whose value depends on device time the trace did not record (Call::
  // device_time_unknown): a side with any is "unknown", and the metric is not compared.
  int64_t before_unknown = 0;
  int64_t after_unknown = 0;
  double noise = 0;             // max(spread of baseline, spread of candidate); spread = max - min
  double worsening = 0;         // change in the "worse" direction (negative = improvement)
  double limit = 0;             // allowed worsening, in the metric's own unit
  bool gated = false;           // whether this metric can make the verdict a regression
  bool regression = false;      // gated && worsening > limit && worsening > noise
  double relative() const { return before != 0 ? (after - before) / before : 0; }
};

struct LayerDelta {
  int64_t layer = -1;
  std::string module;                  // candidate's module path (baseline's when absent)
  bool in_baseline = true;
  bool in_candidate = true;
  std::string backend_before;          // "cudnn", "cudnn+math", "" when absent
  std::string backend_after;
  std::string class_before;            // slowest backend class of those calls (backend_class_of), "" when absent
  std::string class_after;
  MetricDelta time_us;                 // attention device time of the layer per step (JSON: device_time_us)
  MetricDelta fused_time_pct;          // 0..100
  MetricDelta fused_calls_pct;         // 0..100
  MetricDelta tflops;                  // sum(flops) / sum(device time)
  MetricDelta peak_bytes;              // peak allocated during the layer's calls
  std::vector<std::string> input_changes;  // "head_dim 128 -> 96", "mask appeared (bool)"
  // Why the candidate left the baseline's backends: rejection_lines (call_facts.h) of its
  // representative call, joined by "; "; "" when its calls carry no explanation.
  std::string fallback_explanation;
  bool backend_changed() const { return backend_before != backend_after; }
};

// Consecutive layers that changed backend the same way: "layers 0-3: cudnn -> math".
struct BackendChange {
  std::vector<int64_t> layers;
  std::string before, after;
  std::string explanation;  // from Call::explanation of the candidate, "" when not filled
};

struct CodeCommit {
  std::string hash;
  std::string subject;
  std::vector<std::string> files;  // files the commit touched (restricted to the filter files)
};

struct CodeChange {
  std::string before_commit, after_commit;
  bool before_dirty = false, after_dirty = false;
  std::string config_hash_before, config_hash_after;
  std::string repo;                    // repository git ran in, "" when it did not run
  bool history_available = false;     // both commits were found in `repo`
  bool filtered_by_files = false;      // commits restricted to the attention modules' files
  std::vector<std::string> files;      // those files, relative to the repository root
  std::vector<CodeCommit> commits;     // newest first, as `git log` prints them
  std::string note;                    // why the history is missing or unfiltered
  bool commit_changed() const { return before_commit != after_commit; }
  bool config_changed() const { return config_hash_before != config_hash_after; }
};

struct CauseSummary {
  std::vector<std::string> inputs;       // "head_dim 128 -> 96 (layers 0-3)"
  std::vector<std::string> environment;  // "torch 2.11 -> 2.13", "GPU NVIDIA H200 -> NVIDIA H100"
  std::optional<CodeChange> code;        // absent when neither Report records its code
};

// Fleet Reports (both with a ranks section): each rank against the same rank, layer by layer.
// Ranks are matched by number. A rank's time is its RankSummary's attention device time, one
// sample a side, so its noise is 0 and only the threshold applies (docs/diff.md, "Ranks").
struct RankLayerDelta {
  int64_t layer = 0;
  bool in_baseline = false, in_candidate = false;  // the rank ran attention calls in the layer
  double before_us = 0, after_us = 0;               // RankSummary::layer_time_us, 0 when absent
  std::string backend_before, backend_after;        // RankLayer::backend, "" when absent
  bool backend_changed() const { return in_baseline && in_candidate && backend_before != backend_after; }
};

struct RankDelta {
  int64_t rank = 0;
  std::string file_before, file_after;
  MetricDelta time_us;        // gated: time_increase over the baseline rank's time (JSON: device_time_us)
  int64_t worst_layer = -1;   // the layer whose time grew most, -1 when none grew
  std::vector<RankLayerDelta> layers;  // every layer either side ran, by index
};

// Consecutive layers of one rank that changed backend the same way.
struct RankBackendChange {
  int64_t rank = 0;
  std::vector<int64_t> layers;
  std::string before, after;
};

struct RanksDelta {
  int64_t ranks_before = 0, ranks_after = 0;    // analysed ranks
  int64_t failed_before = 0, failed_after = 0;  // ranks whose trace could not be analysed
  MetricDelta median_us;                        // fleet median attention time (gated)
  MetricDelta slowest_over_median;              // reported, not gated
  std::vector<RankDelta> ranks;                 // ranks analysed on both sides, by rank
  std::vector<int64_t> only_baseline, only_candidate;
  std::vector<RankBackendChange> backend_changes;  // by rank, then layer
  // Candidate stragglers (rank and layer; layer -1 = overall) the baseline did not have.
  std::vector<Straggler> new_stragglers;
};

struct DiffVerdict {
  std::string name;                      // pair name (file stem) in directory mode, "against the first run"
                                         // for compare_with_first
  std::string baseline, candidate;       // labels (paths) of the two sides
  int64_t baseline_runs = 0, candidate_runs = 0;
  bool regression = false;
  std::vector<std::string> reasons;      // one line per gated metric that regressed
  int64_t calls_before = 0, calls_after = 0;
  // attention_time_us is written as attention_device_time_us in the JSON.
  MetricDelta attention_time_us, fused_time_pct, fused_calls_pct, tflops, peak_bytes;
  std::vector<LayerDelta> layers;
  std::vector<BackendChange> backend_changes;
  CauseSummary causes;
  std::optional<RanksDelta> ranks;       // both sides' first runs are fleet Reports
  std::vector<std::string> notes;        // what could not be compared and why
};

// The whole comparison: the thresholds it gated with and one verdict per pair of runs.
struct DiffSection {
  DiffThresholds thresholds;
  std::string noise_rule;                // the rule as compare.h words it (kNoiseRule)
  std::vector<DiffVerdict> pairs;
  std::vector<std::string> unmatched;    // directory mode: files present on one side only
  bool regression() const {
    for (const DiffVerdict& v : pairs)
      if (v.regression) return true;
    return false;
  }
};

}  // namespace attnprof
