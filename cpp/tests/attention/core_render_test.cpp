// Text and Markdown renderings of the core Report.
#include <gtest/gtest.h>

#include <algorithm>

#include "attnprof/render.h"
#include "fixture_util.h"

namespace attnprof::test {
namespace {

Report report_with_hostile_kernel() {
  Report r;
  Call c;
  c.layer = 0;
  c.backend = "eager";
  c.direction = "forward";
  c.module = "Evil|Module<script>alert(1)</script>";
  c.kernels.push_back({"`pwn`|<img src=x onerror=alert(1)>", "qk", 0, 5.0, 7, 1});
  c.device_time_us = 5;
  r.calls.push_back(c);
  Layer l;
  l.index = 0;
  l.module = c.module;
  l.backends = {"eager"};
  l.call_ids = {0};
  r.layers.push_back(l);
  r.summary.call_count = 1;
  return r;
}

TEST(CoreRender, MarkdownEscapesTableBreakersAndHtmlFromTheTrace) {
  const std::string md = render_markdown(report_with_hostile_kernel());
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_EQ(md.find("<img"), std::string::npos);
  EXPECT_NE(md.find("Evil\\|Module&lt;script>"), std::string::npos) << md;
}

TEST(CoreRender, ShortKernelNamesDropReturnTypeTemplatesAndParameters) {
  EXPECT_EQ(short_kernel_name("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>(Params)"),
            "pytorch_flash::flash_fwd_kernel");
  EXPECT_EQ(short_kernel_name("void (anonymous namespace)::softmax_warp_forward<float>(float*)"),
            "(anonymous namespace)::softmax_warp_forward");
  EXPECT_EQ(short_kernel_name("attn_fwd"), "attn_fwd");
}

TEST(CoreRender, ShapeTextShowsGqaHeadsAndLengths) {
  EXPECT_EQ(shape_text({4, 32, 8, 2048, 2048, 128, 128, "bf16"}), "B4 H32/8 S2048x2048 D128 bf16");
  EXPECT_EQ(shape_text({0, 8, 1, 888, 0, 64, 64, "fp8_e4m3"}), "H8/1 T888 D64 fp8_e4m3");
}

TEST(CoreRender, TextOfTheTrainTraceShowsBothDirectionsPerLayer) {
  const std::string text = render_text(analyzed(h200("llama7b4l_sdpa_bf16_b1_s2048_train")));
  EXPECT_NE(text.find("attention: 8 calls, 8 fused (100.0% of calls, 100.0% of time)"), std::string::npos) << text;
  EXPECT_EQ(text.find("Unfused"), std::string::npos);
  EXPECT_NE(text.find("cudnn_generated_fort_native_sdpa_sm90_flash_fprop"), std::string::npos);
}

TEST(CoreRender, EmptyReportSaysNoAttentionFound) {
  Report r;
  r.source.files = {"x.json"};
  EXPECT_NE(render_text(r).find("no attention found"), std::string::npos);
  EXPECT_NE(render_markdown(r).find("no attention found"), std::string::npos);
}

}  // namespace
}  // namespace attnprof::test

namespace attnprof::test {
namespace {

TEST(CoreRender, LayerNamingAMissingCallIsSkippedNotACrash) {
  Report r = report_with_hostile_kernel();
  r.layers.push_back(r.layers.front());
  r.layers.back().index = 1;
  r.layers.back().call_ids = {42};  // as a hand-edited or truncated JSON Report may say
  Layer empty;
  empty.index = 2;
  r.layers.push_back(empty);
  EXPECT_NE(render_text(r).find("Activation map"), std::string::npos);
  EXPECT_NE(render_markdown(r).find("Activation map"), std::string::npos);
}


// SGLang's decode graph capture: all 36 calls have unknown device time. The summary says so
// instead of "0 us", and the FLOPs finding says why they are unknown (no key length recorded).
TEST(CoreRender, GraphCaptureSummaryAndUnknownFlopsAreStatedNotZero) {
  const Report& r = analyzed(fixture("tracelens-inference/sglang_qwen3_8b_decode_graph_capture.json.gz"));
  const std::string text = render_text(r);
  EXPECT_NE(text.find("attention: 36 calls, 36 fused (100.0% of calls, unknown share of time), unknown device time"),
            std::string::npos) << text.substr(0, 600);
  EXPECT_NE(text.find("device time unknown for 36 calls"), std::string::npos);
  const std::string md = render_markdown(r);
  EXPECT_NE(md.find("- attention device time: unknown\n"), std::string::npos);
  EXPECT_NE(md.find("unknown share of time"), std::string::npos);
  const auto f = std::find_if(r.findings.begin(), r.findings.end(),
                              [](const Finding& x) { return x.rule == "flops.key_length_unknown"; });
  ASSERT_NE(f, r.findings.end());
  EXPECT_NE(f->title.find("unknown for 36 calls"), std::string::npos) << f->title;
  EXPECT_NE(text.find("FLOPs and TFLOP/s unknown for 36 calls"), std::string::npos);
}

}  // namespace
}  // namespace attnprof::test
