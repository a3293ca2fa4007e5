// How attention cost grows with sequence length (issue 5 items 3, 4, 6): least-squares fits
// of time(S) and memory(S) = c0 + c1*S + c2*S^2, growth class, OOM threshold for a memory
// budget, and backend advice from forced-backend runs. Used by `attnprof scale`, by
// `attnprof predict` (fits of analytic curves) and by Python `attnprof.sweep` (bindings).
// Formulas and thresholds: docs/cost.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/cost.h"
#include "attnprof/error.h"
#include "attnprof/memory_sim.h"
#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

// Non-negative least squares of y = c0 + c1*S + c2*S^2 (coefficients >= 0, so an
// extrapolation never bends down), with residuals, relative RMS error, growth class and the
// S from which c2*S^2 exceeds c1*S + c0. Needs lengths.size() == values.size() >= 1.
FitTerm fit_growth(std::span<const double> lengths, std::span<const double> values);

double evaluate_fit(const FitTerm& fit, double length);

// Largest integer S with baseline + fit(S) <= budget. 0 when even S = 1 does not fit, -1 when
// the fit does not grow (no threshold).
int64_t largest_length_within(const FitTerm& fit, double baseline_bytes, double budget_bytes);

// "24GiB", "24 GB", "1.5TiB", "8000000000" -> bytes. GB = 1e9, GiB = 2^30.
Result<int64_t> parse_byte_size(std::string_view text);

struct MemoryBudget {
  int64_t bytes = 0;   // 0 = no budget known
  std::string source;  // "--memory-cap 24GiB", "--gpu A100-80GB", "deviceProperties (NVIDIA H200)"
  // True for --memory-cap: a cap on the caching allocator itself (set_per_process_memory_fraction),
  // so memory PyTorch does not allocate does not count against it.
  bool caps_allocator = false;
};

// What of a device's memory the caching allocator can reserve: the budget less the CUDA
// context (a cap on the allocator keeps all of it). docs/cost.md, "OOM threshold".
struct AllocatorLimit {
  int64_t bytes = 0;
  std::string explanation;
};
AllocatorLimit allocator_limit(const MemoryBudget& budget);
// Picks the budget: an explicit cap, else a named GPU's datasheet memory, else the traced
// device's memory. Errors: unparsable cap, unknown GPU name.
Result<MemoryBudget> choose_memory_budget(const std::string& memory_cap, const std::string& gpu,
                                          const SourceInfo& traced_device);

// One profiled pass of the sweep: what scale and advice need from an analysed trace.
struct ScalingRun {
  std::string file;
  std::string backend;       // backend with most forward attention time
  bool forced = false;       // run under sdpa_kernel forcing (file name "*_force_*" or capture info)
  int64_t length = 0;        // Sq of the forward attention calls (largest)
  std::string shape;         // "B=4 Hq=32 Hkv=32 S=2048 D=128 bf16" (+ " mask=bool") of the first forward call
  double attention_time_us = 0;
  PassMemory memory;
  std::optional<AllocationSequence> allocations;  // device [memory] events, when present
  std::string allocations_note;                   // why there are none
};
// Errors: kUnsupported when the report has no attention call.
Result<ScalingRun> scaling_run(const Report& report, const Trace& trace);

// Groups runs by backend, fits time and memory per backend (backends measured at fewer than
// two lengths are left out), replays each run's allocations, and finds the OOM threshold for
// the budget by simulating the caching allocator (`config`) on the fitted sequence.
ScalingSection build_scaling(const std::vector<ScalingRun>& runs, const MemoryBudget& budget,
                             const AllocatorConfig& config = {});

// Per shape run with more than one backend: fastest vs PyTorch's own pick and the code to pin
// the fastest when the gain is beyond the noise.
AdviceSection build_advice(const std::vector<ScalingRun>& runs);

// The `with sdpa_kernel(...)` line (or attn_implementation switch) that selects `backend`.
std::string pin_backend_code(std::string_view backend);

}  // namespace attnprof
