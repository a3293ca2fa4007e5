// Attention extraction on the H200 / torch 2.11 traces, checked against ground_truth.json.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "attnprof/attention.h"
#include "fixture_util.h"

namespace attnprof::test {
namespace {

std::vector<const Call*> forward_calls(const Report& r) {
  std::vector<const Call*> out;
  for (const Call& c : r.calls)
    if (c.direction == "forward") out.push_back(&c);
  return out;
}

nlohmann::json ground_truth() {
  std::ifstream in(fixture("h200-torch2.11/ground_truth.json"));
  return nlohmann::json::parse(in);
}

// The backend ground truth names through the dispatched op it saw ("aten::_scaled_dot_
// product_cudnn_attention" -> cudnn); eager runs have no attention op.
std::string expected_backend(const nlohmann::json& run) {
  if (run["attn"] == "eager") return backend::kEager;
  for (const auto& op : run["attention_ops"]) {
    const AttentionOp* entry = classify_attention_op(op[0].get<std::string>());
    if (entry && entry->role == OpRole::kBackend) return std::string(entry->backend);
  }
  return "?";
}

TEST(H200Fixtures, EveryRunHasOneForwardCallPerLayerWithTheGroundTruthBackendAndShape) {
  const nlohmann::json truth = ground_truth();
  ASSERT_EQ(truth["runs"].size(), 26u);
  for (const auto& run : truth["runs"]) {
    SCOPED_TRACE(run["name"].get<std::string>());
    const Report& r = analyzed(fixture("h200-torch2.11/" + run["trace"].get<std::string>()));
    const auto fwd = forward_calls(r);
    ASSERT_EQ(fwd.size(), 4u);  // every model here has 4 layers
    const std::string backend = expected_backend(run);
    for (size_t i = 0; i < fwd.size(); ++i) {
      const Call& c = *fwd[i];
      EXPECT_EQ(c.backend, backend);
      EXPECT_EQ(c.layer, static_cast<int64_t>(i));
      EXPECT_EQ(c.shape.B, run["B"].get<int64_t>());
      EXPECT_EQ(c.shape.Sq, run["S"].get<int64_t>());
      EXPECT_EQ(c.shape.Skv, run["S"].get<int64_t>());
      EXPECT_EQ(c.shape.dtype, run["dtype"].get<std::string>());
      EXPECT_EQ(c.fused, backend != backend::kEager && backend != backend::kMath);
      EXPECT_GT(c.device_time_us, 0);
      EXPECT_GT(c.flops, 0);
    }
    EXPECT_TRUE(r.summary.has_gpu);
    EXPECT_EQ(r.source.device_name, "NVIDIA H200");
    EXPECT_EQ(r.source.arch, "sm90");
  }
}

TEST(H200Fixtures, Llama7bDimensionsAre32HeadsOfDim128) {
  for (const char* name : {"llama7b4l_sdpa_bf16_b4_s1024", "llama7b4l_eager_bf16_b4_s1024",
                           "llama7b4l_sdpa_bf16_b4_s2048_force_math"}) {
    SCOPED_TRACE(name);
    for (const Call& c : analyzed(h200(name)).calls) {
      EXPECT_EQ(c.shape.Hq, 32);
      EXPECT_EQ(c.shape.Hkv, 32);
      EXPECT_EQ(c.shape.D, 128);
      EXPECT_FALSE(c.gqa);
    }
  }
}

TEST(H200Fixtures, Bf16SdpaRunsOneCudnnKernelPerLayer) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b4_s2048"));
  ASSERT_EQ(r.calls.size(), 4u);
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.library, "cudnn");
    EXPECT_EQ(c.op, "aten::scaled_dot_product_attention");
    EXPECT_EQ(c.backend_op, "aten::_scaled_dot_product_cudnn_attention");
    EXPECT_TRUE(c.causal);
    EXPECT_EQ(c.mask.kind, "causal_flag");
    size_t fused = 0;
    for (const KernelRef& k : c.kernels) fused += k.component == component::kFused;
    EXPECT_EQ(fused, 1u);
    // 2 * B * H * (D + Dv) per unmasked pair; causal: S(S+1)/2 pairs of 2048
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4 * 32 * 256 * (2048.0 * 2049 / 2));
    EXPECT_DOUBLE_EQ(c.flops_useful, c.flops);
    EXPECT_EQ(c.causal_alignment, "top_left");
    EXPECT_NEAR(c.tflops, c.flops / (c.device_time_us * 1e6), 1e-9);
  }
  EXPECT_EQ(r.layers.size(), 4u);
  EXPECT_DOUBLE_EQ(r.summary.fused_time_fraction, 1.0);
  EXPECT_DOUBLE_EQ(r.summary.fused_call_fraction, 1.0);
  EXPECT_GT(r.summary.gpu_time_us, r.summary.attention_device_time_us);
  EXPECT_GT(r.summary.attention_share, 0.0);
  EXPECT_LT(r.summary.attention_share, 1.0);
}

TEST(H200Fixtures, ForcedAndFallbackBackendsNameTheirKernels) {
  struct Case {
    const char* trace;
    const char* backend;
    const char* library;
  };
  for (const Case& c : {Case{"llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention", "flash", "pytorch_flash"},
                        Case{"llama7b4l_sdpa_bf16_b4_s2048_force_efficient_attention", "efficient", "cutlass_fmha"},
                        Case{"llama7b4l_sdpa_bf16_b4_s2048_force_cudnn_attention", "cudnn", "cudnn"},
                        Case{"llama7b4l_sdpa_fp32_b4_s2048", "efficient", "cutlass_fmha"},
                        Case{"llama_hd512_gqa_sdpa_bf16_b4_s2048", "efficient", "cutlass_fmha"}}) {
    SCOPED_TRACE(c.trace);
    const Report& r = analyzed(h200(c.trace));
    ASSERT_EQ(r.calls.size(), 4u);
    for (const Call& call : r.calls) {
      EXPECT_EQ(call.backend, c.backend);
      EXPECT_EQ(call.library, c.library);
      EXPECT_TRUE(call.fused);
    }
  }
}

TEST(H200Fixtures, GqaModelsKeepFewerKvHeadsAndTheirHeadDim) {
  for (const auto& [name, head_dim] : {std::pair{"llama_hd96_gqa_sdpa_bf16_b4_s2048", 96},
                                       std::pair{"llama_hd256_gqa_sdpa_bf16_b4_s2048", 256}}) {
    SCOPED_TRACE(name);
    for (const Call& c : analyzed(h200(name)).calls) {
      EXPECT_EQ(c.shape.D, head_dim);
      EXPECT_TRUE(c.gqa);
      EXPECT_LT(c.shape.Hkv, c.shape.Hq);
    }
  }
}

TEST(H200Fixtures, Hd512ModelReachesSdpaWithKvHeadsAlreadyRepeated) {
  // transformers expanded K/V to all query heads before calling SDPA: the op saw no GQA.
  for (const Call& c : analyzed(h200("llama_hd512_gqa_sdpa_bf16_b4_s2048")).calls) {
    EXPECT_EQ(c.shape.D, 512);
    EXPECT_EQ(c.shape.Hq, 4);
    EXPECT_EQ(c.shape.Hkv, 4);
    EXPECT_FALSE(c.gqa);
  }
}

TEST(H200Fixtures, UnfusedCallsGroupTheirMatmulSoftmaxKernelsPerLayer) {
  for (const char* name : {"llama7b4l_sdpa_bf16_b4_s2048_force_math", "llama7b4l_eager_bf16_b4_s1024",
                           "llama7b4l_eager_bf16_b4_s4096", "gpt2_eager_fp16_b8_s1024"}) {
    SCOPED_TRACE(name);
    const Report& r = analyzed(h200(name));
    ASSERT_EQ(r.calls.size(), 4u);
    for (const Call& c : r.calls) {
      EXPECT_FALSE(c.fused);
      std::multiset<std::string> components;
      for (const KernelRef& k : c.kernels) components.insert(k.component);
      EXPECT_EQ(components.count(component::kQK), 1u);
      EXPECT_EQ(components.count(component::kAV), 1u);
      EXPECT_GE(components.count(component::kSoftmax), 1u);
      EXPECT_EQ(components.count(component::kFused), 0u);
    }
    EXPECT_DOUBLE_EQ(r.summary.fused_call_fraction, 0.0);
    ASSERT_FALSE(r.findings.empty());
    EXPECT_EQ(r.findings.front().severity, "high");
    EXPECT_EQ(r.findings.front().layers, (std::vector<int64_t>{0, 1, 2, 3}));
  }
}

TEST(H200Fixtures, EagerLlamaCallCarriesTheMaskItAdded) {
  const Report& r = analyzed(h200("llama7b4l_eager_bf16_b4_s1024"));
  ASSERT_EQ(r.calls.size(), 4u);
  const Call& c = r.calls.front();
  EXPECT_EQ(c.op, "aten::matmul -> aten::softmax -> aten::matmul");
  EXPECT_TRUE(c.mask.present);
  EXPECT_EQ(c.mask.kind, "float");
  EXPECT_EQ(c.mask.dims, (std::vector<int64_t>{4, 1, 1024, 1024}));
  EXPECT_EQ(c.scale, 0);  // the trace does not record the double it multiplied by
  EXPECT_EQ(c.shape.dtype, "bf16");
}

TEST(H200Fixtures, PaddingMaskReachesTheCallAsABoolOrFloatTensor) {
  for (const char* name : {"llama7b4l_sdpa_bf16_b4_s2048_padmask", "bert_sdpa_fp16_b16_s512_padmask",
                           "llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask"}) {
    SCOPED_TRACE(name);
    for (const Call& c : analyzed(h200(name)).calls) {
      EXPECT_TRUE(c.mask.present);
      EXPECT_EQ(c.mask.dims.size(), 4u);
    }
  }
}

TEST(H200Fixtures, StackTraceGivesEachCallItsModulePath) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b4_s1024_stack"));
  ASSERT_EQ(r.calls.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const std::string& m = r.calls[i].module;
    EXPECT_NE(m.find("LlamaModel_0.LlamaDecoderLayer_" + std::to_string(i) + "."), std::string::npos) << m;
    EXPECT_TRUE(m.ends_with("LlamaAttention_" + std::to_string(i))) << m;
    EXPECT_EQ(r.layers[i].module, m);
  }
}

TEST(H200Fixtures, TrainingTracePairsEachBackwardCallWithItsForwardLayer) {
  const Report& r = analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train"));
  ASSERT_EQ(r.calls.size(), 8u);
  size_t backward = 0;
  for (const Call& c : r.calls) {
    ASSERT_GE(c.pair_id, 0);
    const Call& partner = r.calls[static_cast<size_t>(c.pair_id)];
    EXPECT_EQ(partner.pair_id, c.id);
    EXPECT_NE(partner.direction, c.direction);
    EXPECT_EQ(partner.layer, c.layer);
    EXPECT_EQ(partner.sequence_number, c.sequence_number);
    if (c.direction != "backward") continue;
    ++backward;
    EXPECT_EQ(c.backend, "cudnn");
    EXPECT_TRUE(c.fused);
    EXPECT_EQ(c.op, "ScaledDotProductCudnnAttentionBackward0");
    EXPECT_EQ(c.shape.Sq, 2048);
    EXPECT_DOUBLE_EQ(c.flops, partner.flops * 2.5);
    bool bprop = false;
    for (const KernelRef& k : c.kernels) bprop = bprop || k.name.find("flash_bprop") != std::string::npos;
    EXPECT_TRUE(bprop);
  }
  EXPECT_EQ(backward, 4u);
  // Backward runs in reverse layer order.
  std::vector<int64_t> backward_layers;
  for (const Call& c : r.calls)
    if (c.direction == "backward") backward_layers.push_back(c.layer);
  EXPECT_EQ(backward_layers, (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_EQ(r.layers.size(), 4u);
}

}  // namespace
}  // namespace attnprof::test
