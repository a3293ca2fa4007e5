// View models of the dashboard sections (html_sections.cpp): roofline, scaling curves, what-if
// buckets, unknown device time, the sections a command asks for.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/attention.h"
#include "attnprof/dashboard.h"
#include "attnprof/hw.h"
#include "render/html_sections.h"
#include "render/html_view.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

using nlohmann::json;

json embedded_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"attnprof-data\">";
  const size_t begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin));
}

// A cuDNN call of the Llama-7B-dims H200 trace (B=4 H=32 S=2048 D=128 bf16, causal), timed.
Call timed_cudnn_call(int64_t id, double us) {
  Call c = testing::eager_call(id, id, "model.layers." + std::to_string(id) + ".self_attn");
  c.backend = backend::kCudnn;
  c.fused = true;
  c.shape = Shape{.B = 4, .Hq = 32, .Hkv = 32, .Sq = 2048, .Skv = 2048, .D = 128, .Dv = 128, .dtype = "bf16"};
  c.flops = c.flops_useful = 2.0 * 4 * 32 * 2048.0 * 2048 * 128;  // 4*B*H*S^2*D halved for the causal mask
  c.flops_executed = 1.05 * c.flops;  // the diagonal tiles run whole
  c.device_time_us = us;
  c.tflops = c.flops / (us * 1e6);
  c.tflops_executed = us > 0 ? c.flops_executed / (us * 1e6) : 0;
  c.cost = CallCost{};
  c.cost->bytes_moved = 4.0 * 4 * 32 * 2048 * 128 * 2;  // Q, K, V, O once, bf16
  c.cost->arithmetic_intensity = c.flops_executed / c.cost->bytes_moved;
  c.cost->bound = "compute";
  return c;
}

Report h200_report() {
  Report r;
  r.source.device_name = "NVIDIA H200";
  r.summary.has_gpu = true;
  r.calls = {timed_cudnn_call(0, 250), timed_cudnn_call(1, 260)};
  return r;
}

TEST(HtmlSections, RooflinePlacesTimedCallsUnderTheSpecTablePeakAndBandwidth) {
  Report r = h200_report();
  r.calls.push_back(timed_cudnn_call(2, 0));
  r.calls[2].device_time_unknown = true;  // graph capture: not on the roofline
  const json roof = render::run_view(r, "run")["roofline_calls"];
  ASSERT_FALSE(roof.is_null());
  ASSERT_EQ(roof["points"].size(), 2u);
  const GpuSpec* h200 = find_gpu_spec("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  ASSERT_EQ(roof["roofs"].size(), 1u);
  const json& bf16 = roof["roofs"][0];
  EXPECT_EQ(bf16["dtype"], "bf16");
  EXPECT_DOUBLE_EQ(bf16["peak_tflops"].get<double>(), peak_tflops(*h200, "bf16"));
  EXPECT_DOUBLE_EQ(bf16["ridge"].get<double>(), peak_tflops(*h200, "bf16") * 1e3 / h200->bandwidth_gbs);
  // A point is executed work per byte at the executed rate, the quantities of the bound verdict.
  EXPECT_DOUBLE_EQ(roof["points"][0]["intensity"].get<double>(), r.calls[0].flops_executed / r.calls[0].cost->bytes_moved);
  EXPECT_DOUBLE_EQ(roof["points"][0]["tflops"].get<double>(), r.calls[0].flops_executed / 250e6);
  EXPECT_DOUBLE_EQ(roof["points"][0]["useful_tflops"].get<double>(), r.calls[0].flops / 250e6);
  EXPECT_EQ(roof["points"][0]["bound"], "compute");
  // The roof starts on the bandwidth slope: y = bandwidth x intensity.
  const double x0 = bf16["points"][0][0], y0 = bf16["points"][0][1];
  EXPECT_DOUBLE_EQ(y0, h200->bandwidth_gbs * x0 / 1e3);
  EXPECT_LT(x0, bf16["ridge"].get<double>());
}

TEST(HtmlSections, RooflineDrawsTheCeilingsTheUserMeasured) {
  Report r = h200_report();
  MeasuredPeaks measured;
  measured.file = "h200-measured.json";
  measured.bandwidth_gbs = 4000;  // below the datasheet's 4800
  measured.bf16_tflops = 700;
  r.source.measured_peaks = measured;
  const json roof = render::run_view(r, "run")["roofline_calls"];
  ASSERT_FALSE(roof.is_null());
  EXPECT_DOUBLE_EQ(roof["bandwidth_gbs"].get<double>(), 4000);
  EXPECT_DOUBLE_EQ(roof["roofs"][0]["peak_tflops"].get<double>(), 700);
  EXPECT_DOUBLE_EQ(roof["roofs"][0]["ridge"].get<double>(), 700 * 1e3 / 4000);
  EXPECT_NE(roof["ceilings"].get<std::string>().find("h200-measured.json"), std::string::npos);
  // An unknown GPU gets a roofline from measured ceilings alone.
  r.source.device_name = "Imaginary Accelerator 9000";
  EXPECT_DOUBLE_EQ(render::run_view(r, "run")["roofline_calls"]["roofs"][0]["peak_tflops"].get<double>(), 700);
}

TEST(HtmlSections, RooflineSaysWhyOnACpuRunAndOnAGpuMissingFromTheTable) {
  Report cpu = h200_report();
  cpu.summary.has_gpu = false;
  json view = render::run_view(cpu, "run");
  EXPECT_TRUE(view["roofline_calls"].is_null());
  EXPECT_EQ(view["why"]["roofline"].get<std::string>().rfind("CPU run", 0), 0u);
  Report unknown_gpu = h200_report();
  unknown_gpu.source.device_name = "Imaginary Accelerator 9000";
  view = render::run_view(unknown_gpu, "run");
  EXPECT_NE(view["why"]["roofline"].get<std::string>().find("Imaginary Accelerator 9000"), std::string::npos);
}

TEST(HtmlSections, FitCurveFollowsTheFitFromTheShortestLengthToTheEnd) {
  FitTerm fit;
  fit.growth = "quadratic";
  fit.c0 = 1e6, fit.c1 = 100, fit.c2 = 2;
  const json curve = render::fit_curve(fit, 512, 8192);
  ASSERT_EQ(curve.size(), 33u);
  EXPECT_DOUBLE_EQ(curve.front()[0].get<double>(), 512);
  EXPECT_NEAR(curve.back()[0].get<double>(), 8192, 1e-6);
  EXPECT_NEAR(curve.back()[1].get<double>(), 1e6 + 100 * 8192.0 + 2 * 8192.0 * 8192, 1e-3);
  EXPECT_TRUE(render::fit_curve(FitTerm{}, 512, 8192).empty()) << "no fit, no curve";
}

TEST(HtmlSections, ScalingCurvesReachThePredictedOomLengthAndTheBudgetIsLessTheBaseline) {
  Report r;
  r.scaling = ScalingSection{};
  r.scaling->memory_budget_bytes = 80LL << 30;
  r.scaling->baseline_bytes = 13LL << 30;
  ScalingSeries s;
  s.backend = "eager";
  s.lengths = {512, 1024, 2048};
  s.peak_bytes = {1 << 28, 1 << 30, 4LL << 30};
  s.memory_fit.growth = "quadratic";
  s.memory_fit.c2 = 1024;
  s.memory_fit.quadratic_dominates_from = 700;
  s.oom_threshold_tokens = 9000;
  r.scaling->series.push_back(s);
  const json sc = render::run_view(r, "run")["scaling"];
  EXPECT_EQ(sc["budget_for_pass_bytes"], (80LL - 13) << 30);
  const json& ser = sc["series"][0];
  EXPECT_NEAR(ser["memory_fit"]["curve"].back()[0].get<double>(), 9000, 1e-6);
  EXPECT_EQ(ser["memory_fit"]["quadratic_from"], 700);
  EXPECT_TRUE(ser["time_fit"]["curve"].empty());
}

TEST(HtmlSections, UnknownDeviceTimeIsNullNeverZero) {
  Report r;
  Call c = testing::eager_call(0, 0, "model.layers.0.attn");
  c.kernels.clear();
  c.device_time_us = 0;
  c.device_time_unknown = true;
  r.calls.push_back(c);
  r.summary.call_count = 1;
  r.summary.unknown_time_call_count = 1;
  r.layers = build_layers(r.calls);  // the map's rows are the Report's layers
  const json view = render::run_view(r, "run");
  EXPECT_TRUE(view["calls"][0]["us"].is_null());
  EXPECT_TRUE(view["map"][0]["us"].is_null());
  for (const json& cell : view["map"][0]["cells"]) EXPECT_EQ(cell["cls"], "unknown");
  for (const json& node : view["tree"]) {
    EXPECT_TRUE(node["us"].is_null()) << node["path"];
    EXPECT_TRUE(node["share"].is_null()) << node["path"];
  }
  EXPECT_EQ(view["summary"]["unknown_time_calls"], 1);
}

TEST(HtmlSections, ACommandDrawsOnlyItsSectionsAndTheDiffVerdictIsTheRunsSection) {
  DashboardOptions options;
  options.sections = {"diff"};
  Report verdict;  // as `attnprof diff` writes it: a diff section and nothing else
  verdict.diff.emplace().unmatched = {"only_here.json"};
  const std::string page = render_html({verdict}, options);
  json data = embedded_data(page);
  EXPECT_EQ(data["sections"], json::array({"diff"}));
  ASSERT_EQ(data["runs"].size(), 1u);
  EXPECT_EQ(data["runs"][0]["diff"]["unmatched"], json::array({"only_here.json"}));
  EXPECT_EQ(data["runs"][0]["diff"]["exit_code"], 0);
  EXPECT_FALSE(data["runs"][0]["why"].contains("diff"));
  EXPECT_NE(page.find("<title>attnprof \u2014 diff</title>"), std::string::npos);
  data = embedded_data(render_html({h200_report()}));
  EXPECT_EQ(data["sections"].size(), dashboard_sections().size()) << "analyze: every section";
  EXPECT_TRUE(data["runs"][0]["diff"].is_null());
  EXPECT_TRUE(data["runs"][0]["why"].contains("diff")) << "one run: the line says how to get a diff";
}

}  // namespace
}  // namespace attnprof
