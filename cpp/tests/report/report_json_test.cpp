#include <gtest/gtest.h>

#include "attnprof/report_json.h"

namespace attnprof {
namespace {

TEST(ReportJson, RoundTripKeepsCallsAndOptionalSections) {
  Report r;
  r.source.files = {"a.json"};
  Call c;
  c.id = 0;
  c.layer = 3;
  c.backend = backend::kCudnn;
  c.fused = true;
  c.shape = Shape{4, 32, 8, 2048, 2048, 128, 128, "bf16"};
  c.kernels.push_back(KernelRef{"k<int>", component::kFused, 10, 12.5, 7, 99});
  Explanation e;
  e.predicted_backend = "cudnn";
  e.backends.push_back(BackendVerdict{"flash", false, {RuleCheck{"flash.x", "msg", "v", "fix"}}});
  c.explanation = e;
  r.calls.push_back(c);
  r.scaling = ScalingSection{};
  r.scaling->memory_budget_bytes = 24;

  auto back = report_from_json(report_to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->calls.size(), 1u);
  EXPECT_EQ(back->calls[0].layer, 3);
  EXPECT_EQ(back->calls[0].shape.Hkv, 8);
  EXPECT_EQ(back->calls[0].kernels[0].name, "k<int>");
  ASSERT_TRUE(back->calls[0].explanation.has_value());
  EXPECT_EQ(back->calls[0].explanation->backends[0].failed[0].rule, "flash.x");
  EXPECT_FALSE(back->calls[0].cost.has_value());
  ASSERT_TRUE(back->scaling.has_value());
  EXPECT_EQ(back->scaling->memory_budget_bytes, 24);
  EXPECT_FALSE(back->heads.has_value());
}

TEST(ReportJson, RejectsTextThatIsNotAReport) {
  EXPECT_FALSE(report_from_json("{\"traceEvents\": []}").ok());
  EXPECT_FALSE(report_from_json("{nope").ok());
  EXPECT_EQ(report_from_json("{nope").error().code, ErrorCode::kMalformedJson);
}

TEST(ReportJson, RejectsAnotherMajorSchemaVersion) {
  auto r = report_from_json("{\"schema_version\": \"9.0\", \"calls\": []}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kUnsupported);
}

TEST(ReportJson, InvalidUtf8InKernelNamesIsReplacedNotThrown) {
  Report r;
  Call c;
  c.kernels.push_back(KernelRef{std::string("bad\xff\xfe name"), component::kFused});
  r.calls.push_back(c);
  const std::string text = report_to_json(r);
  EXPECT_NE(text.find("bad"), std::string::npos);
  EXPECT_TRUE(report_from_json(text).ok());
}

}  // namespace
}  // namespace attnprof

namespace attnprof {
namespace {

TEST(ReportJson, WrittenReportsAreRecognisedAndTracesAreNot) {
  Report r;
  r.calls.push_back(Call{});
  EXPECT_TRUE(looks_like_report(report_to_json(r)));
  EXPECT_TRUE(looks_like_report(report_to_json(r, /*pretty=*/false)));
  EXPECT_FALSE(looks_like_report("{\"schemaVersion\": 1, \"traceEvents\": []}"));
  EXPECT_FALSE(looks_like_report("{\"schema_version\": \"1.0\", \"traceEvents\": []}"));
}

}  // namespace
}  // namespace attnprof
