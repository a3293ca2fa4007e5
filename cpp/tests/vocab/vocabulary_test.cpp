// The vocabulary tables (vocabulary.h) and the places that used to keep their own copies:
// each former copy is now a lookup, and these tests pin that the lookups and the one copy
// left outside (the GPU spec table's dtype sizes, hw/) agree with the tables.
#include <gtest/gtest.h>

#include <cctype>
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
#include "attnprof/explain_input.h"
#include "attnprof/render.h"
#include "attnprof/utf8.h"
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

TEST(BackendVocabulary, TheClassSpellingsAreTheDashboards) {
  EXPECT_EQ(backend_class_name(BackendClass::kFused), backend_class::kFused);
  EXPECT_EQ(backend_class_name(BackendClass::kFallback), backend_class::kFallback);
  EXPECT_EQ(backend_class_name(BackendClass::kEager), backend_class::kEager);
}

std::string_view class_name(BackendClass c) { return backend_class_name(c); }

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

TEST(DtypeVocabulary, ExplainAndMatrixAcceptExactlyTheDtypesTheRulesReasonAbout) {
  for (const DtypeWord& w : kDtypeWords) {
    EXPECT_EQ(rules::parse_dtype(w.name).ok(), w.rules) << w.name;
    for (std::string_view torch_name : w.torch)
      if (!torch_name.empty()) {
        EXPECT_EQ(rules::parse_dtype(torch_name).ok(), w.rules) << torch_name;
      }
  }
  const auto rejected = rules::parse_dtype("int8");
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().message, "dtype 'int8': expected bf16, fp16, fp32, fp64 or fp8_e4m3");
  // `attnprof matrix` once kept its own set (without fp64), explain_input.cpp another: no list
  // of two dtype literals is left in either.
  const std::regex dtype_literal("\"(fp16|bf16|fp32|fp64|fp8_e4m3)\"\\s*(,|&&|\\|\\|)[^;]*\"(fp16|bf16|fp32|fp64|fp8_e4m3)\"");
  EXPECT_FALSE(std::regex_search(read_source("cpp/cli/cmd_matrix.cpp"), dtype_literal));
  EXPECT_FALSE(std::regex_search(read_source("cpp/src/rules/explain_input.cpp"), dtype_literal));
}

TEST(AtenOpVocabulary, EveryRoleHasTheComponentItsKernelsCountAs) {
  for (const AtenOpWord& w : kAtenOpWords) {
    EXPECT_EQ(component_of_op(w.name), w.component) << w.name;
    if (w.roles & kRoleSoftmax) {
      EXPECT_EQ(w.component, component::kSoftmax) << w.name;
    }
    if (w.roles & kRoleMatmul) {
      EXPECT_EQ(w.component, kGemmComponent) << w.name;
    }
    if (w.roles & kRoleLayout) {
      EXPECT_EQ(w.roles, kRoleLayout) << w.name << ": a layout op has no other role";
    }
    if (w.component == component::kDropout && w.roles) {
      EXPECT_EQ(w.roles, kRoleProb) << w.name;
    }
    EXPECT_EQ(aten_op_word(w.name), &w) << w.name << " has two rows";
  }
  // aten::mul scales the scores before the softmax and applies head masks after it.
  EXPECT_EQ(aten_op_word("aten::mul")->roles, unsigned{kRoleScore | kRoleProb});
  EXPECT_EQ(aten_op_word("aten::log_softmax"), nullptr);  // a loss, never attention
  EXPECT_EQ(component_of_op("aten::linear"), component::kOther);
}

TEST(AtenOpVocabulary, NoAttentionSourceKeepsAListOfAtenOpNamesOfItsOwn) {
  // eager_pattern.cpp once listed the softmax, matmul, layout, score and prob ops, and again
  // (with other members) the scale, mask and dropout ops of component_of_op.
  const std::regex op_list(R"(std::array<std::string_view, \d+> \w+ = \{\s*"aten::)");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(ATTNPROF_SOURCE_DIR) / "cpp/src/attention")) {
    if (entry.path().filename() == "op_catalog.cpp") continue;  // the op catalog: which op is which backend
    const std::string text = read_source(std::filesystem::relative(entry.path(), ATTNPROF_SOURCE_DIR));
    EXPECT_FALSE(std::regex_search(text, op_list)) << entry.path().filename();
  }
}

// The id of every finding the fixtures give is a vocabulary row or an SDPA rule id.
TEST(FindingVocabulary, EveryFindingOfTheFixturesHasAVocabularyOrRuleTableId) {
  const std::string dir = ATTNPROF_FIXTURES_DIR;
  std::set<std::string> ids;
  for (const char* fixture : {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz",
                              "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz",
                              "h200-torch2.11/traces/llama7b4l_sdpa_fp32_b4_s2048.pt.trace.json.gz",
                              "h200-torch2.11/traces/gpt2_eager_fp16_b8_s1024.pt.trace.json.gz",
                              "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_padmask.pt.trace.json.gz",
                              "h200-torch2.11/traces/mistral_sw1024_sdpa_bf16_b2_s4096.pt.trace.json.gz",
                              "tracelens/b200_eager_trace.json.gz"}) {
    auto report = analyze_file(dir + "/" + fixture);
    ASSERT_TRUE(report.ok()) << fixture;
    for (const Finding& f : report->findings) {
      if (f.rule.empty()) continue;
      EXPECT_TRUE(finding_word(f.rule) != nullptr || rules::find_rule(f.rule) != nullptr)
          << fixture << ": finding id " << f.rule << " is in no table";
      ids.insert(f.rule);
    }
  }
  for (const char* id : {finding::kForcedBackend, finding::kEagerAttention, finding::kRoofline})
    EXPECT_TRUE(ids.count(id)) << id << " not among the fixtures' findings";
}

TEST(FindingVocabulary, NoSourceSpellsAFindingIdAndTheSchemaListsEveryOne) {
  const std::regex id_literal("\"(rules|cost|heads|ranks)\\.[a-z_]+\"");
  for (const char* folder : {"cpp/src", "cpp/cli"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(ATTNPROF_SOURCE_DIR) / folder)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = read_source(std::filesystem::relative(entry.path(), ATTNPROF_SOURCE_DIR));
      EXPECT_FALSE(std::regex_search(text, id_literal)) << entry.path();
    }
  const std::string schema = read_source("docs/report-schema.md");
  for (const FindingWord& w : kFindingWords) {
    EXPECT_NE(schema.find("| `" + std::string(w.id) + "` | " + std::string(w.stage) + " | " + std::string(w.what) + " |"),
              std::string::npos)
        << w.id << ": docs/report-schema.md, \"Finding ids\", lacks its row";
  }
}

// Source files of cpp/src (every stage) whose text matches `pattern`, by path under cpp/src.
std::set<std::string> sources_matching(const std::regex& pattern) {
  std::set<std::string> out;
  const std::filesystem::path root = std::filesystem::path(ATTNPROF_SOURCE_DIR) / "cpp/src";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string text = read_source(std::filesystem::relative(entry.path(), ATTNPROF_SOURCE_DIR));
    if (std::regex_search(text, pattern)) out.insert(std::filesystem::relative(entry.path(), root).string());
  }
  return out;
}

TEST(TextVocabulary, OneFunctionSpellsAShapeAndOneListsAnExplanation) {
  // The HTML view and the annotated trace each had their own shape and explanation text; the
  // scaling advice keyed shapes as "B=.. Hq=.. Hkv=..", and diff spelled a backend change's
  // explanation its own way.
  using Files = std::set<std::string>;
  EXPECT_EQ(sources_matching(std::regex(R"(std::string shape_text\(const Shape&)")), Files{"report/call_facts.cpp"});
  // A format string that prints a head count ("H{}", "Hq={}") spells a shape.
  EXPECT_EQ(sources_matching(std::regex(R"("[^"\n]*\bHq?=?\{\})")), Files{"report/call_facts.cpp"});
  EXPECT_EQ(sources_matching(std::regex(R"(not eligible: )")), Files{"report/call_facts.cpp"});
}

TEST(TextVocabulary, TheAnnotatedTraceAndTheDashboardSpellAShapeAsTheTextReportDoes) {
  Shape mla{.B = 2, .Hq = 16, .Hkv = 16, .Sq = 1024, .Skv = 1024, .D = 192, .Dv = 128, .dtype = "bf16"};
  EXPECT_EQ(shape_text(mla), "B2 H16 S1024x1024 D192 Dv128 bf16");
  Shape gqa{.B = 4, .Hq = 32, .Hkv = 8, .Sq = 2048, .Skv = 2048, .D = 128, .Dv = 128, .dtype = "bf16"};
  EXPECT_EQ(shape_text(gqa), "B4 H32/8 S2048x2048 D128 bf16");
}

TEST(KernelNameVocabulary, OnlyKernelNamesStripsAKernelName) {
  // render_common.cpp once cut names at '<' or '(' with its own "(anonymous namespace)" rule;
  // the catalog and the outputs now share kernel_function_name (kernel_names.h).
  EXPECT_EQ(sources_matching(std::regex(R"(\(anonymous namespace\))")), std::set<std::string>{"report/kernel_names.cpp"});
  EXPECT_EQ(short_kernel_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, int)"),
            "at::native::(anonymous namespace)::cunn_SoftMaxForward");
}

TEST(TextVocabulary, OnlyTextFormatSpellsAUnitOrEscapesMarkup) {
  // Markdown had three escapers (markdown.cpp, cost_render.cpp, diff's verdict_render.cpp) and
  // bytes and times four formatters (text.cpp, render_common.cpp, cost_render.cpp, diff_format.h)
  // that disagreed on units and on which characters to escape.
  using Files = std::set<std::string>;
  const Files one{"vocab/text_format.cpp"};
  // A number formatted straight into a unit ("{:.1f} us", "{} MiB") or a percentage ("{:.0f}%"):
  // nowhere, since text_format.cpp's units are a table (quantity_spellings) the dashboard reads too.
  EXPECT_EQ(sources_matching(std::regex(R"(\{[^}"]*\} ?(ns|us|ms|KiB|MiB|GiB|TiB|MB|TFLOP/s)\b|\{:\.[0-9]+f\}%)")), Files{});
  // Nor a ratio ("{:.2f}x", "~{:.1f}x"): ratio_text / estimated_ratio_text spell it.
  EXPECT_EQ(sources_matching(std::regex(R"(\{:\.[0-9]+f\}x\b)")), Files{});
  // That table's rows ({" KiB", 1024.0, ...}) are in one file.
  EXPECT_EQ(sources_matching(std::regex(R"re(\{" (ns|KiB|MFLOP/s)", )re")), one);
  // The dashboard's script had fmtUs, fmtBytes, pct, fmtTflops and inline toFixed(1) + ' us':
  // now only format.js turns a number into text, and no script appends a unit to a number.
  Files scripts;
  for (const std::string& file : sources_matching(std::regex(
           R"re(\.(toFixed|toPrecision|toLocaleString)\(|'(%| (B|KiB|MiB|GiB|TiB|ns|us|ms|s|h|\\u00b5s|[MGTP]?FLOP(/s)?)|x|\\u00d7)')re")))
    if (file.ends_with(".js")) scripts.insert(file);
  EXPECT_EQ(scripts, Files{"render/dashboard/format.js"});
  // An escaper: a switch over the characters that break a Markdown cell or HTML.
  EXPECT_EQ(sources_matching(std::regex(R"(case '\|'|"&amp;")")), one);
}

TEST(Utf8Vocabulary, SequencesFollowRfc3629AndOnlyOneSourceDecidesIt) {
  EXPECT_EQ(utf8_sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8_sequence_length("\xC3\xA9", 0), 2u);          // U+00E9
  EXPECT_EQ(utf8_sequence_length("\xE2\x82\xAC", 0), 3u);      // U+20AC
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);  // U+1F600
  EXPECT_EQ(utf8_sequence_length("\xC0\x80", 0), 0u);          // overlong NUL
  EXPECT_EQ(utf8_sequence_length("\xE0\x80\xAF", 0), 0u);      // overlong '/'
  EXPECT_EQ(utf8_sequence_length("\xED\xA0\x80", 0), 0u);      // surrogate U+D800
  EXPECT_EQ(utf8_sequence_length("\xF4\x90\x80\x80", 0), 0u);  // U+110000
  EXPECT_EQ(utf8_sequence_length("\xE2\x82", 0), 0u);          // cut off
  EXPECT_EQ(utf8_sequence_length("\x80", 0), 0u);               // lone continuation byte
  EXPECT_EQ(sanitize_utf8("ok\xED\xA0\x80!"), "ok\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD!");
  // ingest/utf8.cpp and the HTML escaper (html_dashboard.cpp) each had a decoder of their own.
  EXPECT_EQ(sources_matching(std::regex(R"(0xC0\)\s*[!=]=\s*0x80)")), std::set<std::string>{"vocab/utf8.cpp"});
}

TEST(ForcedBackendVocabulary, TheScaleCommandAndTheSweepShareTheMarkerWithoutSpellingIt) {
  for (const char* file : {"cpp/src/analysis/scaling_analysis.cpp", "cpp/cli/cmd_scale.cpp", "python/attnprof/sweep.py"})
    EXPECT_EQ(read_source(file).find("_force_"), std::string::npos) << file;
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

// The contents of the string literals of a C++ source: comments are skipped, a raw string
// is one literal, a character literal none (a ' after a digit separates digits).
std::vector<std::string> string_literals(std::string_view t) {
  std::vector<std::string> out;
  const auto past = [&](std::string_view end, size_t from) {
    const size_t at = t.find(end, from);
    return at == std::string_view::npos ? t.size() : at + end.size();
  };
  size_t i = 0;
  while (i < t.size()) {
    const bool word_before = i > 0 && (std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_');
    if (t.substr(i, 2) == "//") {
      i = past("\n", i);
    } else if (t.substr(i, 2) == "/*") {
      i = past("*/", i + 2);
    } else if (t.substr(i, 2) == "R\"" && !word_before) {
      const size_t open = t.find('(', i);
      const std::string close = ")" + std::string(t.substr(i + 2, open - i - 2)) + "\"";
      const size_t end = t.find(close, open);
      out.emplace_back(t.substr(open + 1, end - open - 1));
      i = end + close.size();
    } else if (t[i] == '"' || (t[i] == '\'' && !word_before)) {
      const char quote = t[i];
      size_t j = i + 1;
      while (j < t.size() && t[j] != quote) j += t[j] == '\\' ? 2 : 1;
      if (quote == '"') out.emplace_back(t.substr(i + 1, j - i - 1));
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

TEST(OneSpelling, TheLiteralScannerSkipsCommentsAndCharactersAndKeepsRawStrings) {
  const auto found = string_literals("a = \"x\"; // \"comment\"\n/* \"block\" */ c = '\"'; n = 1'000; r = R\"d(\"y\")d\";");
  EXPECT_EQ(found, (std::vector<std::string>{"x", "\"y\""}));
}

// The words each spelled once, in vocabulary.h: backends, mask kinds and patterns, directions
// and phases. "none", "unknown" and "full" are left out: they are also plain words of other
// fields (a roofline verdict, a window source, an extent).
std::set<std::string> vocabulary_words() {
  std::set<std::string> words;
  for (const BackendWord& w : kBackendWords) words.emplace(w.name);
  for (const MaskWord& w : kMaskKindWords) words.emplace(w.name);
  for (const MaskWord& w : kMaskPatternWords) words.emplace(w.name);
  for (std::string_view w : kDirections) words.emplace(w);
  for (std::string_view w : kPhases) words.emplace(w);
  for (const char* generic : {mask_kind::kNone, mask_kind::kUnknown, mask_pattern::kUnknown, mask_pattern::kFull})
    words.erase(generic);
  return words;
}

// Literals equal to a vocabulary word that mean something else, by file under the source root.
struct AllowedSpelling {
  std::string_view file;
  std::string_view word;
  std::string_view why;
};

constexpr AllowedSpelling kAllowed[] = {
    {"cpp/src/analysis/model_configs.cpp", "sliding_window", "the key of a model's config.json"},
    {"cpp/src/analysis/predict_analysis.cpp", "eager", "transformers' attn_implementation (--attn eager|sdpa)"},
    {"cpp/src/attention/attention_candidates.cpp", "backward", "a word of autograd op names"},
    {"cpp/src/attention/call_flops.cpp", "xformers", "the kernel catalog's library column"},
    {"cpp/src/attention/call_flops.cpp", "block", "a FLOP count's granularity"},
    {"cpp/src/attention/kernel_catalog.cpp", "cudnn", "the library column"},
    {"cpp/src/attention/kernel_catalog.cpp", "xformers", "the library column"},
    {"cpp/src/attention/kernel_catalog.cpp", "flash", "a word that marks a name as attention"},
    {"cpp/src/attention/kernel_template.cpp", "causal", "a label of a kernel's template name"},
    {"cpp/src/fleet/file_names.cpp", "prefill", "a word of a disaggregated server's trace file name"},
    {"cpp/src/fleet/file_names.cpp", "decode", "a word of a disaggregated server's trace file name"},
    {"cpp/src/fleet/plan_fleet.cpp", "prefill", "the stage of those file names"},
    {"cpp/src/heads/safetensors_reader.cpp", "causal", "a metadata key of the heads file (docs/heads.md)"},
    {"cpp/src/heads/safetensors_reader.cpp", "sliding_window", "a metadata key of the heads file"},
    {"cpp/src/pipeline/analyze.cpp", "cudnn", "the key of a library version (SourceInfo::versions)"},
    {"cpp/src/rules/explain.cpp", "cudnn", "the key of a library version"},
    {"cpp/src/rules/explain_input.cpp", "causal", "a key of `explain --inputs` rows"},
    {"cpp/src/pipeline/kernels_file.cpp", "causal", "a key of an op's args in a --kernels file (docs/cost.md)"},
    {"cpp/src/render/cost_tables.cpp", "mixed", "the roofline verdict of calls that disagree"},
    {"cpp/bindings/heads.cpp", "causal", "a Python attribute name"},
    {"cpp/bindings/explain.cpp", "causal", "a keyword of attnprof.explain/matrix"},
    {"cpp/bindings/explain.cpp", "cudnn", "a keyword of attnprof.explain/matrix (the cuDNN version)"},
    {"cpp/src/render/csv_format.cpp", "causal", "a column name of the calls CSV"},
};

bool allowed(const std::string& file, const std::string& word) {
  for (const AllowedSpelling& a : kAllowed)
    if (a.file == file && a.word == word) return true;
  return false;
}

// The former second spellings (mask kinds in the capture and the rules, mask patterns in heads,
// cost and FLOPs, directions, phases, the library backends in explain.cpp, the gain table's
// backends) are lookups now; a new one fails here. Python's copies: tests/test_vocabulary.py.
TEST(OneSpelling, NoSourceSpellsAVocabularyWordOutsideTheVocabulary) {
  const std::set<std::string> words = vocabulary_words();
  ASSERT_TRUE(words.count(backend::kFlash) && words.count(mask_pattern::kSlidingWindow) && words.count(phase::kDecode));
  std::set<std::pair<std::string, std::string>> seen;
  for (const char* folder : {"cpp/src", "cpp/bindings"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(ATTNPROF_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string file = std::filesystem::relative(entry.path(), ATTNPROF_SOURCE_DIR).string();
      for (const std::string& literal : string_literals(read_source(file))) {
        if (!words.count(literal)) continue;
        seen.emplace(file, literal);
        EXPECT_TRUE(allowed(file, literal)) << file << " spells \"" << literal
                                            << "\": use its vocabulary.h constant";
      }
    }
  for (const AllowedSpelling& a : kAllowed)
    EXPECT_TRUE(seen.count({std::string(a.file), std::string(a.word)})) << a.file << " no longer spells " << a.word
                                                                          << ": drop it from kAllowed";
}

}  // namespace
}  // namespace attnprof
