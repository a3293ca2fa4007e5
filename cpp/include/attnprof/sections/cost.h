// What attention costs: roofline, memory, scaling with S. Filled by cpp/src/analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnprof {

struct CallCost {
  double peak_tflops = 0;          // GPU peak for the call's dtype (spec table, or --gpu-spec)
  double peak_fraction = 0;        // achieved useful TFLOP/s / peak
  // Analytic minimum HBM traffic of the call's direction (docs/cost.md): forward reads Q, K, V
  // and writes O; backward reads Q, K, V, O, dO, LSE and writes dQ, dK, dV; K and V at Hkv;
  // a materialising path adds its score-matrix passes.
  double bytes_moved = 0;          // bytes_read + bytes_written
  double bytes_read = 0, bytes_written = 0;
  bool bytes_upper_bound = false;  // key tokens known only as B x the longest sequence
  double bandwidth_gbs = 0;        // achieved: bytes_moved / device time
  // Roofline bound (docs/cost.md, "Bound verdict"): executed FLOPs per byte against the ridge
  // point peak / bandwidth; attainable = min(peak, intensity x bandwidth).
  double arithmetic_intensity = 0;  // flops_executed / bytes_moved, FLOP/byte
  double ridge_point = 0;           // FLOP/byte where the GPU turns compute-bound
  std::string bound;                // "compute", "memory", "unknown"
  double attainable_tflops = 0;
  double attainable_share = 0;      // achieved executed TFLOP/s / attainable
  int64_t peak_bytes_during = -1;  // max Total Allocated during the call minus the value at its
                                   // start (the call's transient peak); -1 when no memory events
  int64_t allocated_bytes = -1;    // bytes allocated during the call (net of frees)
  int64_t analytic_bytes = 0;      // model: scores+softmax (eager) or O(S) logsumexp (fused)
};

// Count, mean, median, min, max and population standard deviation of one quantity over the
// calls of a shape group (the calls where it is known).
struct Spread {
  int64_t count = 0;
  double mean = 0, median = 0, min = 0, max = 0, std = 0;
};

// One of the slowest calls of a group, with where it ran.
struct SlowCall {
  int64_t call = -1, step = -1, layer = -1;
  double device_time_us = 0;
};

// The calls that ran the same attention the same way: backend, library, shape, mask ("causal",
// "sliding_window", a captured pattern, "" none), direction and phase (summary.shape_groups,
// docs/cost.md "Spread per shape group").
struct ShapeGroup {
  std::string backend, library, shape, mask, direction, phase;
  int64_t count = 0;
  double total_time_us = 0;
  Spread device_time_us;
  Spread tflops;          // useful TFLOP/s
  bool tflops_upper_bound = false;  // some call's FLOPs are a ceiling (flops_upper_bound)
  Spread bandwidth_gbs;   // minimum HBM traffic over device time
  std::vector<SlowCall> slowest;  // up to 3, slowest first
};

struct LayerCost {
  double achieved_tflops = 0;
  double peak_fraction = 0;
  int64_t peak_bytes = -1;
  int64_t bytes_per_q_head = -1;
  int64_t bytes_per_kv_head = -1;
  bool disproportionate = false;  // takes a much larger share than its siblings
};

struct FitTerm {  // y = c0 + c1*S + c2*S^2
  double c0 = 0, c1 = 0, c2 = 0;
  double rel_rms_error = 0;           // fit residuals / mean(y)
  std::vector<double> residuals;
  std::string growth;                 // "constant", "linear", "quadratic"
  int64_t quadratic_dominates_from = -1;  // S from which c2*S^2 > c1*S + c0, -1 never
};

// The allocation that raises OutOfMemoryError first in the simulated pass just past the
// threshold, and the allocator's state then (after it released what it could).
struct FailingAllocation {
  std::string op;                 // innermost CPU op of the allocation
  int64_t layer = -1;             // attention layer whose call came last before it
  int64_t bytes = 0;              // requested bytes
  int64_t length = 0;             // the S of that pass
  int64_t reserved_bytes = 0;     // reserved (segments) when it failed
  int64_t allocated_bytes = 0;    // allocated (live blocks) when it failed
};

// A trace's allocation sequence replayed through the allocator model against the Total
// Reserved the trace recorded after each event.
struct AllocatorReplay {
  std::string file;
  int64_t events = 0;
  double within_2mib_share = 0;           // events whose simulated reserved is within 2 MiB
  int64_t largest_difference_bytes = 0;   // max |simulated - recorded| over events
  int64_t recorded_peak_reserved_bytes = -1;
  int64_t simulated_peak_reserved_bytes = -1;
  std::string cannot_know;                // what a recording that began mid-run hides
};

struct ScalingSeries {
  std::string backend;
  std::vector<int64_t> lengths;
  std::vector<double> time_us;            // attention alone
  std::vector<double> forward_pass_time_us;  // the whole pass (projections, MLP, logits too): predict only
  std::vector<int64_t> peak_bytes;
  FitTerm time_fit;
  FitTerm memory_fit;
  // Largest S whose simulated pass fits the budget (caching allocator model on the
  // allocation sequence fitted across the measured lengths); -1 when unknown.
  int64_t oom_threshold_tokens = -1;
  double oom_error_band = 0;           // relative error of the simulated reserved memory
  int64_t oom_threshold_low_tokens = -1;   // threshold with reserved memory + error band
  int64_t oom_threshold_high_tokens = -1;  // threshold with reserved memory - error band
  std::optional<FailingAllocation> failing_allocation;
  double fragmentation = -1;           // 1 - allocated / reserved when it failed; -1 unknown
  double exact_size_share = 0;         // allocation sizes the polynomial fit reproduces exactly
  // Leave-longest-out check: peak Total Reserved of the longest trace predicted from the others.
  int64_t holdout_length = 0;
  int64_t holdout_predicted_reserved_bytes = -1;
  int64_t holdout_recorded_reserved_bytes = -1;
  // "caching-allocator simulation", or "allocated-bytes fit" for CPU runs (their allocator
  // returns freed memory, so allocated bytes are what counts); "" without a threshold.
  std::string oom_method;
  std::string oom_note;                // why there is no simulated threshold, when there is none
  // Live check (attnprof.sweep on CUDA under set_per_process_memory_fraction): the largest S
  // that ran; -1 when not measured, with the reason in measured_oom_note.
  int64_t measured_oom_tokens = -1;
  std::string measured_oom_note;
  std::vector<std::string> files;     // one trace per length, in length order
};

struct ScalingSection {
  int64_t memory_budget_bytes = 0;
  std::string budget_source;          // "deviceProperties", "--gpu A100-80GB", "--memory-cap"
  int64_t allocator_limit_bytes = 0;  // budget less what PyTorch does not allocate
  std::string non_pytorch_memory;     // what was subtracted and why
  int64_t baseline_bytes = 0;         // allocated before the pass (weights)
  std::string allocator_config;       // PYTORCH_CUDA_ALLOC_CONF simulated ("" = defaults)
  std::vector<AllocatorReplay> replays;  // one per trace with device memory events
  std::vector<ScalingSeries> series;
};

struct AdviceRow {
  std::string shape;                  // "B=4 H=32 S=2048 D=128 bf16"
  std::string fastest_backend;
  std::string heuristic_backend;      // what PyTorch picked by itself
  double gain = 0;                    // heuristic time / fastest time
  std::string code;                   // "with sdpa_kernel(SDPBackend.X): ..."
  std::vector<std::pair<std::string, double>> times_us;  // backend -> time
};

struct AdviceSection {
  std::vector<AdviceRow> rows;
};

}  // namespace attnprof

namespace attnprof {

// `attnprof whatif`: a request-length distribution under full vs sliding-window attention.
// Requests whose length falls in [from, to], a power-of-two bucket (from = 2^k, to = 2^(k+1) - 1).
struct LengthBucket {
  int64_t from = 0, to = 0;
  double requests = 0;
  bool within_window = false;  // to <= window: the window changes nothing for these requests
};

struct WhatIfSection {
  std::string model;
  int64_t window = 0;
  int64_t global_tokens = 0;
  double requests = 0;            // sum of counts
  double mean_tokens = 0;
  double covered_share = 0;       // share of requests with length <= window (window = full)
  double full_flops = 0;          // attention FLOPs over the distribution, all layers
  double window_flops = 0;
  double flops_saving = 0;        // 1 - window / full
  double full_kv_bytes = 0;       // KV cache bytes summed over requests
  double window_kv_bytes = 0;
  double memory_saving = 0;
  double max_full_kv_bytes = 0;   // the longest request's KV cache, full vs window
  double max_window_kv_bytes = 0;
  std::vector<LengthBucket> length_buckets;  // the distribution, in power-of-two buckets
};

}  // namespace attnprof
