#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/compare.h"
#include "attnprof/dashboard.h"
#include "attnprof/ingest.h"
#include "attnprof/utf8.h"
#include "render/html_view.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

using nlohmann::json;

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The JSON data block of a rendered page, parsed back.
json embedded_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"attnprof-data\">";
  const size_t begin = page.find(open) + open.size();
  const size_t end = page.find("</script>", begin);
  return json::parse(page.substr(begin, end - begin));
}

Report hostile_report() {
  Report r;
  r.source.files = {"/tmp/<i>trace\"'.json"};
  Call c = testing::eager_call(0, 0, "model.layers.0.<img src=x onerror=document.title='pwned'>");
  c.kernels[0].name = "</script><script>document.title='pwned'</script>";
  c.kernels[1].name = std::string("bad\xff\xfe utf8 \xc0\xaf overlong");
  r.calls.push_back(c);
  return r;
}

TEST(HtmlDashboard, HostileNamesCannotCloseTheDataScriptOrAddMarkup) {
  const std::string page = render_html({hostile_report()});
  // Only our two scripts exist: the JSON data block and the nonce'd code.
  EXPECT_EQ(count(page, "<script"), 2u);
  EXPECT_EQ(count(page, "</script>"), 2u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<i>trace"), std::string::npos);
  EXPECT_NE(page.find("<title>attnprof \u2014 &lt;i&gt;trace&quot;&#39;.json</title>"), std::string::npos)
      << "title is escaped";
  // The names survive, as data.
  const json data = embedded_data(page);
  const json& kernels = data["runs"][0]["calls"][0]["kernels"];
  EXPECT_EQ(kernels[0]["name"], "</script><script>document.title='pwned'</script>");
  EXPECT_EQ(kernels[1]["name"], "bad\xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD\xEF\xBF\xBD overlong");
}

TEST(HtmlDashboard, PageIsValidUtf8EvenWhenNamesAreNot) {
  const std::string page = render_html({hostile_report()});
  EXPECT_EQ(sanitize_utf8(page), page);
}

TEST(HtmlDashboard, ScriptIsGuardedByAContentSecurityPolicyNonce) {
  const std::string page = render_html({hostile_report()});
  const size_t at = page.find("script-src 'nonce-");
  ASSERT_NE(at, std::string::npos);
  const std::string nonce = page.substr(at + 18, 24);
  EXPECT_NE(page.find("<script nonce=\"" + nonce + "\">"), std::string::npos);
  EXPECT_EQ(page.find("script-src 'unsafe-inline'"), std::string::npos);
}

TEST(HtmlView, ActivationMapHasOneCellPerLayerAndComponent) {
  auto trace = load_trace(testing::fixture(testing::kCudnnTrace));
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 4);
  ASSERT_EQ(r.calls.size(), 4u) << "the cuDNN trace has one cuDNN attention kernel per layer";
  r.calls.push_back(testing::eager_call(4, 4, "model.layers.4.self_attn"));
  r.layers = build_layers(r.calls);  // the map's rows are the Report's layers
  const json view = render::run_view(r, "run");
  ASSERT_EQ(view["map"].size(), 5u);
  for (const json& row : view["map"]) {
    ASSERT_EQ(row["cells"].size(), activation_map_components().size());
    for (size_t j = 0; j < row["cells"].size(); ++j)
      EXPECT_EQ(row["cells"][j]["component"], activation_map_components()[j]);
  }
  // Layer 0: the fused cuDNN kernel only.
  EXPECT_EQ(view["map"][0]["cells"][5]["cls"], "fused");
  EXPECT_EQ(view["map"][0]["cells"][5]["kernels"][0]["name"], r.calls[0].kernels[0].name);
  EXPECT_EQ(view["map"][0]["cells"][0]["cls"], "absent");
  // Layer 4 (eager): qk, softmax, av present; mask, dropout, fused absent.
  const json& eager = view["map"][4]["cells"];
  EXPECT_EQ(eager[0]["cls"], "eager");
  EXPECT_EQ(eager[1]["cls"], "absent");
  EXPECT_EQ(eager[2]["cls"], "eager");
  EXPECT_DOUBLE_EQ(eager[2]["us"].get<double>(), 25.0);
  EXPECT_EQ(eager[4]["cls"], "eager");
  EXPECT_EQ(eager[5]["cls"], "absent");
}

TEST(HtmlView, BackendClassSeparatesFusedFallbackAndEager) {
  Call c;
  c.backend = backend::kMath;
  EXPECT_STREQ(backend_class_of(c), backend_class::kFallback);
  c.backend = backend::kEager;
  EXPECT_STREQ(backend_class_of(c), backend_class::kEager);
  c.backend = backend::kFlash;
  c.fused = true;
  EXPECT_STREQ(backend_class_of(c), backend_class::kFused);
}

TEST(HtmlView, ModuleTreeHoldsEveryPrefixInNumericOrderWithTimeShares) {
  Report r;
  r.calls.push_back(testing::eager_call(0, 0, "model.layers.10.self_attn"));
  r.calls.push_back(testing::eager_call(1, 1, "model.layers.2.self_attn"));
  r.calls[1].device_time_us = 300;
  const json tree = render::run_view(r, "run")["tree"];
  std::vector<std::string> paths;
  for (const json& n : tree) paths.push_back(n["path"]);
  EXPECT_EQ(paths, (std::vector<std::string>{"model", "model.layers", "model.layers.2", "model.layers.2.self_attn",
                                              "model.layers.10", "model.layers.10.self_attn"}));
  EXPECT_DOUBLE_EQ(tree[0]["share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(tree[3]["share"].get<double>(), 0.75);  // 300 of 400 us
  EXPECT_TRUE(tree[3]["attention"].get<bool>());
  EXPECT_FALSE(tree[2]["attention"].get<bool>());
  EXPECT_EQ(tree[3]["cls"], "eager");
}

TEST(HtmlView, OptionalSectionsAppearOnlyWithTheirData) {
  Report r;
  r.calls.push_back(testing::eager_call(0, 0, "m.attn"));
  json view = render::run_view(r, "run");
  for (const char* key : {"roofline_calls", "memory", "scaling", "heads", "advice", "ranks", "whatif"}) {
    EXPECT_TRUE(view[key].is_null()) << key;
    EXPECT_TRUE(view["why"].contains(key == std::string("roofline_calls") ? "roofline" : key)) << key;
  }
  Layer l;
  l.index = 0;
  l.call_ids = {0};
  l.cost = LayerCost{};
  l.cost->achieved_tflops = 100;
  l.cost->peak_fraction = 0.1;
  l.cost->peak_bytes = 1 << 20;
  r.layers.push_back(l);
  r.scaling = ScalingSection{};
  r.scaling->memory_budget_bytes = 80LL << 30;
  ScalingSeries s;
  s.backend = "eager";
  s.lengths = {512, 1024};
  s.time_us = {10, 40};
  s.peak_bytes = {1 << 20, 4 << 20};
  s.oom_threshold_tokens = 65536;
  r.scaling->series.push_back(s);
  r.heads = HeadsSection{};
  HeadStats h;
  h.layer = 1;
  h.head = 3;
  h.entropy = 0.5;
  r.heads->heads.push_back(h);
  view = render::run_view(r, "run");
  EXPECT_TRUE(view["roofline_calls"].is_null()) << "a CPU run has no GPU roofline";
  for (const char* key : {"memory", "scaling", "heads"}) EXPECT_FALSE(view["why"].contains(key)) << key;
  EXPECT_EQ(view["memory"][0]["peak_bytes"], 1 << 20);
  EXPECT_EQ(view["scaling"]["series"][0]["oom_tokens"], 65536);
  EXPECT_EQ(view["heads"]["layers"], 2);
  EXPECT_EQ(view["heads"]["heads"], 4);
  EXPECT_EQ(view["summary"]["peak_bytes"], 1 << 20);
}

TEST(HtmlDashboard, SeveralReportsAddAComparisonAgainstTheFirst) {
  Report a, b;
  a.calls.push_back(testing::eager_call(0, 0, "m.attn"));
  b.calls.push_back(testing::eager_call(0, 0, "m.attn"));
  b.calls[0].backend = backend::kFlash;
  b.calls[0].fused = true;
  a.layers = build_layers(a.calls);  // the comparison's rows are the Reports' layers
  b.layers = build_layers(b.calls);
  std::vector<Report> runs{a, b};
  compare_with_first(runs);  // the classes and ratios are the later run's diff section
  const json data = embedded_data(render_html(runs, {"before", "after"}));
  ASSERT_EQ(data["runs"].size(), 2u);
  const json& cmp = data["comparison"]["runs"];
  EXPECT_EQ(cmp[0]["label"], "before");
  EXPECT_EQ(cmp[0]["layers"][0]["cls"], "eager");
  EXPECT_EQ(cmp[1]["layers"][0]["cls"], "fused");
  EXPECT_FALSE(embedded_data(render_html({a})).contains("comparison"));
}

// The multi-run view judges each run against the first as `attnprof diff` does: on the real
// eager and cuDNN runs of the same model, every layer's class, class change, better/worse mark
// and ratio are compare_reports' own, and cuDNN is the faster one in every layer.
TEST(HtmlDashboard, TheMultiRunViewJudgesEachRunAgainstTheFirstAsDiffDoes) {
  auto eager = analyze_file(testing::fixture("h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s2048.pt.trace.json.gz"), {});
  auto cudnn = analyze_file(testing::fixture(testing::kCudnnTrace), {});
  ASSERT_TRUE(eager.ok() && cudnn.ok());
  std::vector<Report> runs{*eager, *cudnn};
  compare_with_first(runs);
  const json cmp = embedded_data(render_html(runs, {"eager", "sdpa"}))["comparison"];
  const DiffVerdict verdict = compare_reports(DiffSide{"eager", {*eager}}, DiffSide{"sdpa", {*cudnn}}, {});
  ASSERT_EQ(cmp["layers"].size(), 4u);
  for (size_t li = 0; li < cmp["layers"].size(); ++li) {
    const int64_t layer = cmp["layers"][li].get<int64_t>();
    const auto d = std::find_if(verdict.layers.begin(), verdict.layers.end(),
                                [&](const LayerDelta& l) { return l.layer == layer; });
    ASSERT_NE(d, verdict.layers.end()) << layer;
    const json& before = cmp["runs"][0]["layers"][li];
    const json& after = cmp["runs"][1]["layers"][li];
    EXPECT_EQ(before["cls"], d->class_before);
    EXPECT_EQ(after["cls"], d->class_after);
    EXPECT_EQ(d->class_before, backend_class::kEager);
    EXPECT_EQ(d->class_after, backend_class::kFused);
    EXPECT_TRUE(after["changed"].get<bool>());
    EXPECT_TRUE(after["better"].get<bool>()) << "cuDNN is faster than eager attention in layer " << layer;
    EXPECT_DOUBLE_EQ(after["ratio"].get<double>(), d->time_us.after / d->time_us.before);
    EXPECT_LT(after["ratio"].get<double>(), 1.0);
  }
  EXPECT_DOUBLE_EQ(cmp["runs"][1]["ratio"].get<double>(),
                   verdict.attention_time_us.after / verdict.attention_time_us.before);
  EXPECT_DOUBLE_EQ(cmp["runs"][0]["ratio"].get<double>(), 1.0);
}

}  // namespace
}  // namespace attnprof
