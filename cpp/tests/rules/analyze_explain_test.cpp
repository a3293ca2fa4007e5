// `analyze` explains the real H200 traces: dtype and head-dim fallbacks, padding masks,
// forced backends and eager attention (shared/fixtures/h200-torch2.11).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "attnprof/analyze.h"
#include "attnprof/rules.h"

namespace {

using namespace attnprof;

Report analyze(const std::string& name, AnalyzeOptions options = {}) {
  const auto path = std::filesystem::path(ATTNPROF_FIXTURES_DIR) / "h200-torch2.11/traces" / (name + ".pt.trace.json.gz");
  auto r = analyze_file(path.string(), options);
  EXPECT_TRUE(r.ok()) << name << ": " << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : Report{};
}

std::vector<const Call*> forward_explained(const Report& r) {
  std::vector<const Call*> calls;
  for (const Call& c : r.calls)
    if (c.explanation && c.direction != "backward") calls.push_back(&c);
  return calls;
}

const RuleCheck* failed(const Explanation& e, const std::string& backend, const std::string& rule) {
  for (const BackendVerdict& v : e.backends)
    if (v.backend == backend)
      for (const RuleCheck& c : v.failed)
        if (c.rule == rule) return &c;
  return nullptr;
}

bool has_finding(const Report& r, const std::string& rule, const std::string& text) {
  return std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
    return f.rule == rule && (f.title + f.detail).find(text) != std::string::npos;
  });
}

TEST(AnalyzeExplains, Fp32TraceRejectsFlashAndCudnnForDtypeAndPredictsEfficient) {
  const Report r = analyze("llama7b4l_sdpa_fp32_b4_s2048");
  const auto calls = forward_explained(r);
  ASSERT_EQ(calls.size(), 4u);
  for (const Call* c : calls) {
    const Explanation& e = *c->explanation;
    EXPECT_EQ(c->backend, "efficient");
    EXPECT_EQ(e.predicted_backend, "efficient");
    EXPECT_TRUE(e.consistent);
    EXPECT_TRUE(failed(e, "flash", "flash.dtype"));
    EXPECT_TRUE(failed(e, "cudnn", "cudnn.dtype"));
    EXPECT_NEAR(e.expected_speedup, 281.22735595703125 / 28.24665641784668, 1e-6);  // fp32 vs bf16, measured
  }
  EXPECT_TRUE(has_finding(r, "cudnn.dtype", "layers 0-3"));
}

TEST(AnalyzeExplains, HeadDim512RejectsFlashAndCudnnForSizeAndPredictsEfficient) {
  const Report r = analyze("llama_hd512_gqa_sdpa_bf16_b4_s2048");
  const auto calls = forward_explained(r);
  ASSERT_EQ(calls.size(), 4u);
  for (const Call* c : calls) {
    const Explanation& e = *c->explanation;
    EXPECT_EQ(e.predicted_backend, "efficient");
    EXPECT_TRUE(e.consistent) << e.consistency_note;
    const RuleCheck* flash = failed(e, "flash", "flash.head_dim_max");
    const RuleCheck* cudnn = failed(e, "cudnn", "cudnn.head_dim_max");
    ASSERT_TRUE(flash && cudnn);
    EXPECT_EQ(cudnn->message, "head_dim should be no more than 256");
  }
}

TEST(AnalyzeExplains, PaddingMaskTracesRejectFlashForTheMaskAndCudnnRunsIt) {
  for (const char* name : {"llama7b4l_sdpa_bf16_b4_s2048_padmask", "bert_sdpa_fp16_b16_s512_padmask",
                           "llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask"}) {
    const Report r = analyze(name);
    const auto calls = forward_explained(r);
    ASSERT_FALSE(calls.empty()) << name;
    for (const Call* c : calls) {
      const Explanation& e = *c->explanation;
      EXPECT_EQ(e.predicted_backend, "cudnn") << name;
      EXPECT_TRUE(e.consistent) << name << ": " << e.consistency_note;
      EXPECT_TRUE(failed(e, "flash", "flash.attn_mask")) << name;
    }
  }
}

TEST(AnalyzeExplains, ForcedMathTraceSaysTheUserForcedTheBackend) {
  const Report r = analyze("llama7b4l_sdpa_bf16_b4_s2048_force_math", AnalyzeOptions{.torch_version = "2.11"});
  const auto calls = forward_explained(r);
  ASSERT_EQ(calls.size(), 4u);
  for (const Call* c : calls) {
    const Explanation& e = *c->explanation;
    EXPECT_EQ(e.predicted_backend, "math");
    EXPECT_NE(e.consistency_note.find("backend forced by the user (sdpa_kernel)"), std::string::npos);
    EXPECT_NE(e.fix.find("sdpa_kernel([MATH])"), std::string::npos);
    EXPECT_NEAR(e.expected_speedup, 79.43807983398438 / 28.24665641784668, 1e-6);
  }
  EXPECT_TRUE(has_finding(r, "rules.forced_backend", "layers 0-3"));
}

TEST(AnalyzeExplains, ForcedFlashWithUnknownTorchNamesBothExplanations) {
  const Report r = analyze("llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention");
  for (const Call* c : forward_explained(r)) {
    EXPECT_EQ(c->explanation->predicted_backend, "flash");
    EXPECT_NE(c->explanation->consistency_note.find("torch 2.5.1-2.8"), std::string::npos);
  }
}

TEST(AnalyzeExplains, ForcedMathTraceHasOneUnfusedFindingCarryingTheRulesReasonAndTheMeasuredTime) {
  const Report r = analyze("llama7b4l_sdpa_bf16_b4_s2048_force_math", AnalyzeOptions{.torch_version = "2.11"});
  const auto unfused = std::count_if(r.findings.begin(), r.findings.end(),
                                     [](const Finding& f) { return f.cause == "unfused:math"; });
  ASSERT_EQ(unfused, 1);
  const Finding& f = *std::find_if(r.findings.begin(), r.findings.end(),
                                   [](const Finding& g) { return g.cause == "unfused:math"; });
  EXPECT_EQ(f.rule, "rules.forced_backend");
  EXPECT_EQ(f.severity, "high");
  EXPECT_NE(f.detail.find("sdpa_kernel([MATH])"), std::string::npos) << f.detail;         // the rules' fix
  EXPECT_NE(f.detail.find("with separate kernels"), std::string::npos) << f.detail;       // the measured side
}

// Every H200 fixture: no two findings share a cause and a layer set, and none repeats another's text.
TEST(AnalyzeExplains, NoFindingRepeatsAnotherOnAnyFixture) {
  const auto dir = std::filesystem::path(ATTNPROF_FIXTURES_DIR) / "h200-torch2.11/traces";
  size_t traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string name = file.substr(0, file.find(".pt.trace.json.gz"));
    const Report r = analyze(name, AnalyzeOptions{.torch_version = "2.11"});
    ++traces;
    for (size_t i = 0; i < r.findings.size(); ++i)
      for (size_t j = i + 1; j < r.findings.size(); ++j) {
        const Finding& a = r.findings[i];
        const Finding& b = r.findings[j];
        EXPECT_NE(a.title, b.title) << name;
        EXPECT_NE(a.detail, b.detail) << name;
        auto la = a.layers, lb = b.layers;
        std::sort(la.begin(), la.end());
        std::sort(lb.begin(), lb.end());
        la.erase(std::unique(la.begin(), la.end()), la.end());
        lb.erase(std::unique(lb.begin(), lb.end()), lb.end());
        if (!a.cause.empty()) {
          EXPECT_FALSE(a.cause == b.cause && la == lb) << name << ": " << a.title << " / " << b.title;
        }
      }
  }
  EXPECT_GE(traces, 20u);
}

TEST(AnalyzeExplains, EagerTraceSuggestsSdpaWithTheMeasuredGain) {
  const Report r = analyze("llama7b4l_eager_bf16_b4_s2048");
  const auto calls = forward_explained(r);
  ASSERT_FALSE(calls.empty());
  for (const Call* c : calls) {
    const Explanation& e = *c->explanation;
    EXPECT_EQ(c->backend, "eager");
    EXPECT_NE(e.fix.find("attn_implementation=\"sdpa\""), std::string::npos);
    EXPECT_NEAR(e.expected_speedup, 53.80652618408203 / 28.24665641784668, 1e-6);
    EXPECT_NEAR(e.expected_memory_ratio, 5805981696.0 / 810565632.0, 1e-6);
    EXPECT_NE(e.gain_basis.find("llama7b4l_eager_bf16_b4_s2048"), std::string::npos);
  }
  EXPECT_TRUE(has_finding(r, "rules.eager_attention", "eager attention"));
}

TEST(AnalyzeExplains, DefaultTracesAgreeWithTheRulesAndNoVersionIsSilentlyAssumed) {
  for (const char* name : {"llama7b4l_sdpa_bf16_b4_s2048", "gpt2_sdpa_fp16_b8_s1024", "vit_sdpa_bf16_b16_384",
                           "llama_hd96_gqa_sdpa_bf16_b4_s2048", "llama_hd256_gqa_sdpa_bf16_b4_s2048",
                           "mistral_sw1024_sdpa_bf16_b2_s4096", "llama7b4l_sdpa_bf16_b1_s2048_train"}) {
    const Report r = analyze(name);
    for (const Call& c : r.calls) {
      ASSERT_TRUE(c.explanation) << name;
      EXPECT_TRUE(c.explanation->consistent) << name << ": " << c.explanation->consistency_note;
      EXPECT_EQ(c.explanation->predicted_backend, c.backend) << name;
      const auto& a = c.explanation->assumptions;
      EXPECT_TRUE(std::any_of(a.begin(), a.end(), [](const std::string& s) { return s.find("torch 2.11 assumed") == 0; }));
    }
  }
}

TEST(AnalyzeExplains, WrongVersionAssumptionIsReportedAsADisagreement) {
  // torch 2.4 needs TORCH_CUDNN_SDPA_ENABLED=1 for cuDNN; the H200 run used cuDNN: the rules
  // reject what ran, which must show as a disagreement, not be explained away.
  const Report r = analyze("llama7b4l_sdpa_bf16_b4_s2048", AnalyzeOptions{.torch_version = "2.4"});
  ASSERT_FALSE(r.calls.empty());
  const Explanation& e = *r.calls.front().explanation;
  EXPECT_FALSE(e.consistent);
  EXPECT_EQ(e.predicted_backend, "flash");
  EXPECT_NE(e.consistency_note.find("cudnn.env_enabled"), std::string::npos) << e.consistency_note;
  EXPECT_TRUE(has_finding(r, "rules.consistency", "rules predict flash but cudnn ran"));
}

}  // namespace

namespace {

attnprof::Report one_call_report(const std::string& backend, const std::string& pytorch_choice) {
  attnprof::Report r;
  r.source.arch = "sm90";
  r.source.versions = {{"torch", "2.11"}, {"cudnn", "9.19"}};
  attnprof::Call c;
  c.backend = backend;
  c.direction = "forward";
  c.layer = 0;
  c.shape = {2, 8, 8, 256, 256, 64, 64, "bf16"};
  c.capture = attnprof::CaptureInfo{pytorch_choice};
  r.calls.push_back(c);
  return r;
}

TEST(ExplainCalls, LiveCaptureChoiceThatDisagreesWithTheRulesIsReported) {
  const attnprof::Report r = one_call_report("cudnn", "FLASH_ATTENTION");
  const auto section = attnprof::rules::explain_calls(r.calls, r.source, r.summary.has_gpu, {});
  const attnprof::Explanation& e = *section.calls[0];
  EXPECT_EQ(e.predicted_backend, "cudnn");
  EXPECT_FALSE(e.consistent);
  EXPECT_NE(e.consistency_note.find("live capture) was FLASH_ATTENTION"), std::string::npos) << e.consistency_note;
  ASSERT_FALSE(section.findings.empty());
  EXPECT_EQ(section.findings.back().rule, "rules.consistency");
}

TEST(ExplainCalls, LiveCaptureChoiceThatAgreesKeepsTheCallConsistentWithoutAssumptions) {
  const attnprof::Report r = one_call_report("cudnn", "CUDNN_ATTENTION");
  const auto section = attnprof::rules::explain_calls(r.calls, r.source, r.summary.has_gpu, {});
  const attnprof::Explanation& e = *section.calls[0];
  EXPECT_TRUE(e.consistent) << e.consistency_note;
  EXPECT_TRUE(e.assumptions.empty());  // versions and arch came from the Report
  EXPECT_TRUE(section.findings.empty());
}

}  // namespace
