// What one attention call costs: the analytic model (FLOPs, minimum HBM traffic, memory of
// the materialised or fused path, KV cache) and what the trace measured (roofline against the
// GPU spec table, bytes allocated during the call from [memory] events). Every formula is
// written out, with its source, in docs/cost.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

// FLOPs of a call: attention_flops(const Call&) in attention.h (one formula, owned by
// extraction); predict and whatif build a Call to use it.

// Minimum HBM traffic of a fused forward: read Q, K, V once and write O once:
// (B*Hq*Sq*D + B*Hkv*Skv*(D+Dv) + B*Hq*Sq*Dv) * bytes. A materialised (eager/math) call adds
// the score matrix traffic 4*B*Hq*Sq*Skv*bytes (store QK^T, load+store softmax, load for PV).
double attention_min_bytes(const Shape& shape, bool materialised);

// Minimum HBM traffic of one call in its direction (docs/cost.md, "Bytes per direction"):
// forward: read Q, K, V, write O; fused backward: read Q, K, V, O, dO and the fp32 LSE, write
// dQ, dK, dV; unfused backward: read Q, K, V, dO, write dQ, dK, dV. K, V, dK, dV at Hkv.
// Materialising paths add matrix passes over the executed (q, k) pairs: forward 2 reads and
// 2 writes (store QK^T, softmax in and out, read P), backward 4 reads and 2 writes (read P,
// write dP, softmax backward reads P and dP and writes dS, dQ/dK read dS). Packed calls count
// their total query tokens; key tokens from per-sequence lengths, else B x the longest (a
// ceiling: upper_bound).
struct AttentionTraffic {
  double read = 0, written = 0;
  bool upper_bound = false;
  double total() const { return read + written; }
};
AttentionTraffic attention_traffic(const Call& call);

// Transient memory of one call beyond its inputs.
struct AttentionMemory {
  int64_t scores_bytes = 0;     // materialised: B*Hq*Sq*Skv*b (scores in the input dtype)
  int64_t softmax_bytes = 0;    // materialised: B*Hq*Sq*Skv*8 (fp32 upcast + fp32 softmax output)
  int64_t mask_bytes = 0;       // materialised with a mask: B*Sq*Skv*b (4-D mask, 1 head)
  int64_t repeat_kv_bytes = 0;  // materialised with Hkv < Hq: B*Hq*Skv*(D+Dv)*b (K,V expanded)
  int64_t lse_bytes = 0;        // fused: logsumexp B*Hq*Sq*4
  int64_t output_bytes = 0;     // B*Hq*Sq*Dv*b
  int64_t transient() const {
    return scores_bytes + softmax_bytes + mask_bytes + repeat_kv_bytes + lse_bytes + output_bytes;
  }
};
AttentionMemory attention_memory(const Shape& shape, bool materialised, bool masked);

// KV cache bytes one token adds to one layer: 2 (K and V) * Hkv * D * bytes.
int64_t kv_cache_bytes_per_token(int64_t kv_heads, int64_t head_dim, int dtype_bytes);


// Memory of the profiled pass, from the [memory] events of the device that allocated most
// (CUDA/ROCm when present, else CPU). All -1 when the trace has no memory events.
struct PassMemory {
  int64_t baseline_bytes = -1;        // Total Allocated before the first event (weights, inputs)
  int64_t peak_allocated_bytes = -1;  // max Total Allocated
  int64_t peak_activation_bytes = -1; // peak_allocated - baseline
  int64_t peak_reserved_bytes = -1;   // Total Reserved at the peak
  bool known() const { return peak_allocated_bytes >= 0; }
};
PassMemory pass_memory(const Trace& trace);

// Roofline and memory of a run's attention: the cost of each call (against the spec of
// source.device_name; memory during the call from `trace`'s [memory] events) and of each
// layer, parallel to `calls` and `layers`; a finding for layers whose peak is out of
// proportion and one per backend stating the fraction of peak reached. `has_gpu` false
// (a CPU-only trace) prices the calls against the CPU row of the spec table.
struct CostSection {
  std::vector<CallCost> calls;
  std::vector<LayerCost> layers;
  std::vector<ShapeGroup> shape_groups;
  std::vector<Finding> findings;
};

// The spread of each shape group's calls; `costs` are the calls' CallCosts, index for index.
std::vector<ShapeGroup> shape_groups(const std::vector<Call>& calls, const std::vector<CallCost>& costs);

// Fused attention calls whose device time is >= 5% other work than their attention kernel
// (mask conversion, fills, copies, casts): one finding per fix (the mask the calls pass
// decides it), naming that work; none when no call crosses the share.
std::vector<Finding> non_kernel_time_findings(const std::vector<Call>& calls);
inline constexpr double kNonKernelShare = 0.05;
CostSection analyze_cost(const std::vector<Call>& calls, const std::vector<Layer>& layers, const SourceInfo& source,
                         bool has_gpu, const Trace& trace);

}  // namespace attnprof
