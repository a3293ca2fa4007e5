// Head utilisation and sparsity: streaming attention statistics from Q/K(/V, W_O), head
// classification, pruning / streaming-KV / block-sparse candidates, and the sliding-window
// effectiveness verdicts. Formulas, thresholds and sources: docs/heads.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

// One attention call (one layer) in float32, contiguous row-major. Pointers are borrowed.
struct HeadInputs {
  int64_t layer = 0;
  const float* q = nullptr;    // [B, Hq, Sq, D]
  const float* k = nullptr;    // [B, Hkv, Skv, D]
  const float* v = nullptr;    // [B, Hkv, Skv, Dv], optional (output share)
  const float* w_o = nullptr;  // [hidden, Hq * Dv] (nn.Linear weight), optional
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, D = 0, Dv = 0, hidden = 0;
  bool causal = false;         // key j visible to query i iff j <= i + (Skv - Sq)
  double scale = 0;            // softmax scale; 0 = 1/sqrt(D)
  std::vector<int64_t> key_lengths;  // per batch: keys >= length are padding; empty = none
};

struct HeadOptions {
  int64_t block_size = 64;                // 64 (MInference tiles) or 128 (FlexAttention)
  int64_t sink_tokens = 4;                // StreamingLLM start_size
  int64_t trailing_special_tokens = 0;    // last valid keys counted as special ([SEP]: 1)
  std::vector<int64_t> windows = {16, 32, 64, 128, 256, 512, 1024};
  int64_t recall_window = 256;            // recent window of the sink+window recall
  int64_t model_window = 0;               // the model's sliding window (0 = none)
  int64_t max_query_blocks = 0;           // per (batch, head); 0 = analyse every query row
  uint64_t seed = 0x5eedULL;              // query-block sampling
  int threads = 0;                        // 0 = all hardware threads
  int64_t kv_bytes_per_element = 2;       // dtype of the KV cache the savings refer to
};

// Streams over key tiles with an exact two-sweep softmax per query block: memory is
// O(block_size * Skv + Skv * D) per thread, never Sq x Skv. Fills the raw statistics of
// every query head; `kind` is left empty (see summarize_heads).
Result<std::vector<HeadStats>> compute_head_stats(const HeadInputs& inputs,
                                                  const HeadOptions& options = {});

// Classifies heads, decides whether the weights look trained, lists candidates with their
// savings. `stats` may hold several layers. `D` and `Hq/Hkv` come from the inputs (for the
// KV bytes a head frees).
struct HeadModelShape {
  int64_t Hq = 0, Hkv = 0, D = 0, Dv = 0;
};
HeadsSection summarize_heads(std::vector<HeadStats> stats, const HeadModelShape& shape,
                             const HeadOptions& options = {});

// Kernel-level sliding-window effectiveness of the report's attention calls. `trace` (may
// be null) supplies evidence the Call lacks (the mask-building ops); `window_hint` is a
// window the user knows (0 = unknown). One entry per masked or windowed forward call.
std::vector<WindowEffectiveness> sliding_window_effectiveness(const Report& report,
                                                              const Trace* trace,
                                                              int64_t window_hint = 0);

// One finding (rule "heads.sliding_window") per distinct verdict that wastes work: the
// layers, the wasted share, and the gain if the masked work were skipped, 1 / (1 - wasted)
// of the QK/AV FLOPs (an upper bound for the call's time). Verdicts without waste give none.
std::vector<Finding> sliding_window_findings(const std::vector<WindowEffectiveness>& verdicts);

// Share of the Sq x Skv score matrix a causal(+window) mask removes; window 0 = causal only.
double masked_score_fraction(int64_t Sq, int64_t Skv, bool causal, int64_t window);

// Q/K(/V, W_O) tensors saved per layer in a safetensors file (naming: docs/heads.md).
struct LayerTensors {
  int64_t layer = 0;
  std::vector<float> q, k, v, w_o;
  HeadInputs inputs;  // points into the vectors above (stable once loaded)
};
struct SavedHeads {
  std::vector<LayerTensors> layers;
  int64_t model_window = 0;  // __metadata__ "sliding_window"
};
Result<SavedHeads> load_heads_safetensors(const std::string& path);
// The same from the file's bytes; `path` names the file in errors.
Result<SavedHeads> parse_heads_safetensors(std::string_view bytes, const std::string& path);

// Every layer computed and summarized; `path` names the file in errors.
Result<HeadsSection> analyze_saved_heads(const SavedHeads& saved, const std::string& path, HeadOptions options = {});
// The whole pipeline for a file: load, compute every layer, summarize.
Result<HeadsSection> analyze_heads_file(const std::string& path, HeadOptions options = {});

}  // namespace attnprof
