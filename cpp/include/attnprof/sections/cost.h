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
  int64_t peak_bytes_during = -1;  // max Total Allocated during the call, -1 when unknown
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
  std::vector<double> time_us;
  std::vector<int64_t> peak_bytes;
  FitTerm time_fit;
  FitTerm memory_fit;
  int64_t oom_threshold_tokens = -1;  // largest S predicted to fit the budget
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
