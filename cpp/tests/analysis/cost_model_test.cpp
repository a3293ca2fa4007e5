// The analytic per-call formulas, pinned on hand-computed examples (docs/cost.md).
#include <gtest/gtest.h>

#include "attnprof/attention.h"
#include "attnprof/cost.h"

namespace attnprof {
namespace {

Shape shape(int64_t B, int64_t hq, int64_t hkv, int64_t sq, int64_t skv, int64_t d, const char* dtype = "bf16") {
  return Shape{B, hq, hkv, sq, skv, d, d, dtype};
}

TEST(AttentionMemory, MhaEagerHoldsScoresInDtypePlusTwoFp32Copies) {
  // B=1 H=32 S=8192 bf16: matrix 1*32*8192*8192 = 2^31 elements.
  const AttentionMemory m = attention_memory(shape(1, 32, 32, 8192, 8192, 128), true, false);
  EXPECT_EQ(m.scores_bytes, int64_t{1} << 32);   // 2^31 * 2 B = 4 GiB
  EXPECT_EQ(m.softmax_bytes, int64_t{1} << 34);  // 2^31 * 8 B = 16 GiB (fp32 upcast + fp32 output)
  EXPECT_EQ(m.repeat_kv_bytes, 0);               // MHA: nothing to expand
  EXPECT_EQ(m.lse_bytes, 0);
}

TEST(AttentionMemory, GqaEagerExpandsKvToQueryHeads) {
  // B=2 Hq=32 Hkv=8 S=1024 D=128 bf16: repeat_kv = B*Hq*Skv*(D+Dv)*b = 2*32*1024*256*2.
  const AttentionMemory m = attention_memory(shape(2, 32, 8, 1024, 1024, 128), true, false);
  EXPECT_EQ(m.repeat_kv_bytes, 2LL * 32 * 1024 * 256 * 2);
  EXPECT_EQ(m.scores_bytes, 2LL * 32 * 1024 * 1024 * 2);  // scores use query heads
}

TEST(AttentionMemory, MqaFusedKeepsOnlyOutputAndLogsumexp) {
  // B=4 Hq=16 Hkv=1 S=2048 D=64 fp16 fused: LSE 4*16*2048*4, output 4*16*2048*64*2.
  const AttentionMemory m = attention_memory(shape(4, 16, 1, 2048, 2048, 64, "fp16"), false, false);
  EXPECT_EQ(m.lse_bytes, 4LL * 16 * 2048 * 4);
  EXPECT_EQ(m.output_bytes, 4LL * 16 * 2048 * 64 * 2);
  EXPECT_EQ(m.scores_bytes + m.softmax_bytes + m.repeat_kv_bytes, 0);
  EXPECT_EQ(m.transient(), 524288 + 16777216);
}

TEST(AttentionMemory, CrossAttentionScalesWithSqTimesSkvAndMaskHasOneHead) {
  // B=8 H=12 Sq=128 Skv=384 fp32 eager with mask: scores 8*12*128*384*4, mask 8*128*384*4.
  const AttentionMemory m = attention_memory(shape(8, 12, 12, 128, 384, 64, "fp32"), true, true);
  EXPECT_EQ(m.scores_bytes, 8LL * 12 * 128 * 384 * 4);
  EXPECT_EQ(m.softmax_bytes, 8LL * 12 * 128 * 384 * 8);
  EXPECT_EQ(m.mask_bytes, 8LL * 128 * 384 * 4);
}

TEST(AttentionCost, DecodeWithKvCacheIsMemoryBoundAtGroupSizeFlopPerByte) {
  // Decode: Sq=1 against a 4096-token cache, Llama-3-8B heads (Hq=32, Hkv=8, D=128), bf16.
  const Shape s = shape(1, 32, 8, 1, 4096, 128);
  // Cache read: B*Hkv*Skv*(D+Dv)*b = 8*4096*256*2 = 16 MiB; Q and O: 32*128*2 each.
  EXPECT_DOUBLE_EQ(attention_min_bytes(s, false), 8.0 * 4096 * 256 * 2 + 2 * 32 * 128 * 2);
  // One layer's cache per token: 2*Hkv*D*b = 4 KiB; 32 layers = 128 KiB/token (reference 3.3).
  EXPECT_EQ(32 * kv_cache_bytes_per_token(8, 128, 2), 128 * 1024);
  Call call;
  call.shape = s;
  call.direction = "forward";
  const double intensity = attention_flops(call) / attention_min_bytes(s, false);
  EXPECT_NEAR(intensity, 4.0, 0.05);  // ~ G = Hq/Hkv = 4 FLOP/B: far below every GPU's ridge
}

TEST(AttentionCost, LlamaTwoSevenBKvCacheIsHalfMebibytePerToken) {
  EXPECT_EQ(32 * kv_cache_bytes_per_token(32, 128, 2), 512 * 1024);  // reference 3.3: 512 KiB/token
}

TEST(AttentionCost, MaterialisedCallMovesTheScoreMatrixFourTimes) {
  const Shape s = shape(1, 1, 1, 100, 100, 8, "fp16");
  const double fused = (100.0 * 8 + 100.0 * 16 + 100.0 * 8) * 2;
  EXPECT_DOUBLE_EQ(attention_min_bytes(s, false), fused);
  EXPECT_DOUBLE_EQ(attention_min_bytes(s, true), fused + 4.0 * 100 * 100 * 2);
  EXPECT_TRUE(materialises_scores("eager"));
  EXPECT_TRUE(materialises_scores("math"));
  EXPECT_FALSE(materialises_scores("cudnn"));
}

}  // namespace
}  // namespace attnprof
