// Serving engines and diffusion pipelines on MI300X (../shared/fixtures/tracelens-inference,
// ground truth in the fixtures README): graph captures, Triton kernels with no aten op, aiter
// ops, and a device whose deviceProperties name is empty.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "attnprof/attention.h"
#include "fixture_util.h"

namespace attnprof::test {
namespace {

std::string inference(const std::string& name) { return fixture("tracelens-inference/" + name); }

std::vector<const Call*> calls_of_library(const Report& r, std::string_view library) {
  std::vector<const Call*> out;
  for (const Call& c : r.calls)
    if (c.library == library) out.push_back(&c);
  return out;
}

TEST(ServingFixtures, SageAttentionKernelsWithoutAnAtenOpAreOneCallEachQuantPlusForward) {
  const Report& r = analyzed(inference("xdit_flux1_sageattention.json.gz"));
  const auto sage = calls_of_library(r, "aiter_sage");
  ASSERT_EQ(sage.size(), 57u);  // 19 double + 38 single blocks per step
  for (const Call* c : sage) {
    EXPECT_EQ(c->backend, "external");
    EXPECT_TRUE(c->fused);
    ASSERT_EQ(c->kernels.size(), 2u);
    EXPECT_EQ(c->kernels[0].name, "sage_quant_kernel");
    EXPECT_EQ(c->kernels[1].name, "sage_fwd");
    EXPECT_GT(c->device_time_us, 0);
    EXPECT_FALSE(c->device_time_unknown);
  }
  // The 13 SDPA calls (12 CLIP layers + 1 VAE) still run AOTriton's flash kernel.
  EXPECT_EQ(calls_of_library(r, "aotriton").size(), 13u);
  EXPECT_FALSE(r.unrecognised.has_value());
}

TEST(ServingFixtures, AiterOpsCapturedIntoAGraphTakeTheKernelsItsReplayRan) {
  // The 57 aiter::fmha_v3_fwd ops are recorded while Inductor's cudagraph tree captures the
  // transformer (kernels not run); one hipGraphLaunch then replays the 57 asm kernels.
  const Report& r = analyzed(inference("xdit_flux1_aiter_fmha_v3.json.gz"));
  const auto aiter = calls_of_library(r, "aiter");
  ASSERT_EQ(aiter.size(), 57u);
  EXPECT_EQ(r.summary.unknown_time_call_count, 0);
  for (const Call* c : aiter) {
    EXPECT_EQ(c->op, "aiter::fmha_v3_fwd");
    EXPECT_FALSE(c->device_time_unknown);
    EXPECT_EQ(c->backend, "flash");
    EXPECT_TRUE(c->fused);
    ASSERT_EQ(c->kernels.size(), 1u);
    EXPECT_EQ(c->kernels[0].name, "aiter::fmha_fwd_hd128_bf16_rtz");
  }
  for (const Call& c : r.calls)
    for (const KernelRef& k : c.kernels) EXPECT_FALSE(k.name.starts_with("triton_")) << k.name;
  EXPECT_EQ(calls_of_library(r, "aotriton").size(), 13u);
  EXPECT_FALSE(r.unrecognised.has_value());
}

TEST(ServingFixtures, SglangDecodeGraphCaptureGivesCallsWithUnknownDeviceTime) {
  const Report& r = analyzed(inference("sglang_qwen3_8b_decode_graph_capture.json.gz"));
  ASSERT_EQ(r.calls.size(), 36u);  // 36 layers, kernels recorded into the graph, not run
  for (const Call& c : r.calls) {
    EXPECT_TRUE(c.op.starts_with("sglang_profiler::attention_paged_attention_ragged_")) << c.op;
    EXPECT_TRUE(c.device_time_unknown);
    EXPECT_TRUE(c.fused);  // unknown is not "unfused"
    EXPECT_EQ(c.device_time_us, 0);
  }
  EXPECT_EQ(r.summary.unknown_time_call_count, 36);
  ASSERT_EQ(r.layers.size(), 36u);
  EXPECT_TRUE(r.layers.front().device_time_unknown);
  EXPECT_EQ(r.source.device_name, "AMD Instinct MI300X");
  EXPECT_EQ(r.source.device_vendor, "amd");
}

TEST(ServingFixtures, VllmPiecewiseCaptureHasOneLayerPerCallAndNoAttentionKernels) {
  const Report& r = analyzed(inference("vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz"));
  ASSERT_EQ(r.calls.size(), 24u);
  std::set<int64_t> steps;
  for (size_t i = 0; i < r.calls.size(); ++i) {
    const Call& c = r.calls[i];
    EXPECT_EQ(c.op, "vllm::unified_attention_with_output");
    // Only the KV-cache write ran (reshape_and_cache_flash): not attention, not "unfused".
    EXPECT_TRUE(c.device_time_unknown);
    EXPECT_TRUE(c.fused);
    EXPECT_EQ(c.layer, static_cast<int64_t>(i));  // module paths collapse to GraphModule_0
    steps.insert(c.step);
  }
  EXPECT_EQ(steps.size(), 1u);
  EXPECT_EQ(r.layers.size(), 24u);
}

TEST(ServingFixtures, DeviceWithAnEmptyNameIsIdentifiedAsMi300xFromItsColumns) {
  for (const char* f : {"vllm_gptoss_decode_full_graph_capture.pt.trace.json.gz",
                        "vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz"}) {
    const Report& r = analyzed(inference(f));
    EXPECT_EQ(r.source.device_name, "MI300X") << f;
    EXPECT_EQ(r.source.device_vendor, "amd");
    EXPECT_EQ(r.source.arch, "gfx942");  // not "sm94" from ROCm's computeMajor/Minor
    EXPECT_NE(r.source.device_identified_by.find("304 compute units"), std::string::npos) << r.source.device_identified_by;
    EXPECT_EQ(r.calls.size(), 24u);
  }
}

TEST(HtaFixtures, Mi250GcdNamedRadeonGraphicsIsIdentifiedByComputeUnitsAndMemory) {
  const Report& r = analyzed(fixture("hta/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz"));
  EXPECT_EQ(r.source.device_name, "AMD Radeon Graphics");
  EXPECT_EQ(r.source.device_vendor, "amd");
  EXPECT_EQ(r.source.arch, "gfx90a");
  EXPECT_TRUE(r.calls.empty());
}

TEST(AllFixtures, NoRecognisedOrAttentionFreeTraceListsUnrecognisedNames) {
  // Every fixture's attention is in the catalogs, and the HTA traces have none: the
  // "unrecognised" section (and its external/unknown calls) must stay absent everywhere.
  namespace fs = std::filesystem;
  size_t traces = 0;
  for (const char* dir : {"h200-torch2.11/traces", "tracelens", "tracelens-inference", "hta"})
    for (const auto& entry : fs::directory_iterator(fixture(dir))) {
      if (!entry.path().string().ends_with(".gz")) continue;
      const Report& r = analyzed(entry.path().string());
      ++traces;
      EXPECT_FALSE(r.unrecognised.has_value()) << entry.path() << ": " << r.unrecognised->front().name;
      for (const Call& c : r.calls) EXPECT_NE(c.library, "unknown") << entry.path();
      if (std::string(dir) == "hta") {
        EXPECT_TRUE(r.calls.empty()) << entry.path();
      }
    }
  EXPECT_GT(traces, 40u);
}

}  // namespace
}  // namespace attnprof::test
