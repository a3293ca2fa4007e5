#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "attnprof/ingest.h"
#include "attnprof/io.h"
#include "attnprof/overlay.h"
#include "attnprof/trace_outputs.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

using nlohmann::json;

std::vector<json> overlay_events_of(const json& trace) {
  std::vector<json> out;
  for (const json& e : trace["traceEvents"])
    if (e.value("pid", json()) == kOverlayPid || e.value("cat", "") == "attnprof") out.push_back(e);
  return out;
}

TEST(ChromeOverlay, KeepsTheOriginalBytesAndAppendsOneSlicePerCall) {
  const std::string path = testing::fixture(testing::kCudnnTrace);
  auto original = read_text_file(path);
  ASSERT_TRUE(original.ok());
  auto trace = load_trace(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  const Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 4);
  ASSERT_EQ(r.calls.size(), 4u);

  auto annotated = annotate_trace(*original, r);
  ASSERT_TRUE(annotated.ok()) << annotated.error().message;
  // Byte for byte: everything before the closing ']' of traceEvents is the original.
  const size_t close = original->rfind(']');
  ASSERT_NE(close, std::string::npos);
  EXPECT_EQ(annotated->substr(0, close), original->substr(0, close));
  EXPECT_EQ(annotated->substr(annotated->size() - (original->size() - close)), original->substr(close));

  const json before = json::parse(*original);
  const json after = json::parse(*annotated);
  const auto added = overlay_events_of(after);
  EXPECT_EQ(after["traceEvents"].size(), before["traceEvents"].size() + added.size());
  int slices = 0, starts = 0, finishes = 0;
  for (const json& e : added) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      ++slices;
      EXPECT_EQ(e["name"], "L" + std::to_string(e["args"]["layer"].get<int64_t>()) + " cudnn");
      EXPECT_EQ(e["cname"], "good");
      EXPECT_EQ(e["args"]["class"], "fused");
    }
    if (ph == "s") ++starts;
    if (ph == "f") ++finishes;
  }
  EXPECT_EQ(slices, 4);
  EXPECT_EQ(starts, 4) << "one arrow per kernel";
  EXPECT_EQ(finishes, 4);
}

TEST(ChromeOverlay, ACallOfUnknownDeviceTimeCarriesNullNotZero) {
  const std::string path = testing::fixture(testing::kCudnnTrace);
  auto original = read_text_file(path);
  auto trace = load_trace(path);
  ASSERT_TRUE(original.ok() && trace.ok());
  Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 4);
  r.calls[1].device_time_unknown = true;  // as ops traced during a graph capture
  r.calls[1].device_time_us = 0;
  auto annotated = annotate_trace(*original, r);
  ASSERT_TRUE(annotated.ok());
  int nulls = 0, measured = 0;
  for (const json& e : overlay_events_of(json::parse(*annotated))) {
    if (e["ph"] != "X" || !e.contains("args") || !e["args"].contains("device_time_us")) continue;
    e["args"]["device_time_us"].is_null() ? ++nulls : ++measured;
  }
  EXPECT_EQ(nulls, 1);
  EXPECT_EQ(measured, 3);
}

TEST(ChromeOverlay, FlowArrowsEndOnTheKernelSliceOfTheTrace) {
  const std::string path = testing::fixture(testing::kCudnnTrace);
  auto original = read_text_file(path);
  auto trace = load_trace(path);
  ASSERT_TRUE(original.ok() && trace.ok());
  const Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 2);
  const json after = json::parse(*annotate_trace(*original, r));
  for (const json& f : overlay_events_of(after)) {
    if (f["ph"] != "f") continue;
    bool bound = false;
    for (const json& e : after["traceEvents"]) {
      if (e.value("cat", "") != "kernel" || e["pid"] != f["pid"] || e["tid"] != f["tid"]) continue;
      const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
      if (ts <= f["ts"].get<double>() && f["ts"].get<double>() <= ts + dur &&
          e["name"].get<std::string>().find("cudnn") != std::string::npos)
        bound = true;
    }
    EXPECT_TRUE(bound) << f.dump();
  }
}

TEST(ChromeOverlay, EmptyAndArrayFormTracesStayValidJson) {
  Report r;
  Call c;
  c.layer = 2;
  c.backend = backend::kMath;
  c.cpu_ts_ns = 5000;
  c.cpu_dur_ns = 2000;
  r.calls.push_back(c);
  for (const std::string original : {"{\"traceEvents\": [ ], \"x\": 1}", "[ {\"ph\":\"X\",\"ts\":1,\"dur\":1} ]"}) {
    auto annotated = annotate_trace(original, r);
    ASSERT_TRUE(annotated.ok()) << annotated.error().message;
    const json j = json::parse(*annotated);
    const json& events = j.is_array() ? j : j["traceEvents"];
    bool found = false;
    for (const json& e : events)
      if (e.value("name", "") == "L2 math") {
        found = true;
        EXPECT_EQ(e["cname"], "bad");
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 5.0);
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2.0);
      }
    EXPECT_TRUE(found) << original;
  }
}

TEST(ChromeOverlay, RejectsTextThatIsNotATrace) {
  EXPECT_FALSE(annotate_trace("{\"traceEvents\": 3}", Report{}).ok());
  EXPECT_FALSE(annotate_trace("{\"traceEvents\": [", Report{}).ok());
  EXPECT_FALSE(annotate_trace("42", Report{}).ok());
}

TEST(ChromeOverlay, GzipOutputWhenTheNameEndsInGz) {
  const std::string path = testing::fixture(testing::kCudnnTrace);
  auto trace = load_trace(path);
  ASSERT_TRUE(trace.ok());
  const Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 4);
  const std::string out = ::testing::TempDir() + "/attnprof_overlay_test.json.gz";
  ASSERT_TRUE(write_chrome_overlay(r, path, out).ok());
  auto back = read_text_file(out);  // inflates gzip
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(overlay_events_of(json::parse(*back)).size(), 2u + 4u + 8u + 1u);  // meta, slices, flows, lane name
  EXPECT_FALSE(write_chrome_overlay(r, "/nonexistent/trace.json", out + "2").ok());
}

}  // namespace
}  // namespace attnprof
