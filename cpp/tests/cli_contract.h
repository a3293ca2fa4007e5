// The CLI's error contract checked end to end (docs/reliability.md), shared by the tests that
// run the built `attnprof` on bad inputs: ONE line on stderr naming the file and the field,
// exit 2, no output file left behind. Each test gets its own temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>

namespace attnprof::testing {

struct CliRun {
  int exit_code = -1;
  std::string stderr_text;
};

class CliContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("attnprof_cli_" + std::to_string(::getpid()) + "_" + test->test_suite_name() + "_" + test->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes `bytes` to a file of the test's folder; its path.
  std::string write(const std::string& name, const std::string& bytes) {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // The output file a command is asked to write (it must not exist after a failure).
  std::string out() const { return (dir_ / "out.json").string(); }

  // `attnprof ARGS` (ARGS quoted by the caller), stdout dropped, stderr kept.
  CliRun run(const std::string& args) {
    const auto err = (dir_ / "stderr.txt").string();
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " " + args + " > /dev/null 2> '" + err + "'";
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(err);
    std::stringstream ss;
    ss << in.rdbuf();
    r.stderr_text = ss.str();
    return r;
  }

  // The command reads its input (exit 0); its output file is removed for the next check.
  void expect_read(const std::string& args) {
    SCOPED_TRACE(args);
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    std::error_code ec;
    std::filesystem::remove(out(), ec);
  }

  // Exit 2, one line that contains every one of `mentions`, no internal error, no output.
  void expect_bad_input(const std::string& args, std::initializer_list<std::string> mentions) {
    SCOPED_TRACE(args);
    const CliRun r = run(args);
    EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
    EXPECT_EQ(std::count(r.stderr_text.begin(), r.stderr_text.end(), '\n'), 1) << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("internal error"), std::string::npos) << r.stderr_text;
    for (const std::string& m : mentions) EXPECT_NE(r.stderr_text.find(m), std::string::npos) << r.stderr_text;
    EXPECT_FALSE(std::filesystem::exists(out())) << "no output file may be left behind";
  }

  std::filesystem::path dir_;
};

}  // namespace attnprof::testing
