// Head utilisation and sparsity statistics. Filled by cpp/src/heads; formulas, thresholds
// and their sources are in docs/heads.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnprof {

struct HeadStats {
  int64_t layer = 0;
  int64_t head = 0;             // query head
  int64_t kv_head = 0;          // K/V head it reads (GQA: head / (Hq / Hkv))
  int64_t query_rows = 0;       // query rows analysed (over the batch, after sampling)
  double mean_keys = 0;         // mean number of keys a query row sees
  double entropy = 0;           // mean_i H_i / log(n_i), rows with n_i > 1
  double max_weight = 0;        // mean over queries of max_j alpha_ij
  double sink_mass = 0;         // mass on the first sink_tokens keys
  double special_mass = 0;      // sink mass + mass on the trailing special keys ([SEP])
  double output_share = -1;     // mean_i ||alpha V W_O^h|| / sum over the layer's heads; -1 unknown
  std::vector<std::pair<int64_t, double>> window_mass;  // w -> mass with |i - j| < w
  double window_dropped_mass = -1;  // 1 - window mass at the model's sliding window; -1 none
  double block_coverage_90 = 0; // blocks needed for 90% of the mass / visible blocks
  double block_coverage_95 = 0;
  double sink_window_recall = 0;  // mass inside sink_tokens + recall_window (StreamingLLM)
  double sampling_stderr = 0;   // largest standard error of the sampled means (0 when exact)
  std::string kind;             // "local", "streaming", "global", "block_sparse", "dense",
                                // "dormant"; "" when the weights look untrained
};

// A head worth acting on: prune it, give it a streaming KV cache, or run it block-sparse.
struct HeadCandidate {
  int64_t layer = 0;
  int64_t head = 0;
  std::string action;                // "prune", "streaming_kv", "block_sparse"
  std::string reason;                // the numbers that triggered it
  int64_t kv_bytes_per_token = 0;    // KV cache bytes per context token this frees (per layer)
  double expected_speedup = 0;       // attention speed-up of this head (block_sparse), else 0
};

// Kernel-level sliding-window verdict for one attention call (trace or capture).
struct WindowEffectiveness {
  int64_t call_id = -1;
  int64_t layer = -1;
  std::string backend;
  std::string mask;                  // "materialised", "block_mask", "window_size", "causal_flag", "none"
  std::string mask_kind;             // "causal", "padding", "sliding_window", "block", "bias", "arbitrary",
                                     // "unknown" (docs/heads.md: from the captured rows or the trace's ops)
  bool skips_masked_work = false;    // kernel skips masked blocks (FlexAttention BlockMask, FA2 window)
  int64_t window = 0;                // sliding window in tokens, 0 when unknown
  std::string window_source;         // "given", "capture", "unknown"
  double masked_fraction = -1;       // share of Sq x Skv the mask removes; -1 when unknown
  double masked_fraction_min = -1;   // lower bound proven by the trace (the causal part)
  double wasted_flops_share = 0;     // share of the kernel's QK/AV FLOPs spent on masked scores
  std::string verdict;
  std::vector<std::string> assumptions;
};

struct HeadsSection {
  int64_t block_size = 64;
  int64_t sink_tokens = 4;
  int64_t recall_window = 256;
  int64_t model_window = 0;     // the model's sliding window (0 = none given)
  bool weights_look_trained = true;
  std::string untrained_reason;  // why the weights look untrained, "" otherwise
  std::string sampling_note;    // query-row sampling and its error, "" when exact
  std::vector<HeadStats> heads;
  std::vector<HeadCandidate> candidates;
  std::vector<WindowEffectiveness> sliding_window;
  std::vector<std::string> notes;
};

}  // namespace attnprof
