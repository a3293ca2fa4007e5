// Each cost formula of docs/cost.md on real fixture events, and on probes that edit one real
// event's shape (decode, chunked prefill, GQA, packed sequences). Every expected figure is
// worked out here from the event's recorded shape, never by the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attention/fixture_util.h"
#include "attnprof/attention.h"
#include "attnprof/cost.h"

namespace attnprof::test {
namespace {

const Call* first_call(const Report& r, std::string_view direction) {
  auto it = std::find_if(r.calls.begin(), r.calls.end(), [&](const Call& c) { return c.direction == direction; });
  return it == r.calls.end() ? nullptr : &*it;
}

// The H200 training trace: B 1, Hq = Hkv 32, S 2048, D 128, bf16, cuDNN, is_causal=True.
constexpr double kTrainTensorBytes = 1.0 * 32 * 2048 * 128 * 2;  // one of Q, K, V, O, dO, dQ, dK, dV: 16 MiB
constexpr double kTrainCausalPairs = 2048.0 * 2049 / 2;           // row i sees keys 0..i
constexpr double kTrainPerPair = 2.0 * 1 * 32 * (128 + 128);      // 2 * B * Hq * (D + Dv)

TEST(CostOnFixtures, H200TrainingBackwardMovesEightTensorsAndTheLogSumExp) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train"));
  const Call* bwd = first_call(r, "backward");
  const Call* fwd = first_call(r, "forward");
  ASSERT_NE(bwd, nullptr);
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(bwd->backend, "cudnn");
  ASSERT_TRUE(bwd->cost);
  // read Q, K, V, O, dO and the fp32 LSE [B, Hq, Sq]; write dQ, dK, dV.
  const double lse = 1.0 * 32 * 2048 * 4;
  EXPECT_DOUBLE_EQ(bwd->cost->bytes_read, 5 * kTrainTensorBytes + lse);
  EXPECT_DOUBLE_EQ(bwd->cost->bytes_written, 3 * kTrainTensorBytes);
  EXPECT_DOUBLE_EQ(bwd->cost->bytes_moved, 8 * kTrainTensorBytes + lse);  // 128 MiB + 256 KiB
  EXPECT_FALSE(bwd->cost->bytes_upper_bound);
  // The forward: read Q, K, V, write O: half the backward's tensor terms.
  ASSERT_TRUE(fwd->cost);
  EXPECT_DOUBLE_EQ(fwd->cost->bytes_read, 3 * kTrainTensorBytes);
  EXPECT_DOUBLE_EQ(fwd->cost->bytes_written, kTrainTensorBytes);
}

TEST(CostOnFixtures, H200TrainingFusedBackwardIsTwoAndAHalfForwardsAndUnfusedTwo) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train"));
  const Call* bwd = first_call(r, "backward");
  const Call* fwd = first_call(r, "forward");
  ASSERT_NE(bwd, nullptr);
  ASSERT_NE(fwd, nullptr);
  ASSERT_TRUE(fwd->causal);
  EXPECT_DOUBLE_EQ(fwd->flops_useful, kTrainPerPair * kTrainCausalPairs);
  EXPECT_DOUBLE_EQ(bwd->flops_useful, 2.5 * kTrainPerPair * kTrainCausalPairs);  // cuDNN recomputes P
  // The same event as an unfused (math) backward: P is stored, four GEMMs, and the math path
  // runs the whole S x S matrix.
  Call unfused = *bwd;
  unfused.backend = "math";
  unfused.fused = false;
  const CallFlops f = count_call_flops(unfused);
  EXPECT_DOUBLE_EQ(f.useful, 2.0 * kTrainPerPair * kTrainCausalPairs);
  EXPECT_DOUBLE_EQ(f.executed, 2.0 * kTrainPerPair * 2048.0 * 2048.0);
}

// B 4, Hq 32, S 2048, D 128, is_causal=True, forced onto the math path.
constexpr double kSweepPerPair = 2.0 * 4 * 32 * (128 + 128);

TEST(CostOnFixtures, ForceMathCausalExecutesTheWholeMatrixAndIsUsefulOnlyBelowTheDiagonal) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b4_s2048_force_math"));
  ASSERT_FALSE(r.calls.empty());
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.backend, "math");
    EXPECT_TRUE(c.causal);
    EXPECT_DOUBLE_EQ(c.flops_executed, kSweepPerPair * 2048.0 * 2048.0);
    EXPECT_DOUBLE_EQ(c.flops_useful, kSweepPerPair * 2048.0 * 2049 / 2);
    EXPECT_EQ(c.flops_granularity, "full");
  }
}

TEST(CostOnFixtures, EagerCausalRunExecutesTheSameCountAsTheMathPath) {
  // The eager model adds its causal mask as a tensor: the same full S x S product is executed.
  const Report& r = analyzed(h200("llama7b4l_eager_bf16_b4_s2048"));
  ASSERT_FALSE(r.calls.empty());
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.backend, "eager");
    EXPECT_DOUBLE_EQ(c.flops_executed, kSweepPerPair * 2048.0 * 2048.0);
    EXPECT_EQ(c.flops_granularity, "full");
  }
}

TEST(CostOnFixtures, GqaForwardReadsKeysAndValuesAtTheirOwnHeads) {
  // llama_hd96_gqa: q [4, 32, 2048, 96], k/v [4, 8, 2048, 96], bf16, causal.
  const Report& r = analyzed(h200("llama_hd96_gqa_sdpa_bf16_b4_s2048"));
  ASSERT_FALSE(r.calls.empty());
  const Call& c = r.calls.front();
  ASSERT_TRUE(c.cost);
  const double q = 4.0 * 32 * 2048 * 96 * 2, kv = 4.0 * 8 * 2048 * 96 * 2;
  EXPECT_DOUBLE_EQ(c.cost->bytes_read, q + 2 * kv);
  EXPECT_DOUBLE_EQ(c.cost->bytes_written, q);  // O has the query heads
  // FLOPs count the query heads: each shares its KV head.
  EXPECT_DOUBLE_EQ(c.flops_useful, 2.0 * 4 * 32 * (96 + 96) * 2048.0 * 2049 / 2);
}

// ---- probes: one real event with an edited shape ------------------------------------------

TEST(CostProbes, DecodeWithACausalFlagSeesOneKeyTopLeftAndEveryKeyBottomRight) {
  // The training trace's SDPA forward, as one query against 2048 keys: SDPA's is_causal is
  // top-left (tril(ones(1, 2048))): the query sees key 0 only.
  const Call* fwd = first_call(analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train")), "forward");
  ASSERT_NE(fwd, nullptr);
  Call sdpa = *fwd;
  sdpa.shape.Sq = 1;
  EXPECT_DOUBLE_EQ(count_call_flops(sdpa).useful, kTrainPerPair * 1);
  // The B200 vLLM call (TensorRT-LLM, bottom-right): its one query sees all 2048 keys.
  const Report& vllm = analyzed(fixture("tracelens/b200_eager_trace.json.gz"));
  ASSERT_FALSE(vllm.calls.empty());
  Call decode = vllm.calls.front();
  decode.shape.seqlens_q = {1};
  decode.shape.seqlens_k = {2048};
  EXPECT_DOUBLE_EQ(count_call_flops(decode).useful, 2.0 * 8 * (64 + 64) * 2048);  // Hq 8, D 64
}

TEST(CostProbes, ChunkedCausalPrefillCountsPairsByEachBackendsAlignment) {
  // 512 new queries against 2048 keys. Top-left (SDPA): row i sees i + 1 keys. Bottom-right
  // (vLLM's kernels): row i sees 1536 + i + 1 keys.
  const double top_left = 512.0 * 513 / 2;
  const double bottom_right = 512.0 * 1536 + 512.0 * 513 / 2;
  const Call* fwd = first_call(analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train")), "forward");
  ASSERT_NE(fwd, nullptr);
  Call sdpa = *fwd;
  sdpa.shape.Sq = 512;
  EXPECT_DOUBLE_EQ(count_call_flops(sdpa).useful, kTrainPerPair * top_left);
  Call vllm = analyzed(fixture("tracelens/b200_eager_trace.json.gz")).calls.front();
  vllm.shape.seqlens_q = {512};
  vllm.shape.seqlens_k = {2048};
  EXPECT_DOUBLE_EQ(count_call_flops(vllm).useful, 2.0 * 8 * 128 * bottom_right);
}

TEST(CostProbes, FourPackedSequencesOfTheMi300xVllmCallCountEachSequenceOnItsOwn) {
  // vLLM on MI300X: q [8192, 64, 64] packed tokens, k/v [8192, 8, 64]. The capture records no
  // per-sequence lengths; the probe gives the 8192 tokens as four causal sequences.
  const Report& r = analyzed(fixture("tracelens-inference/vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz"));
  ASSERT_FALSE(r.calls.empty());
  Call c = r.calls.front();
  ASSERT_EQ(c.shape.tokens, 8192);
  ASSERT_EQ(c.shape.Hq, 64);
  ASSERT_EQ(c.shape.Hkv, 8);
  ASSERT_EQ(c.shape.D, 64);
  // As recorded, neither the batch nor the key length is known: no count, said so, not 0 work.
  EXPECT_EQ(c.unknown, (std::vector<std::string>{"B", "Skv"}));
  EXPECT_DOUBLE_EQ(c.flops_useful, 0);
  const std::vector<int64_t> lengths = {1024, 2048, 2048, 3072};
  c.shape.B = 4;
  c.shape.seqlens_q = c.shape.seqlens_k = lengths;
  const double per_pair = 2.0 * 64 * (64 + 64);
  // Without a mask: sum of sq * sk.
  c.causal = false;
  const double sum_sq_sk = 1024.0 * 1024 + 2048.0 * 2048 + 2048.0 * 2048 + 3072.0 * 3072;
  CallFlops f = count_call_flops(c);
  EXPECT_FALSE(f.upper_bound);
  EXPECT_DOUBLE_EQ(f.useful, per_pair * sum_sq_sk);
  // Causal: sum of sq (sq + 1) / 2.
  c.causal = true;
  const double causal = 1024.0 * 1025 / 2 + 2 * (2048.0 * 2049 / 2) + 3072.0 * 3073 / 2;
  f = count_call_flops(c);
  EXPECT_DOUBLE_EQ(f.useful, per_pair * causal);
  // Bytes come from the 8192 tokens, not B x the longest: Q and O at 64 heads, K and V at 8.
  const int b = 2;  // bf16
  ASSERT_EQ(c.shape.dtype, "bf16");
  const AttentionTraffic t = attention_traffic(c);
  EXPECT_FALSE(t.upper_bound);
  EXPECT_DOUBLE_EQ(t.read, (8192.0 * 64 * 64 + 2 * 8192.0 * 8 * 64) * b);
  EXPECT_DOUBLE_EQ(t.written, 8192.0 * 64 * 64 * b);
}

}  // namespace
}  // namespace attnprof::test
