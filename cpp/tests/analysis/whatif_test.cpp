#include <gtest/gtest.h>

#include "attnprof/predict.h"

namespace attnprof {
namespace {

// A toy model so the arithmetic is readable: 1 layer, 1 head, D = 1, fp16.
ModelConfig toy() {
  ModelConfig m;
  m.name = "toy";
  m.hidden = m.heads = m.kv_heads = m.head_dim = m.layers = 1;
  return m;
}

TEST(VisibleKeys, FullCausalWindowAndGlobalTokens) {
  EXPECT_DOUBLE_EQ(visible_key_sum(8, 0, 0), 36);  // 1+2+...+8
  EXPECT_DOUBLE_EQ(visible_key_sum(8, 4, 0), 26);  // 1+2+3+4 + 4*4
  EXPECT_DOUBLE_EQ(visible_key_sum(8, 4, 1), 30);  // + 1 global token for queries 5..8
  EXPECT_DOUBLE_EQ(visible_key_sum(8, 4, 9), 36);  // window + globals cover everything
  EXPECT_DOUBLE_EQ(visible_key_sum(3, 4, 0), 6);   // shorter than the window: full attention
}

TEST(WhatIf, HandMadeDistributionGivesTheHandComputedSaving) {
  // Requests of 2, 4 and 8 tokens, window 4. Visible pairs: full 3 + 10 + 36 = 49,
  // window 3 + 10 + 26 = 39. FLOPs per pair = 2 * layers * heads * 2D = 4.
  // KV per token = layers * 2 * Hkv * D * 2 B = 4 B: full 4*(2+4+8) = 56, window 4*(2+4+4) = 40.
  const auto bins = parse_length_distribution("tokens\n2\n4\n8\n");
  ASSERT_TRUE(bins.ok());
  const WhatIfSection w = what_if(toy(), *bins, 4, 0, "fp16");
  EXPECT_DOUBLE_EQ(w.requests, 3);
  EXPECT_DOUBLE_EQ(w.full_flops, 196);
  EXPECT_DOUBLE_EQ(w.window_flops, 156);
  EXPECT_DOUBLE_EQ(w.flops_saving, 40.0 / 196);
  EXPECT_DOUBLE_EQ(w.full_kv_bytes, 56);
  EXPECT_DOUBLE_EQ(w.window_kv_bytes, 40);
  EXPECT_DOUBLE_EQ(w.memory_saving, 16.0 / 56);
  EXPECT_DOUBLE_EQ(w.covered_share, 2.0 / 3);  // 2 and 4 fit in the window
  EXPECT_DOUBLE_EQ(w.max_full_kv_bytes, 32);
  EXPECT_DOUBLE_EQ(w.max_window_kv_bytes, 16);
}

TEST(WhatIf, LengthBucketsCountRequestsPerPowerOfTwoBucketAgainstTheWindow) {
  const std::vector<LengthBin> bins = {{300, 40}, {500, 2}, {900, 25}, {7000, 10}, {1, 1}};
  const WhatIfSection w = what_if(toy(), bins, 1023, 0, "fp16");
  ASSERT_EQ(w.length_buckets.size(), 4u);
  EXPECT_EQ(w.length_buckets[0].from, 1);
  EXPECT_EQ(w.length_buckets[1].from, 256);
  EXPECT_EQ(w.length_buckets[1].to, 511);
  EXPECT_DOUBLE_EQ(w.length_buckets[1].requests, 42);  // 300 and 500 tokens: 40 + 2 requests
  EXPECT_TRUE(w.length_buckets[2].within_window);       // 512..1023 <= 1023
  EXPECT_FALSE(w.length_buckets[3].within_window);      // 4096..8191
}

TEST(WhatIf, HistogramCountsWeighTheRequests) {
  // "8,3" = three requests of 8 tokens; with one global token, window pairs 30 each.
  const auto bins = parse_length_distribution("8,3\n2,1\n");
  const WhatIfSection w = what_if(toy(), *bins, 4, 1, "fp16");
  EXPECT_DOUBLE_EQ(w.requests, 4);
  EXPECT_DOUBLE_EQ(w.full_flops, 4 * (3 * 36 + 3));
  EXPECT_DOUBLE_EQ(w.window_flops, 4 * (3 * 30 + 3));
  EXPECT_DOUBLE_EQ(w.window_kv_bytes, 4 * (3 * 5 + 2));  // min(8, 4 + 1) tokens kept
  EXPECT_DOUBLE_EQ(w.mean_tokens, 26.0 / 4);
}

TEST(LengthDistribution, ReadsJsonLinesAndRejectsGarbage) {
  const auto bins = parse_length_distribution("{\"tokens\": 100}\n{\"length\": 50, \"count\": 2}\n\n");
  ASSERT_TRUE(bins.ok());
  ASSERT_EQ(bins->size(), 2u);
  EXPECT_EQ((*bins)[1].tokens, 50);
  EXPECT_DOUBLE_EQ((*bins)[1].count, 2);
  EXPECT_EQ(parse_length_distribution("10\nabc\n").error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(parse_length_distribution("length\n").error().code, ErrorCode::kEmptyInput);
}

}  // namespace
}  // namespace attnprof
