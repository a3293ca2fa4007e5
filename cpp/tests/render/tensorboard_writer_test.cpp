#include <gtest/gtest.h>

#include <filesystem>

#include "attnprof/tensorboard.h"
#include "attnprof/trace_outputs.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

TEST(TensorBoard, Crc32cMatchesTheCastagnoliCheckValue) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);  // RFC 3720 / iSCSI check value
  EXPECT_EQ(crc32c(""), 0u);
}

TEST(TensorBoard, TfrecordFrameHasLengthMaskedCrcsAndPayload) {
  const std::string frame = tfrecord_frame("abc");
  ASSERT_EQ(frame.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(static_cast<unsigned char>(frame[0]), 3u);
  EXPECT_EQ(frame.substr(1, 7), std::string(7, '\0'));
  EXPECT_EQ(frame.substr(12, 3), "abc");
  const uint32_t crc = masked_crc32c("abc");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<unsigned char>(frame[15 + i]), (crc >> (8 * i)) & 0xFFu);
  const uint32_t raw = crc32c("abc");
  EXPECT_EQ(crc, ((raw >> 15) | (raw << 17)) + 0xa282ead8u);
}

TEST(TensorBoard, ScalarsCoverSummaryAndEveryLayer) {
  Report r;
  r.summary.fused_time_fraction = 0.25;
  r.summary.attention_device_time_us = 1234;
  r.summary.call_count = 3;
  r.summary.has_gpu = true;
  r.summary.attention_share = 0.4;
  for (int64_t i : {0, 1}) {
    Layer l;
    l.index = i;
    l.device_time_us = 100.0 * static_cast<double>(i + 1);
    r.layers.push_back(l);
  }
  const auto scalars = tensorboard_scalars(r);
  auto value_of = [&](const std::string& tag) {
    for (const auto& [t, v] : scalars)
      if (t == tag) return v;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(value_of("attention/fused_time_fraction"), 0.25);
  EXPECT_DOUBLE_EQ(value_of("attention/device_time_us"), 1234);
  EXPECT_DOUBLE_EQ(value_of("attention/calls"), 3);
  EXPECT_DOUBLE_EQ(value_of("attention/share_of_gpu_time"), 0.4);
  EXPECT_DOUBLE_EQ(value_of("layer/01/device_time_us"), 200);
  EXPECT_DOUBLE_EQ(value_of("memory/peak_bytes"), -1.0) << "absent when no memory is known";
}

TEST(TensorBoard, LayersAndTotalsOfUnknownDeviceTimeAreNotPlottedAsZero) {
  Report r;  // a graph capture: every call's kernels unseen
  r.summary.call_count = 2;
  r.summary.unknown_time_call_count = 2;
  r.summary.has_gpu = true;
  for (int64_t i : {0, 1}) {
    Layer l;
    l.index = i;
    l.device_time_unknown = true;
    r.layers.push_back(l);
  }
  for (const auto& [tag, value] : tensorboard_scalars(r)) {
    EXPECT_EQ(tag.find("device_time_us"), std::string::npos) << tag;
    EXPECT_EQ(tag.find("fused_time_fraction"), std::string::npos) << tag;
  }
}

TEST(TensorBoard, RepeatedRunsIntoOneDirectoryCountUpTheStep) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnprof_tb_steps";
  fs::remove_all(dir);
  auto trace = load_trace(testing::fixture(testing::kCudnnTrace));
  ASSERT_TRUE(trace.ok());
  const Report r = testing::report_from_trace_kernels(*trace, "cudnn", backend::kCudnn, 4);
  TensorBoardOptions options;
  options.markdown = "# report";
  auto first = write_tensorboard(r, dir.string(), options);
  auto second = write_tensorboard(r, dir.string(), options);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, 0);
  EXPECT_EQ(*second, 1);
  int events = 0, traces = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("tfevents") != std::string::npos) ++events;
    if (name == "llama7b4l_sdpa_bf16_b4_s2048.0.pt.trace.json.gz" ||
        name == "llama7b4l_sdpa_bf16_b4_s2048.1.pt.trace.json.gz")
      ++traces;
  }
  EXPECT_EQ(events, 2);
  EXPECT_EQ(traces, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnprof
