// Head kinds, the "untrained weights" check and the candidate list (docs/heads.md section 3).
// Every threshold below is named once here and documented with its source in docs/heads.md.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>

#include "attnprof/heads.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// Dormant: mostly on sink/special tokens (Clark 2019 no-op [SEP]; Guo 2024 dormant heads)
// and, when V/W_O are known, a small share of the layer's output (Sandoval-Segura 2025).
constexpr double kDormantSpecialMass = 0.9;
constexpr double kDormantRelativeShare = 0.5;  // output share x Hq below this
// Local / streaming: the window or sink+window holds the mass (MInference A-shape,
// DuoAttention streaming heads) and the window is a small part of the context.
constexpr double kLocalWindowMass = 0.9;
constexpr double kStreamingRecall = 0.95;
constexpr double kWindowContextShare = 0.25;  // window <= this x mean visible keys
// Global / retrieval: confident heads (Voita 2019: >80% of mass on one token is "confident").
constexpr double kGlobalMaxWeight = 0.5;
// Block-sparse: 95% of the mass in at most this share of the visible blocks.
constexpr double kBlockSparseCoverage95 = 0.3;
// Untrained: every head near-uniform and no sink structure (trained models show both
// low-entropy heads and attention sinks: Clark 2019, Xiao 2024).
constexpr double kUntrainedMinEntropy = 0.9;
constexpr double kUntrainedSinkExcess = 2.0;   // sink mass / uniform sink share

// Mass a uniform head would put on the sink tokens.
double uniform_sink_share(const HeadStats& h, int64_t sink_tokens) {
  if (h.mean_keys <= 0) return 1;
  return std::min(1.0, static_cast<double>(sink_tokens) / h.mean_keys);
}

// Smallest window of the set that is a small part of the context and holds the mass.
std::optional<int64_t> local_window(const HeadStats& h) {
  for (const auto& [w, mass] : h.window_mass)
    if (static_cast<double>(w) <= kWindowContextShare * h.mean_keys && mass >= kLocalWindowMass) return w;
  return std::nullopt;
}

std::string classify(const HeadStats& h, const HeadOptions& opt, int64_t Hq) {
  const bool small_share = h.output_share < 0 || h.output_share * static_cast<double>(Hq) < kDormantRelativeShare;
  if (h.special_mass >= kDormantSpecialMass && small_share) return "dormant";
  if (local_window(h)) return "local";
  const bool recall_window_small =
      static_cast<double>(opt.sink_tokens + opt.recall_window) <= kWindowContextShare * h.mean_keys;
  if (recall_window_small && h.sink_window_recall >= kStreamingRecall) return "streaming";
  if (h.max_weight >= kGlobalMaxWeight) return "global";
  if (h.block_coverage_95 > 0 && h.block_coverage_95 <= kBlockSparseCoverage95) return "block_sparse";
  return "dense";
}

// Why the weights look untrained, or "" when they do not.
std::string untrained_reason(const std::vector<HeadStats>& heads, int64_t sink_tokens) {
  if (heads.empty()) return "";
  double min_entropy = 1, max_excess = 0;
  for (const auto& h : heads) {
    if (h.mean_keys <= 1) continue;
    min_entropy = std::min(min_entropy, h.entropy);
    max_excess = std::max(max_excess, h.sink_mass / uniform_sink_share(h, sink_tokens));
  }
  if (min_entropy >= kUntrainedMinEntropy && max_excess < kUntrainedSinkExcess)
    return fmt::format(
        "every head is near-uniform (lowest normalised entropy {:.3f} >= {}) and no head has a "
        "sink (largest sink mass {} the uniform share < {}): statistics of untrained "
        "weights are not utilisation findings",
        min_entropy, kUntrainedMinEntropy, ratio_text(max_excess), ratio_text(kUntrainedSinkExcess));
  return "";
}

// How many heads of each (layer, KV head) qualify.
template <typename Qualifies>
std::map<std::pair<int64_t, int64_t>, int64_t> count_in_group(const std::vector<HeadStats>& stats, Qualifies qualifies) {
  std::map<std::pair<int64_t, int64_t>, int64_t> n;
  for (const auto& h : stats)
    if (qualifies(h)) ++n[{h.layer, h.kv_head}];
  return n;
}

// The heads worth acting on (prune, streaming KV, block-sparse), with the KV bytes each frees.
// KV bytes are freed only when every query head sharing a KV head (GQA group) qualifies.
std::vector<HeadCandidate> head_candidates(const std::vector<HeadStats>& stats, const HeadModelShape& shape,
                                           const HeadOptions& opt) {
  const int64_t group = shape.Hkv > 0 ? std::max<int64_t>(1, shape.Hq / shape.Hkv) : 1;
  const int64_t kv_head_bytes = (shape.D + (shape.Dv > 0 ? shape.Dv : shape.D)) * opt.kv_bytes_per_element;
  auto dormant_in_group = count_in_group(stats, [](const HeadStats& h) { return h.kind == "dormant"; });
  auto windowed_in_group = count_in_group(
      stats, [](const HeadStats& h) { return h.kind == "dormant" || h.kind == "local" || h.kind == "streaming"; });
  std::vector<HeadCandidate> candidates;
  for (const auto& h : stats) {
    const bool whole_group = dormant_in_group[{h.layer, h.kv_head}] == group;
    const bool group_windowed = windowed_in_group[{h.layer, h.kv_head}] == group;
    if (h.kind == "dormant") {
      candidates.push_back(
          {h.layer, h.head, "prune",
           fmt::format("{} of its attention on sink/special tokens{}", percent_text(h.special_mass),
                       h.output_share >= 0 ? fmt::format(", {} of the layer's output norm", percent_text(h.output_share)) : ""),
           whole_group ? kv_head_bytes / group : 0, 0});
    } else if (h.kind == "local" || h.kind == "streaming") {
      candidates.push_back(
          {h.layer, h.head, "streaming_kv",
           fmt::format("{} of its mass within {} sink + {} recent tokens", percent_text(h.sink_window_recall),
                       opt.sink_tokens, opt.recall_window),
           group_windowed ? kv_head_bytes / group : 0, 0});
    } else if (h.kind == "block_sparse") {
      candidates.push_back(
          {h.layer, h.head, "block_sparse",
           fmt::format("95% of its mass in {} of the {}x{} blocks", percent_text(h.block_coverage_95),
                       opt.block_size, opt.block_size),
           0, 1.0 / h.block_coverage_95});
    }
  }
  return candidates;
}

}  // namespace

HeadsSection summarize_heads(std::vector<HeadStats> stats, const HeadModelShape& shape,
                             const HeadOptions& opt) {
  HeadsSection sec;
  sec.block_size = opt.block_size;
  sec.sink_tokens = opt.sink_tokens;
  sec.recall_window = opt.recall_window;
  sec.model_window = opt.model_window;
  sec.untrained_reason = untrained_reason(stats, opt.sink_tokens);
  sec.weights_look_trained = sec.untrained_reason.empty();
  const int64_t Hq = std::max<int64_t>(shape.Hq, 1);

  double max_stderr = 0;
  for (auto& h : stats) {
    max_stderr = std::max(max_stderr, h.sampling_stderr);
    h.kind = sec.weights_look_trained ? classify(h, opt, Hq) : "";
  }
  if (max_stderr > 0)
    sec.sampling_note = fmt::format(
        "query blocks sampled ({} per batch row and head, stratified); largest standard error of "
        "a per-head mean (entropy, sink mass, max weight): {:.4f}",
        opt.max_query_blocks, max_stderr);

  if (!sec.weights_look_trained) {
    sec.notes.push_back("weights look untrained: " + sec.untrained_reason +
                        "; head kinds and candidates are withheld");
    sec.heads = std::move(stats);
    return sec;
  }

  sec.candidates = head_candidates(stats, shape, opt);
  sec.heads = std::move(stats);
  return sec;
}

}  // namespace attnprof
