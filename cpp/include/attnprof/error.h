// Errors as values. Every fallible public function of attnprof returns a Result<T>.
// The CLI turns an Error into one line on stderr and exit code 2 (exit 1 is reserved
// for "regression found" by `attnprof diff`).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace attnprof {

enum class ErrorCode {
  kFileNotFound,     // path does not exist or cannot be opened
  kEmptyInput,       // file or directory holds nothing to read
  kCorruptGzip,      // gzip stream cannot be inflated
  kMalformedJson,    // JSON syntax error or truncated document
  kNotATrace,        // valid JSON, but not a Kineto/Chrome trace
  kInvalidArgument,  // bad command-line or API argument
  kUnsupported,      // valid input that attnprof cannot handle (said why)
  kIoError,          // writing an output failed
  kInternal,         // a bug: should never reach users
};

const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string message;  // one line, written for the user, names the file when there is one
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}       // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const Error& error() const { return std::get<Error>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Error> v_;
};

// For functions that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

}  // namespace attnprof
