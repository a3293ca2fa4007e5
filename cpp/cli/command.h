// Each `attnprof <command>` lives in its own file cmd_<name>.cpp and registers itself here
// with a static Registration, so adding a command never touches main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "attnprof/error.h"

namespace attnprof::cli {

// Exit codes shared by all commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRegression = 1;  // `diff` found a regression
inline constexpr int kExitBadInput = 2;    // any error: bad file, bad argument, I/O

// Adds the subcommand to `app`. The callback it installs must end by calling finish().
using CommandFactory = std::function<void(CLI::App& app)>;

struct Registration {
  Registration(int order, CommandFactory factory);  // order = position in --help
};

// Stops the command with an exit code (throws CLI::RuntimeError, which main turns into
// the exit status). For errors, prints "attnprof <cmd>: <message>" on stderr first.
[[noreturn]] void fail(const std::string& command, const Error& error);
[[noreturn]] void exit_with(int code);

// A progress reporter for long work: draws a bar on stderr only when stderr is a terminal.
std::function<void(size_t, size_t)> progress_bar(const std::string& label);

}  // namespace attnprof::cli
