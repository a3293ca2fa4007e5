// What attention costs: roofline, memory, scaling with S. Filled by cpp/src/analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof {

struct CallCost {
  double peak_tflops = 0;          // GPU peak for the call's dtype (hw spec table)
  double peak_fraction = 0;        // achieved / peak
  double bytes_moved = 0;          // analytic minimum HBM traffic
  double bandwidth_gbs = 0;        // achieved
  int64_t peak_bytes_during = -1;  // max Total Allocated during the call minus the value at its
                                   // start (the call's transient peak); -1 when no memory events
  int64_t allocated_bytes = -1;    // bytes allocated during the call (net of frees)
  int64_t analytic_bytes = 0;      // model: scores+softmax (eager) or O(S) logsumexp (fused)
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

struct ScalingSeries {
  std::string backend;
  std::vector<int64_t> lengths;
  std::vector<double> time_us;            // attention alone
  std::vector<double> forward_pass_time_us;  // the whole pass (projections, MLP, logits too): predict only
  std::vector<int64_t> peak_bytes;
  FitTerm time_fit;
  FitTerm memory_fit;
  int64_t oom_threshold_tokens = -1;  // largest S predicted to fit the budget (allocated bytes)
  // Same, if the caching allocator keeps reserving allocator_overhead x what is allocated
  // (the pessimistic bound; PyTorch frees cached blocks and retries before raising OOM).
  int64_t oom_threshold_tokens_reserved = -1;
  std::vector<std::string> files;     // one trace per length, in length order
};

struct ScalingSection {
  int64_t memory_budget_bytes = 0;
  std::string budget_source;          // "deviceProperties", "--gpu A100-80GB", "--memory-cap"
  int64_t baseline_bytes = 0;         // allocated before the pass (weights)
  double allocator_overhead = 1.0;    // reserved / allocated as seen in the trace
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
};

}  // namespace attnprof
