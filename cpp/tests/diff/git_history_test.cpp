// attach_git_history and detect_code_info_in against a real temporary git repository in
// which one commit changes a model's head_dim.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "attnprof/diff.h"
#include "diff/diff_test_reports.h"
#include "attnprof/git_command.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

class TempRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("attnprof_diff_git_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "models");
    git({"init", "-q"});
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& rel, const std::string& text) { std::ofstream(root_ / rel) << text; }
  void git(const std::vector<std::string>& args) {
    std::vector<std::string> full = {"-c", "user.name=attnprof", "-c", "user.email=t@example.com"};
    full.insert(full.end(), args.begin(), args.end());
    ASSERT_TRUE(run_git(root_.string(), full).has_value()) << "git " << args[0];
  }
  std::string commit(const std::string& subject) {
    git({"add", "-A"});
    git({"commit", "-q", "-m", subject});
    std::string head = run_git(root_.string(), {"rev-parse", "HEAD"}).value();
    head.pop_back();
    return head;
  }

  fs::path root_;
};

TEST_F(TempRepo, NamesTheCommitThatChangedTheAttentionModuleFile) {
  write("models/tiny.py", "HEAD_DIM = 32\n");
  write("README.md", "v1\n");
  const std::string before = commit("initial model");
  write("models/tiny.py", "HEAD_DIM = 24\n");
  const std::string changed = commit("shrink head_dim to 24");
  write("README.md", "v2\n");
  const std::string after = commit("docs only");

  CodeChange change;
  change.before_commit = before;
  change.after_commit = after;
  change.repo = root_.string();
  // As the profiler names frames: relative to a sys.path entry, plus library files.
  attach_git_history(change, {"tiny.py", "torch/nn/modules/module.py"}, "");
  EXPECT_TRUE(change.history_available);
  EXPECT_TRUE(change.filtered_by_files);
  EXPECT_EQ(change.files, std::vector<std::string>{"models/tiny.py"});
  ASSERT_EQ(change.commits.size(), 1u);
  EXPECT_EQ(change.commits[0].hash, changed);
  EXPECT_EQ(change.commits[0].subject, "shrink head_dim to 24");
  EXPECT_EQ(change.commits[0].files, std::vector<std::string>{"models/tiny.py"});
}

TEST_F(TempRepo, WithoutSourceFilesEveryCommitInRangeIsListedAndSaidSo) {
  write("models/tiny.py", "HEAD_DIM = 32\n");
  const std::string before = commit("initial model");
  write("models/tiny.py", "HEAD_DIM = 24\n");
  commit("shrink head_dim to 24");
  write("README.md", "v2\n");
  const std::string after = commit("docs only");

  CodeChange change{.before_commit = before, .after_commit = after};
  attach_git_history(change, {}, root_.string());  // found through the fallback repository
  EXPECT_TRUE(change.history_available);
  EXPECT_FALSE(change.filtered_by_files);
  ASSERT_EQ(change.commits.size(), 2u);
  EXPECT_EQ(change.commits[0].subject, "docs only");  // newest first
  EXPECT_EQ(change.commits[1].subject, "shrink head_dim to 24");
  EXPECT_NE(change.note.find("listing every commit"), std::string::npos);
}

TEST_F(TempRepo, CommitMissingFromTheRepositoryIsReportedNotFatal) {
  write("a.py", "x = 1\n");
  const std::string only = commit("one");
  CodeChange change{.before_commit = "0123456789abcdef0123456789abcdef01234567", .after_commit = only};
  attach_git_history(change, {}, root_.string());
  EXPECT_FALSE(change.history_available);
  EXPECT_TRUE(change.commits.empty());
  EXPECT_NE(change.note.find("is not in"), std::string::npos);
}

TEST_F(TempRepo, CodeInfoRecordsHeadRootAndDirtyState) {
  write("a.py", "x = 1\n");
  const std::string head = commit("one");
  auto info = detect_code_info_in((root_ / "models").string());
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->git_commit, head);
  EXPECT_EQ(fs::canonical(info->git_root), fs::canonical(root_));
  EXPECT_FALSE(info->git_dirty);
  write("untracked.txt", "not part of the code\n");
  EXPECT_FALSE(detect_code_info_in(root_.string())->git_dirty);  // untracked files do not count
  write("a.py", "x = 2\n");
  EXPECT_TRUE(detect_code_info_in(root_.string())->git_dirty);
}

TEST(CodeInfo, OutsideAGitWorkTreeThereIsNone) {
  EXPECT_FALSE(detect_code_info_in("/").has_value());
}

}  // namespace
}  // namespace attnprof
