#include "attnprof/git_command.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace attnprof {

std::optional<std::string> run_git(const std::string& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {"git", "-C", dir};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe(out) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return std::nullopt;
  }
  if (pid == 0) {  // child: stdout -> pipe, stderr and stdin -> /dev/null
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(out[1], STDOUT_FILENO);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDERR_FILENO);
      ::dup2(null_fd, STDIN_FILENO);
    }
    ::close(out[0]);
    ::close(out[1]);
    ::execvp("git", argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[1 << 14];
  for (;;) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n > 0) text.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace attnprof
