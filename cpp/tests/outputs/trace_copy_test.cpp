// The outputs that copy the trace (trace_outputs.h), written from the trace the analysis kept
// (analyze_file_keeping_trace): the bytes a second read of the file gives, without that read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "attnprof/analyze.h"
#include "attnprof/formats.h"
#include "attnprof/ingest.h"
#include "attnprof/io.h"
#include "attnprof/overlay.h"
#include "attnprof/report_json.h"
#include "attnprof/trace_outputs.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

// Each test analyses its own copy of a real trace, so it can take the file away afterwards.
class TraceCopy : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("attnprof_trace_copy_" + std::to_string(::getpid()) + "_" + test->name());
    fs::create_directories(dir_);
    trace_ = (dir_ / "cudnn.pt.trace.json.gz").string();
    fs::copy_file(testing::fixture(testing::kCudnnTrace), trace_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string out(const std::string& name) const { return (dir_ / name).string(); }
  static std::string bytes(const std::string& path) {
    auto text = read_text_file(path);
    EXPECT_TRUE(text.ok()) << path;
    return text.ok() ? *text : "";
  }
  // Every file of a folder, name -> bytes.
  static std::map<std::string, std::string> files_of(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) files[e.path().filename().string()] = bytes(e.path().string());
    return files;
  }

  fs::path dir_;
  std::string trace_;
};

TEST_F(TraceCopy, KeepingTheTraceGivesTheReportOfAPlainAnalysisAndTheFileInflated) {
  Result<AnalyzedFile> kept = analyze_file_keeping_trace(trace_);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  Result<Report> plain = analyze_file(trace_);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(report_to_json(kept->report, true), report_to_json(*plain, true));
  EXPECT_EQ(kept->trace.path, trace_);
  Result<std::string> inflated = read_trace_text(trace_);
  ASSERT_TRUE(inflated.ok());
  EXPECT_EQ(kept->trace.text, *inflated);
  // The layout names the events array of that text: it opens with '[' and closes with ']'.
  EXPECT_EQ(kept->trace.text[kept->trace.layout.array_begin], '[');
  EXPECT_EQ(kept->trace.text[kept->trace.layout.array_end - 1], ']');
}

TEST_F(TraceCopy, AnnotatedTraceFromTheKeptTraceIsTheOneTheFileGivesAndNeedsNoFile) {
  Result<AnalyzedFile> analyzed = analyze_file_keeping_trace(trace_);
  ASSERT_TRUE(analyzed.ok()) << analyzed.error().message;
  ASSERT_FALSE(analyzed->report.calls.empty());
  ASSERT_TRUE(write_chrome_overlay(analyzed->report, trace_, out("read.json")).ok());  // reads the file again
  fs::remove(trace_);
  Status without_file = write_chrome_overlay(analyzed->report, trace_, out("again.json"));
  ASSERT_FALSE(without_file.ok());
  EXPECT_EQ(without_file.error().code, ErrorCode::kFileNotFound);

  ASSERT_TRUE(write_chrome_overlay(analyzed->report, analyzed->trace, out("kept.json")).ok());
  const std::string kept = bytes(out("kept.json"));
  EXPECT_EQ(kept, bytes(out("read.json")));
  // The original text up to its ']' comes first, the overlay after it.
  const size_t close = analyzed->trace.layout.array_end - 1;
  EXPECT_EQ(kept.substr(0, close), analyzed->trace.text.substr(0, close));
  EXPECT_NE(kept.find("\"name\":\"L0 cudnn\"", close), std::string::npos);
}

TEST_F(TraceCopy, RegistryWritesTheAnnotatedTraceFromTheTraceItIsHanded) {
  Result<AnalyzedFile> analyzed = analyze_file_keeping_trace(trace_);
  ASSERT_TRUE(analyzed.ok()) << analyzed.error().message;
  ASSERT_TRUE(write_chrome_overlay(analyzed->report, trace_, out("read.json.gz")).ok());
  fs::remove(trace_);
  const std::vector<Report> reports{analyzed->report};
  const std::vector<ReportView> views = views_of(reports);
  const std::vector<KeptTrace> traces{analyzed->trace};
  Result<const OutputFormat*> chrome = find_output_format("chrome");
  ASSERT_TRUE(chrome.ok());
  ASSERT_TRUE(write_output(**chrome, FormatInput{reports, views, 1, traces}, out("kept.json.gz")).ok());
  EXPECT_EQ(bytes(out("kept.json.gz")), bytes(out("read.json.gz")));
}

TEST_F(TraceCopy, TensorBoardRunFromTheKeptTraceIsTheOneTheFileGives) {
  Result<AnalyzedFile> analyzed = analyze_file_keeping_trace(trace_);
  ASSERT_TRUE(analyzed.ok()) << analyzed.error().message;
  TensorBoardOptions options;
  options.markdown = "# report";
  options.wall_time = 1.7e9;  // the event file's name and records carry it
  Result<int64_t> read = write_tensorboard(analyzed->report, out("tb_read"), options);
  ASSERT_TRUE(read.ok()) << read.error().message;
  fs::remove(trace_);
  Result<int64_t> kept = write_tensorboard(analyzed->report, analyzed->trace, out("tb_kept"), options);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(*kept, *read);

  const std::map<std::string, std::string> from_kept = files_of(dir_ / "tb_kept");
  const std::map<std::string, std::string> from_read = files_of(dir_ / "tb_read");
  ASSERT_EQ(from_kept.size(), 2u) << "the event file and the trace copy";
  EXPECT_TRUE(from_kept.contains("cudnn.0.pt.trace.json.gz"));
  for (const auto& [name, content] : from_kept) {
    ASSERT_TRUE(from_read.contains(name)) << name;
    EXPECT_TRUE(content == from_read.at(name)) << name << " differs";
  }
}

// A kept trace is located where it lies (scan_trace_layout of a std::string), not on a copy: it
// must find what the copying scan finds, on valid and on invalid UTF-8, and leave the text as it was.
TEST(TraceLayoutInPlace, FindsWhatTheCopyingScanFindsAndLeavesTheTextAsItWas) {
  const std::string head = R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":"stream 7",)"
                           R"("ts":10.5,"dur":1,"args":{"correlation":7}}, {"ph":"X","cat":"kernel","name":"k)";
  const std::string tail = R"(2","pid":0,"tid":7,"ts":20,"dur":1,"args":{"correlation":9}}], "x": 1})";
  for (const std::string& middle : {std::string(), std::string("\xff")}) {  // "k2", then "k<invalid byte>2"
    std::string text = head + middle + tail;
    const std::string before = text;
    Result<TraceEventsLayout> copied = scan_trace_layout(std::string_view(text), {7});
    Result<TraceEventsLayout> in_place = scan_trace_layout(text, {7});
    ASSERT_TRUE(copied.ok() && in_place.ok());
    EXPECT_EQ(text, before);
    for (const TraceEventsLayout* layout : {&*copied, &*in_place}) {
      EXPECT_EQ(layout->array_begin, text.find('['));
      EXPECT_EQ(layout->array_end, text.rfind(']') + 1);
      EXPECT_FALSE(layout->array_empty);
      ASSERT_EQ(layout->device_events.size(), 1u) << "only the correlation asked for";
      ASSERT_EQ(layout->device_events.at(7).size(), 1u);
      const DeviceEventSite& site = layout->device_events.at(7).front();
      EXPECT_EQ(site.name, "k1");
      EXPECT_EQ(site.pid, "0");
      EXPECT_EQ(site.tid, "\"stream 7\"");
      EXPECT_DOUBLE_EQ(site.ts_us, 10.5);
    }
  }
}

}  // namespace
}  // namespace attnprof
