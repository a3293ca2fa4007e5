// attnprof.verify: each suggested fix applied to the user's model in its own process and
// measured against the unchanged model (python/attnprof/verify.py runs it; the verify stage
// plans the fixes from the findings and judges the measurements). docs/verify.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof {

struct Finding;
struct Report;
struct SourceInfo;

struct FixVerification {
  std::string fix;            // fix::k* (vocabulary.h)
  std::string change;         // what was changed (FixWord::change)
  std::string finding_rule;   // the finding it answers (Finding::rule)
  std::vector<int64_t> layers;  // the finding's layers
  bool applied = false;       // the fix ran; false = not_applicable
  std::string verdict;        // verdict::k*
  std::string reason;         // why this verdict, one line
  std::string manual;         // what to do by hand where the fix was not applied
  int64_t pairs = 0;          // baseline/fixed runs measured, interleaved A B A B ...
  double baseline_ms = 0;     // median forward time of the unchanged model
  double fixed_ms = 0;        // median forward time with the fix
  double speedup = 0;         // baseline_ms / fixed_ms
  std::vector<double> speedup_ci;  // [low, high], 95% paired bootstrap of the speed-up; empty = not measured
  int64_t peak_bytes_before = 0;   // peak memory of one forward (max_memory_allocated on GPU, allocator peak on CPU)
  int64_t peak_bytes_after = 0;
  double max_abs_diff = 0;    // outputs of the same inputs, baseline against fixed
  double max_rel_diff = 0;    // max |a - b| / max |a|
  double tolerance = 0;       // DtypeWord::verify_tolerance of the outputs' dtype
  std::string dtype;          // the outputs' dtype
  double predicted_speedup = 0;  // the finding's expected gain (0 = not estimated)
  std::vector<std::string> backends_before;  // attention backends that ran, before and after
  std::vector<std::string> backends_after;
  // The attention kernels (CPU: ops) that ran, from a short profile of each side.
  std::vector<std::string> kernels_before;
  std::vector<std::string> kernels_after;
};

struct VerificationSection {
  std::string device;         // "cpu", "cuda:0 (NVIDIA H200)"
  std::string timer;          // "perf_counter" or "cuda_events"
  std::vector<double> load_average;  // 1, 5, 15 minutes when measured (os.getloadavg)
  int64_t warmup = 0;         // runs of each side before the measured pairs
  std::string model;          // the model's class
  std::vector<FixVerification> fixes;
};

// The verification of the fix that answers `finding` (same rule and layers); nullptr when the
// Report has none.
const FixVerification* verification_of(const Report& report, const Finding& finding);

// The device a measured gain belongs to: the GPU's name, else the arch, else "cpu" for a run
// without GPU activity ("" when none is known). attnprof.verify saves gains under it and the
// rules match them by it.
std::string gain_device(const SourceInfo& source, bool has_gpu);

// "verified: 6.3x faster (5.9-6.8x), same results" / "verified: changes results (...)": the
// mark the advice of every output carries, "" for an unverified finding.
std::string verification_mark(const FixVerification& v);

}  // namespace attnprof
