// Fleet Reports built by hand for the renderer and comparison tests: the ranks section as
// cpp/src/fleet fills it, with the numbers written out so each test can name what it expects.
#pragma once

#include <string>
#include <vector>

#include "attnprof/report.h"

namespace attnprof::testing {

inline constexpr const char* kFlashRejectedMask =
    "flash rejected: flash attention does not support an attn_mask tensor (bool [4, 1, 2048, 2048]) [flash.attn_mask]";

// One rank whose `layers` layers each ran `layer_us` of flash on the same shape, unmasked, bf16.
inline RankSummary flash_rank(int64_t rank, size_t layers, double layer_us) {
  RankSummary r;
  r.rank = rank;
  r.file = "/runs/job/rank" + std::to_string(rank) + ".pt.trace.json.gz";
  r.trace_rank = rank;
  r.world_size = 9;
  r.device = "NVIDIA H100 80GB HBM3";
  r.fused_time_fraction = 1.0;
  r.call_count = static_cast<int64_t>(layers);
  for (size_t i = 0; i < layers; ++i) {
    RankLayer l;
    l.index = static_cast<int64_t>(i);
    l.time_us = layer_us;
    l.backend = backend::kFlash;
    l.kernel = "pytorch_flash::flash_fwd_kernel";
    l.shape = "B4 H32/8 S2048x2048 D128";
    l.mask = "none";
    l.dtype = "bf16";
    l.phase = "prefill";
    r.layers.push_back(l);
    r.layer_time_us.push_back(layer_us);
    r.attention_device_time_us += layer_us;
  }
  r.backend_time_us = {{backend::kFlash, r.attention_device_time_us}};
  return r;
}

// Sets one layer of a rank to another backend and time, keeping the totals consistent.
inline void run_layer_as(RankSummary& r, int64_t layer, const std::string& backend_name, double us) {
  RankLayer& l = r.layers[static_cast<size_t>(layer)];
  r.attention_device_time_us += us - l.time_us;
  l.time_us = us;
  r.layer_time_us[static_cast<size_t>(layer)] = us;
  l.backend = backend_name;
  r.backend_time_us = {{backend::kFlash, r.attention_device_time_us - us}, {backend_name, us}};
  r.fused_time_fraction = (r.attention_device_time_us - us) / r.attention_device_time_us;
}

// Eight ranks of four 250 us flash layers (one more rank failed). Rank 5 ran layer 3 on math
// with a padding mask (650 us: 1.40x the median in total, 2.60x in layer 3); ranks 6 and 7 ran
// every layer at twice the sequence length in the same time.
inline RanksSection eight_rank_section() {
  RanksSection k;
  for (int64_t rank = 0; rank < 8; ++rank) k.ranks.push_back(flash_rank(rank, 4, 250));
  RankSummary& five = k.ranks[5];
  run_layer_as(five, 3, backend::kMath, 650);
  five.layers[3].kernel = "at::native::softmax_kernel";
  five.layers[3].mask = "bool padding";
  five.layers[3].rejections = {{backend::kFlash, "flash.attn_mask",
                                "flash attention does not support an attn_mask tensor (bool [4, 1, 2048, 2048])"}};
  for (int64_t rank : {6, 7})
    for (RankLayer& l : k.ranks[rank].layers) l.shape = "B4 H32/8 S4096x4096 D128";
  for (RankSummary& r : k.ranks) {
    r.groups = {{"0", "default_pg", 9}};
    if (r.rank >= 4) r.groups.push_back({"1", "tp", 4});
  }
  RankSummary failed;
  failed.rank = 8;
  failed.file = "/runs/job/rank8.pt.trace.json.gz";
  failed.error = "truncated gzip stream: the file ends inside a deflate block";
  k.failed.push_back(failed);

  k.slowest_rank = 5;
  k.slowest_over_median = 1.4;
  k.median_attention_us = 1000;
  k.layer_median_us = {250, 250, 250, 250};  // seven ranks at 250 us in every layer
  k.straggler_threshold = 1.05;
  k.stragglers = {{5, -1, 1400, 1000, 1.4, 3}, {5, 3, 650, 250, 2.6, -1}};
  // The causes as the fleet spells them: the rule that rejected the majority's backend, then
  // every other facet that differs (not the kernel: another backend runs another kernel).
  const std::string rejected = kFlashRejectedMask;
  const std::string mask = "its mask is bool padding where most ranks have none";
  const std::string wide = "B4 H32/8 S4096x4096 D128", usual = "B4 H32/8 S2048x2048 D128";
  for (int64_t layer = 0; layer < 4; ++layer) {
    if (layer == 3) k.disagreements.push_back({3, "backend", backend::kFlash, 7, 5, backend::kMath, rejected + "; " + mask});
    for (int64_t rank : {6, 7}) k.disagreements.push_back({layer, "shape", usual, 6, rank, wide, ""});
    if (layer == 3) k.disagreements.push_back({3, "mask", "none", 7, 5, "bool padding", rejected});
  }
  k.groups = {{"0", "default_pg", {0, 1, 2, 3, 4, 5, 6, 7}, 5, 1.4}, {"1", "tp", {4, 5, 6, 7}, 5, 1.4}};
  return k;
}

// The body of a fleet Report (the slowest rank's analysis: one flash call) with `ranks`.
inline Report fleet_report(RanksSection ranks) {
  Report r;
  Call c;
  c.id = 0;
  c.layer = 0;
  c.backend = backend::kFlash;
  c.fused = true;
  c.direction = "forward";
  c.device_time_us = 250;
  c.shape = Shape{4, 32, 8, 2048, 2048, 128, 128, "bf16"};
  r.calls.push_back(c);
  Layer l;
  l.index = 0;
  l.backends = {backend::kFlash};
  l.call_ids = {0};
  l.fused_time_fraction = 1;
  l.device_time_us = 250;
  r.layers.push_back(l);
  r.summary.call_count = 1;
  r.summary.fused_call_count = 1;
  r.summary.attention_device_time_us = 250;
  r.summary.fused_time_fraction = 1;
  r.summary.has_gpu = true;
  for (const RankSummary& rank : ranks.ranks) r.source.files.push_back(rank.file);
  r.ranks = std::move(ranks);
  return r;
}

}  // namespace attnprof::testing
