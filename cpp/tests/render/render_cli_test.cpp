// `attnprof analyze --html/--chrome/--tensorboard` end to end on a real trace: files written,
// one-line errors with exit 2, and no partial file when an output cannot be written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attnprof/io.h"
#include "render/render_test_reports.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

class RenderCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnprof_render_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int run(const std::string& args) {
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " analyze " + testing::fixture(testing::kCudnnTrace) +
                            " " + args + " >" + (dir_ / "stdout").string() + " 2>" + (dir_ / "stderr").string();
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string err() const {
    std::ifstream in(dir_ / "stderr");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST_F(RenderCli, WritesTheDashboardTheAnnotatedTraceAndTensorBoardLogs) {
  ASSERT_EQ(run("--html " + (dir_ / "r.html").string() + " --chrome " + (dir_ / "a.json.gz").string() +
                " --tensorboard " + (dir_ / "tb").string()),
            0)
      << err();
  auto html = read_text_file((dir_ / "r.html").string());
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("id=\"attnprof-data\""), std::string::npos);
  auto annotated = read_text_file((dir_ / "a.json.gz").string());
  ASSERT_TRUE(annotated.ok());
  EXPECT_NE(annotated->find("\"name\":\"L0 cudnn\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "tb" / "llama7b4l_sdpa_bf16_b4_s2048.0.pt.trace.json.gz"));
}

TEST_F(RenderCli, UnwritableOutputIsOneLineErrorExit2AndNoPartialFile) {
  std::ofstream(dir_ / "file") << "x";  // a file where a directory is needed
  EXPECT_EQ(run("--tensorboard " + (dir_ / "file").string()), 2);
  const std::string message = err();
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  EXPECT_EQ(run("--chrome " + (dir_ / "file" / "a.json").string()), 2);
  EXPECT_FALSE(fs::exists(dir_ / "file" / "a.json"));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

}  // namespace
}  // namespace attnprof
