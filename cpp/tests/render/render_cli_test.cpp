// `attnprof analyze --html/--chrome/--tensorboard` end to end on a real trace: files written,
// one-line errors with exit 2, and no partial file when an output cannot be written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

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

  // `attnprof analyze TRACE ARGS`, behind `wrapper` (a command that runs it) when one is given.
  int run(const std::string& args, const std::string& trace = testing::fixture(testing::kCudnnTrace),
          const std::string& wrapper = "") {
    const std::string cmd = wrapper + std::string(ATTNPROF_CLI_PATH) + " analyze " + trace + " " + args + " >" +
                            (dir_ / "stdout").string() + " 2>" + (dir_ / "stderr").string();
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

// A named pipe gives its bytes to one reader once: a second open waits for a writer that never
// comes, and `timeout` ends the command (exit 124). Exit 0 means the trace was read once.
TEST_F(RenderCli, AnnotatedTraceAndTensorBoardComeFromTheOneReadOfTheTrace) {
  auto text = read_text_file(testing::fixture(testing::kCudnnTrace));  // inflated: the pipe carries JSON
  ASSERT_TRUE(text.ok());
  const std::string fifo = (dir_ / "cudnn.pt.trace.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not end the test
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    for (size_t at = 0; fd >= 0 && at < text->size();) {
      const ssize_t n = ::write(fd, text->data() + at, text->size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    if (fd >= 0) ::close(fd);
  });
  const int exit_code = run("--chrome " + (dir_ / "a.json").string() + " --tensorboard " + (dir_ / "tb").string(),
                            fifo, "timeout 60 ");
  if (const int unblock = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK); unblock >= 0) ::close(unblock);
  writer.join();
  ASSERT_EQ(exit_code, 0) << err();

  auto annotated = read_text_file((dir_ / "a.json").string());
  ASSERT_TRUE(annotated.ok());
  const size_t close = text->rfind(']');
  ASSERT_NE(close, std::string::npos);
  EXPECT_EQ(annotated->substr(0, close), text->substr(0, close)) << "the original bytes come first";
  EXPECT_NE(annotated->find("\"name\":\"L0 cudnn\"", close), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "tb" / "cudnn.0.pt.trace.json.gz"));
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
