// The files a user hands `analyze` (docs/cost.md): --kernels adds kernel and op names to the
// catalogs without a rebuild, --gpu-spec replaces the datasheet ceilings; both JSON or TOML,
// both checked field by field with one-line errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnprof/analyze.h"
#include "attnprof/io.h"
#include "cli_contract.h"

namespace attnprof::test {
namespace {

namespace fs = std::filesystem;

// The MI300X torch.compile trace: one aten::_scaled_dot_product_flash_attention over
// aten::_flash_attention_forward, q/k/v [8, 16, 4096, 128] bf16, not causal, AOTriton's attn_fwd.
std::string compiled_flash_trace() { return std::string(ATTNPROF_FIXTURES_DIR) + "/tracelens/torch_compile_triton_trace.json.gz"; }

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  size_t at = 0;
  int replaced = 0;
  while ((at = text.find(from, at)) != std::string::npos) {
    text.replace(at, from.size(), to);
    at += to.size();
    ++replaced;
  }
  ASSERT_GT(replaced, 0) << from;
}

// The fixture with its attention ops and kernel renamed to names no built-in catalog entry
// matches and that carry no attention vocabulary: what a custom library's trace looks like.
class CustomKernelTrace : public attnprof::testing::CliContractTest {
 protected:
  std::string renamed_trace() {
    auto text = read_text_file(compiled_flash_trace());
    EXPECT_TRUE(text.ok());
    if (!text.ok()) return "";
    std::string t = *text;
    replace_all(t, "\"aten::_scaled_dot_product_flash_attention\"", "\"acme::dot_product_fwd\"");
    replace_all(t, "\"aten::_flash_attention_forward\"", "\"acme::dot_product_impl\"");
    replace_all(t, "\"attn_fwd\"", "\"acme_dot_product_kernel\"");
    return write("custom.json", t);
  }
};

constexpr const char* kKernelsJson = R"({
  "kernels": [{"pattern": "acme_dot_product", "match": "prefix", "library": "acme_kernels", "vendor": "amd",
               "backend": "external", "direction": "forward"}],
  "ops": [{"name": "acme::dot_product_fwd", "library": "acme", "layout": "BHSD",
           "args": {"query": 0, "key": 1, "value": 2, "dropout": 3, "causal": 4, "scale": 6}}]
})";

constexpr const char* kKernelsToml = R"(
[[kernels]]
pattern = "acme_dot_product"
match = "prefix"
library = "acme_kernels"
vendor = "amd"
backend = "external"
direction = "forward"

[[ops]]
name = "acme::dot_product_fwd"
library = "acme"
layout = "BHSD"
args = { query = 0, key = 1, value = 2, dropout = 3, causal = 4, scale = 6 }
)";

void expect_the_custom_call(const Report& r) {
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls.front();
  EXPECT_EQ(c.op, "acme::dot_product_fwd");
  EXPECT_EQ(c.backend, "external");
  EXPECT_EQ(c.library, "acme_kernels");  // the main kernel's library names the call's
  EXPECT_EQ(c.direction, "forward");
  EXPECT_TRUE(c.fused);
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels.front().name, "acme_dot_product_kernel");
  EXPECT_EQ(c.kernels.front().component, "fused");
  EXPECT_EQ(c.shape.B, 8);
  EXPECT_EQ(c.shape.Hq, 16);
  EXPECT_EQ(c.shape.Sq, 4096);
  EXPECT_EQ(c.shape.Skv, 4096);
  EXPECT_EQ(c.shape.D, 128);
  EXPECT_FALSE(c.causal);  // Concrete Inputs[4] is "False"
  // 2 * B * Hq * (D + Dv) * Sq * Skv, every pair unmasked: useful = executed.
  const double flops = 2.0 * 8 * 16 * (128 + 128) * 4096.0 * 4096.0;
  EXPECT_DOUBLE_EQ(c.flops_useful, flops);
  EXPECT_DOUBLE_EQ(c.flops_executed, flops);
  EXPECT_DOUBLE_EQ(c.device_time_us, 3683.509);  // the kernel's recorded duration
}

TEST_F(CustomKernelTrace, RenamedKernelAndOpAreNoCallWithoutTheFileAndACostedCallWithIt) {
  const std::string trace = renamed_trace();
  auto without = analyze_file(trace);
  ASSERT_TRUE(without.ok()) << without.error().message;
  EXPECT_TRUE(without->calls.empty());

  auto kernels = parse_catalog_extension(kKernelsJson, "acme.json");
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  AnalyzeOptions options;
  options.kernels = *kernels;
  auto with = analyze_file(trace, options);
  ASSERT_TRUE(with.ok()) << with.error().message;
  expect_the_custom_call(*with);
}

TEST_F(CustomKernelTrace, TheSameEntriesInTomlGiveTheSameCall) {
  auto kernels = parse_catalog_extension(kKernelsToml, "acme.toml");
  ASSERT_TRUE(kernels.ok()) << kernels.error().message;
  AnalyzeOptions options;
  options.kernels = *kernels;
  auto with = analyze_file(renamed_trace(), options);
  ASSERT_TRUE(with.ok()) << with.error().message;
  expect_the_custom_call(*with);
}

TEST_F(CustomKernelTrace, AnalyzeCommandReadsTheKernelsFileAndRejectsABadOneWithOneLine) {
  const std::string trace = renamed_trace();
  const std::string good = write("acme.json", kKernelsJson);
  const attnprof::testing::CliRun ok = run("analyze '" + trace + "' --kernels '" + good + "' --json '" + out() + "'");
  ASSERT_EQ(ok.exit_code, 0) << ok.stderr_text;
  auto report = read_text_file(out());
  ASSERT_TRUE(report.ok());
  EXPECT_NE(report->find("\"acme::dot_product_fwd\""), std::string::npos);
  fs::remove(out());

  const std::string bad_match = write("bad.json", R"({"kernels": [{"pattern": "x", "library": "y", "match": "glob"}]})");
  expect_bad_input("analyze '" + trace + "' --kernels '" + bad_match + "' --json '" + out() + "'",
                   {"bad.json", "kernels[0].match", "glob"});
  const std::string no_shape = write("bad.toml", "[[ops]]\nname = \"acme::f\"\nlayout = \"BHSD\"\nargs = { query = 0 }\n");
  expect_bad_input("analyze '" + trace + "' --kernels '" + no_shape + "' --json '" + out() + "'",
                   {"bad.toml", "ops[0].args.key", "required"});
}

TEST(KernelsFile, EachBadFieldIsOneLineNamingTheFileAndTheField) {
  struct Case {
    const char* text;
    const char* field;
  };
  const Case cases[] = {
      {R"({"kernels": [{"library": "y"}]})", "kernels[0].pattern is required"},
      {R"({"kernels": [{"pattern": "x", "library": "y", "kind": "magic"}]})", "kernels[0].kind must be one of"},
      {R"({"kernels": [{"pattern": "x", "library": "y", "backend": "warp"}]})", "kernels[0].backend must be one of"},
      {R"({"kernels": [{"pattern": "x", "library": "y", "priority": -1}]})", "kernels[0].priority must be an integer"},
      {R"({"kernels": [{"pattern": "x", "library": "y", "colour": "red"}]})", "kernels[0].colour is not a field"},
      {R"({"kernels": [{"pattern": "x", "library": "y", "kind": "gemm", "backend": "flash"}]})",
       "kernels[0].backend is for kind fused_attention only"},
      {R"({"ops": [{"name": "f", "args": {"query": 0, "key": 1, "value": 2}}]})", "ops[0].layout is required"},
      {R"({"ops": [{"name": "f", "layout": "BHSD", "args": {"query": 0, "key": 1, "value": 200}}]})",
       "ops[0].args.value must be an integer from 0 to 127"},
      {R"({"ops": [{"name": "f", "layout": "BHSD", "fused": "yes", "args": {"query": 0, "key": 1, "value": 2}}]})",
       "ops[0].fused must be true or false"},
      {R"({"kernels": []})", "has no kernels and no ops"},
      {R"({"kernel": []})", "unknown field \"kernel\""},
  };
  for (const Case& c : cases) {
    auto r = parse_catalog_extension(c.text, "k.json");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.field), std::string::npos) << r.error().message;
    EXPECT_TRUE(r.error().message.starts_with("k.json: ")) << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << r.error().message;
  }
}

TEST(KernelsFile, AUserKernelEntryOutranksABuiltInOneOfNoHigherPriorityAndAUserOpWins) {
  // "attn_fwd" is AOTriton's (priority 30): a user entry of the default priority takes it,
  // one of priority 20 does not.
  auto over = parse_catalog_extension(R"({"kernels": [{"pattern": "attn_fwd", "match": "exact", "library": "mine"}]})", "a.json");
  ASSERT_TRUE(over.ok()) << over.error().message;
  EXPECT_EQ(classify_kernel("attn_fwd", &*over)->library, "mine");
  EXPECT_EQ(classify_kernel("attn_fwd")->library, "aotriton");
  auto under = parse_catalog_extension(
      R"({"kernels": [{"pattern": "attn_fwd", "match": "exact", "library": "mine", "priority": 20}]})", "b.json");
  ASSERT_TRUE(under.ok()) << under.error().message;
  EXPECT_EQ(classify_kernel("attn_fwd", &*under)->library, "aotriton");
  // A user op named like a built-in one replaces it; the copy of an extension keeps its names.
  auto op = parse_catalog_extension(
      R"({"ops": [{"name": "flash_attn::_flash_attn_forward", "library": "patched", "layout": "BSHD",
                   "args": {"query": 0, "key": 1, "value": 2}}]})", "c.json");
  ASSERT_TRUE(op.ok()) << op.error().message;
  const CatalogExtension copy = *op;
  EXPECT_EQ(classify_attention_op("flash_attn::_flash_attn_forward", &copy)->library, "patched");
  EXPECT_EQ(classify_attention_op("flash_attn::_flash_attn_forward")->library, "aiter");  // the built-in entry
}

// ---- --gpu-spec: JSON and TOML -----------------------------------------------------------

TEST(GpuSpecFile, JsonAndTomlGiveTheSameCeilings) {
  auto json = parse_measured_peaks(R"({"name": "h200-lab", "bandwidth_gbs": 4100.5, "tflops": {"bf16": 640, "fp8": 1200}})",
                                   "spec.json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  auto toml = parse_measured_peaks("name = \"h200-lab\"\nbandwidth_gbs = 4100.5\n[tflops]\nbf16 = 640\nfp8 = 1200\n",
                                   "spec.toml");
  ASSERT_TRUE(toml.ok()) << toml.error().message;
  for (const MeasuredPeaks* p : {&*json, &*toml}) {
    EXPECT_EQ(p->name, "h200-lab");
    EXPECT_DOUBLE_EQ(p->bandwidth_gbs, 4100.5);
    EXPECT_DOUBLE_EQ(p->bf16_tflops, 640);
    EXPECT_DOUBLE_EQ(p->fp8_tflops, 1200);
    EXPECT_LE(p->fp16_tflops, 0);  // not given: the datasheet's stays
  }
  EXPECT_EQ(toml->file, "spec.toml");
}

TEST(GpuSpecFile, ABadValueInEitherFormatIsOneLineNamingTheFileAndTheField) {
  auto json = parse_measured_peaks(R"({"bandwidth_gbs": -3})", "spec.json");
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.error().message, "spec.json: bandwidth_gbs must be a positive number, got -3");
  auto toml = parse_measured_peaks("[tflops]\nbf16 = \"fast\"\n", "spec.toml");
  ASSERT_FALSE(toml.ok());
  EXPECT_EQ(toml.error().message, "spec.toml: tflops.bf16 must be a positive number, got \"fast\"");
  auto unknown = parse_measured_peaks("[tflops]\nint4 = 9000\n", "spec.toml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown dtype \"int4\""), std::string::npos) << unknown.error().message;
  auto syntax = parse_measured_peaks("bandwidth_gbs = = 3\n", "spec.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_TRUE(syntax.error().message.starts_with("spec.toml: not valid TOML: ")) << syntax.error().message;
  EXPECT_NE(syntax.error().message.find("(line 1, column"), std::string::npos) << syntax.error().message;
  EXPECT_EQ(syntax.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace attnprof::test
