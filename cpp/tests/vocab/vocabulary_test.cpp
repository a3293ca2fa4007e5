// The vocabulary tables (vocabulary.h) and the places that used to keep their own copies:
// each former copy is now a lookup, and these tests pin that the lookups and the one copy
// left outside (the GPU spec table's dtype sizes, hw/) agree with the tables.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/dashboard.h"
#include "attnprof/hw.h"
#include "attnprof/rules.h"
#include "attnprof/scaling.h"
#include "attnprof/capture.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

std::string read_source(const std::filesystem::path& relative) {
  std::ifstream in(std::filesystem::path(ATTNPROF_SOURCE_DIR) / relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BackendVocabulary, EverySdpBackendMemberMapsBackToItsBackendOnItsDevice) {
  for (const BackendWord& w : kBackendWords) {
    if (w.sdp_backend.empty()) continue;
    const std::string_view device = w.device.empty() ? "cuda" : w.device;
    EXPECT_EQ(backend_of_sdp_backend(w.sdp_backend, device), w.name) << w.sdp_backend << " on " << device;
    EXPECT_EQ(sdp_backend_of(w.name), w.sdp_backend);
  }
  EXPECT_EQ(backend_of_sdp_backend("FLASH_ATTENTION", "cpu"), backend::kCpuFlash);
  EXPECT_EQ(backend_of_sdp_backend("FLASH_ATTENTION", "cuda"), backend::kFlash);
  EXPECT_EQ(backend_of_sdp_backend("ERROR", "cuda"), "");
}

TEST(BackendVocabulary, EveryRulesBackendHasARowAndTheSameSdpBackendMember) {
  using rules::Backend;
  for (Backend b : {Backend::kFlash, Backend::kEfficient, Backend::kCudnn, Backend::kMath, Backend::kCpuFlash,
                    Backend::kFa2, Backend::kFa3, Backend::kXformers, Backend::kFlex}) {
    const BackendWord* w = backend_word(rules::backend_name(b));
    ASSERT_NE(w, nullptr) << rules::backend_name(b);
    EXPECT_EQ(std::string_view(rules::sdp_backend_enum(b)), w->sdp_backend) << w->name;
  }
}

TEST(BackendVocabulary, CaptureChoiceAndScaleAdviceUseTheTable) {
  for (const BackendWord& w : kBackendWords) {
    if (w.sdp_backend.empty()) continue;
    EXPECT_EQ(backend_of_sdp_choice(w.sdp_backend, w.device.empty() ? "cuda" : w.device), w.name);
    const std::string code = pin_backend_code(w.name);
    if (w.pinnable) {
      EXPECT_NE(code.find("SDPBackend." + std::string(w.sdp_backend)), std::string::npos) << code;
    } else {
      EXPECT_EQ(code.find("SDPBackend"), std::string::npos) << w.name << ": " << code;
    }
  }
}

TEST(BackendVocabulary, NoSourceOutsideTheVocabularySpellsAnSdpBackendMemberAsALiteral) {
  // The former copies (decide.cpp, capture_merge.cpp, scaling_analysis.cpp) are lookups now.
  const std::regex member("\"(FLASH_ATTENTION|EFFICIENT_ATTENTION|CUDNN_ATTENTION|OVERRIDEABLE)\"");
  for (const char* file : {"cpp/src/rules/decide.cpp", "cpp/src/capture/capture_merge.cpp",
                           "cpp/src/analysis/scaling_analysis.cpp"})
    EXPECT_FALSE(std::regex_search(read_source(file), member)) << file;
}

std::string_view class_name(BackendClass c) {
  switch (c) {
    case BackendClass::kFused: return backend_class::kFused;
    case BackendClass::kFallback: return backend_class::kFallback;
    case BackendClass::kEager: return backend_class::kEager;
  }
  return "";
}

// The dashboard colours each call by its own fused flag; on real traces of every backend
// class that agrees with the class the vocabulary gives the call's backend.
TEST(BackendVocabulary, TheClassOfEveryCallsBackendIsTheClassTheDashboardDraws) {
  const std::string dir = ATTNPROF_FIXTURES_DIR;
  std::set<std::string_view> classes_seen;
  for (const char* fixture : {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz",
                              "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz",
                              "h200-torch2.11/traces/gpt2_eager_fp16_b8_s1024.pt.trace.json.gz",
                              "tracelens/mi300_gaunernst_bert-small-uncased__1016001.json.gz",
                              "tracelens/b200_eager_trace.json.gz",
                              "tracelens-inference/xdit_flux1_aiter_fmha_v3.json.gz"}) {
    auto report = analyze_file(dir + "/" + fixture);
    ASSERT_TRUE(report.ok()) << fixture;
    for (const Call& c : report->calls) {
      const BackendWord* w = backend_word(c.backend);
      ASSERT_NE(w, nullptr) << fixture << ": backend " << c.backend << " has no vocabulary row";
      EXPECT_EQ(class_name(w->kind), backend_class_of(c)) << fixture << " call " << c.id << " " << c.backend;
      classes_seen.insert(class_name(w->kind));
    }
  }
  EXPECT_EQ(classes_seen.size(), 3u) << "the fixtures cover fused, fallback and eager calls";
}

TEST(DtypeVocabulary, TraceAndTorchSpellingsMapToTheReportSpelling) {
  EXPECT_EQ(dtype_of_spelling("c10::BFloat16"), "bf16");
  EXPECT_EQ(dtype_of_spelling("bfloat16"), "bf16");
  EXPECT_EQ(dtype_of_spelling("float"), "fp32");
  EXPECT_EQ(dtype_of_spelling("c10::Float8_e4m3fnuz"), "fp8_e4m3");
  EXPECT_EQ(dtype_of_spelling("int64"), "");
  for (const DtypeWord& w : kDtypeWords)
    for (std::string_view s : w.kineto)
      if (!s.empty()) {
        EXPECT_EQ(dtype_name(s), w.name) << s;
      }
}

TEST(DtypeVocabulary, TheGpuSpecTablesDtypeSizesAgreeWithTheVocabulary) {
  for (const DtypeWord& w : kDtypeWords) EXPECT_EQ(dtype_bytes(w.name), w.bytes) << w.name;
}

TEST(IngestIssueVocabulary, EveryIssueKindIngestRecordsHasARowAndIsDocumented) {
  // issue("kind", ...), also issue(cond ? "kind" : "other", ...).
  const std::regex literal(R"re((?:issue|add_issue|issue_of)\((?:[a-z_.]+ \? )?"([a-z0-9_]+)"(?: : "([a-z0-9_]+)")?)re");
  std::set<std::string> kinds;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(ATTNPROF_SOURCE_DIR) / "cpp/src/ingest")) {
    const std::string text = read_source(std::filesystem::relative(entry.path(), ATTNPROF_SOURCE_DIR));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it)
      for (size_t g : {1u, 2u})
        if ((*it)[g].matched) kinds.insert((*it)[g].str());
  }
  EXPECT_GE(kinds.size(), 10u) << "the scan found too few issue kinds to be looking at ingest";
  for (const std::string& kind : kinds) EXPECT_NE(ingest_issue_word(kind), nullptr) << kind;
  const std::string docs = read_source("docs/ingest.md");
  for (const IngestIssueWord& w : kIngestIssueWords)
    EXPECT_NE(docs.find("`" + std::string(w.kind) + "`"), std::string::npos) << w.kind << " is not in docs/ingest.md";
}

}  // namespace
}  // namespace attnprof
