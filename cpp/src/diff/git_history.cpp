// attach_git_history: the commits between the two Reports' commits, restricted to the files
// that hold the attention modules when the Reports know them (CodeInfo::source_files).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "attnprof/diff.h"
#include "attnprof/git_command.h"

namespace attnprof {
namespace {

bool has_commit(const std::string& repo, const std::string& commit) {
  return run_git(repo, {"cat-file", "-e", commit + "^{commit}"}).has_value();
}

bool is_ancestor(const std::string& repo, const std::string& a, const std::string& b) {
  return run_git(repo, {"merge-base", "--is-ancestor", a, b}).has_value();
}

std::string short_hash(const std::string& h) { return h.substr(0, 12); }

// Maps the profiler's file names ("model.py", "/abs/path/pkg/model.py", "pkg/model.py") to
// files tracked at either commit: exact path, absolute path under the root, or path suffix.
std::vector<std::string> tracked_files(const std::string& repo, const std::string& root,
                                       const CodeChange& change, const std::vector<std::string>& names) {
  std::vector<std::string> tracked;
  for (const auto& commit : {change.before_commit, change.after_commit}) {
    if (auto listing = run_git(repo, {"ls-tree", "-r", "--name-only", commit})) {
      for (auto& f : split_lines(*listing)) tracked.push_back(std::move(f));
    }
  }
  std::vector<std::string> out;
  auto add = [&](const std::string& f) {
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  };
  for (std::string name : names) {
    if (!root.empty() && name.starts_with(root + "/")) name = name.substr(root.size() + 1);
    for (const auto& f : tracked) {
      if (f == name || (f.size() > name.size() && f.ends_with("/" + name))) add(f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// `git log` records: "\x1e<hash>\x1f<subject>\n\n<file>\n<file>..."
std::vector<CodeCommit> parse_log(const std::string& text) {
  std::vector<CodeCommit> commits;
  size_t pos = 0;
  while ((pos = text.find('\x1e', pos)) != std::string::npos) {
    const size_t next = text.find('\x1e', pos + 1);
    const std::string record = text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    pos = next == std::string::npos ? text.size() : next;
    std::vector<std::string> lines = split_lines(record);
    if (lines.empty()) continue;
    CodeCommit c;
    const size_t sep = lines[0].find('\x1f');
    c.hash = lines[0].substr(0, sep);
    if (sep != std::string::npos) c.subject = lines[0].substr(sep + 1);
    for (size_t i = 1; i < lines.size(); ++i)
      if (!lines[i].empty()) c.files.push_back(lines[i]);
    commits.push_back(std::move(c));
  }
  return commits;
}

void append_note(CodeChange& change, const std::string& note) {
  change.note += (change.note.empty() ? "" : "; ") + note;
}

// The top of the repository that holds both commits (the Report's own, else `fallback_repo`,
// else the working directory), recorded in change.repo; nullopt, with a note, when there is
// none.
std::optional<std::string> repository_with_both_commits(CodeChange& change, const std::string& fallback_repo) {
  std::string repo = change.repo;
  if (repo.empty() || !run_git(repo, {"rev-parse", "--git-dir"})) repo = fallback_repo.empty() ? "." : fallback_repo;
  change.repo.clear();
  const auto top = run_git(repo, {"rev-parse", "--show-toplevel"});
  if (!top) {
    append_note(change, "no git repository at " + repo + " to list the commits in between");
    return std::nullopt;
  }
  std::string root = *top;
  while (!root.empty() && root.back() == '\n') root.pop_back();
  change.repo = root;
  for (const auto& commit : {change.before_commit, change.after_commit}) {
    if (!has_commit(root, commit)) {
      append_note(change, "commit " + short_hash(commit) + " is not in " + root);
      return std::nullopt;
    }
  }
  return root;
}

// The range of commits to list, from..to: baseline to candidate, swapped (with a note) when the
// candidate is the older one; on diverged branches, the candidate's commits the baseline lacks.
std::pair<std::string, std::string> commit_range(const std::string& root, CodeChange& change) {
  std::string from = change.before_commit, to = change.after_commit;
  if (is_ancestor(root, from, to)) return {from, to};
  if (is_ancestor(root, to, from)) {
    append_note(change, "the candidate's commit is older than the baseline's: listing the commits it lacks");
    return {to, from};
  }
  append_note(change, "the two commits are on diverged branches: listing the candidate's commits "
                      "that the baseline lacks");
  return {from, to};
}

}  // namespace

void attach_git_history(CodeChange& change, const std::vector<std::string>& source_files,
                        const std::string& fallback_repo) {
  if (change.before_commit.empty() || change.after_commit.empty()) {
    if (change.note.empty()) append_note(change, "a Report records no git commit");
    return;
  }
  if (!change.commit_changed()) return;
  const std::optional<std::string> found = repository_with_both_commits(change, fallback_repo);
  if (!found) return;
  const std::string& root = *found;
  change.history_available = true;
  const auto [from, to] = commit_range(root, change);
  change.files = tracked_files(root, root, change, source_files);
  change.filtered_by_files = !change.files.empty();
  if (!change.filtered_by_files) {
    append_note(change, source_files.empty()
                            ? "the Reports record no source files of the attention modules (trace "
                              "without with_stack): listing every commit in the range"
                            : "none of the attention modules' source files is tracked in " + root +
                                  ": listing every commit in the range");
  }
  std::vector<std::string> args = {"log", "--format=%x1e%H%x1f%s", "--name-only", from + ".." + to};
  if (change.filtered_by_files) {
    args.push_back("--");
    args.insert(args.end(), change.files.begin(), change.files.end());
  }
  if (auto log = run_git(root, args)) change.commits = parse_log(*log);
}

}  // namespace attnprof
