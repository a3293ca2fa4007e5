// Getting trace bytes: a file (plain, or gzip detected by its magic bytes, not its name) or
// text in memory, read as a stream of blocks so that memory does not grow with file size.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "attnprof/error.h"

namespace attnprof::ingest {

// A byte buffer whose capacity always leaves simdjson's padding after size().
class PaddedBuffer {
 public:
  std::string_view view() const { return {bytes_.data(), bytes_.size()}; }
  char* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  size_t capacity() const { return bytes_.capacity(); }
  void assign(std::string_view text);
  void append(const char* p, size_t n);
  void clear() { bytes_.clear(); }
  // The bytes as a string (its capacity keeps the padding), leaving this buffer empty: no copy.
  std::string release() { return std::move(bytes_); }
  void reserve(size_t n);  // n bytes of content (padding is added)

 private:
  std::string bytes_;
};

// A stream of input bytes. read() returns 0 at the end or after an error (see status()).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual size_t read(char* dst, size_t capacity) = 0;
  virtual Status status() const { return Ok{}; }
  // Progress in input bytes (compressed bytes for gzip): consumed so far, and in total.
  virtual size_t consumed() const = 0;
  virtual size_t total() const = 0;
  // True when the bytes are inflated from gzip by a thread of their own.
  virtual bool inflates() const { return false; }
};

bool starts_with_gzip_magic(std::string_view head);

// Opens PATH: kFileNotFound when missing or a directory, kEmptyInput when it has no bytes.
// Gzip inflates in a background thread (errors: kCorruptGzip, reported by status()).
Result<std::unique_ptr<ByteSource>> open_source(const std::string& path);

// Bytes already in memory (gzip-compressed text is inflated too).
std::unique_ptr<ByteSource> memory_source(std::string_view bytes, const std::string& label);

// Drains a source into `out`.
Status read_all(ByteSource& source, PaddedBuffer& out);

// The whole file (inflated) in memory, for outputs that copy a trace (read_trace_text).
// Errors as open_source, plus kEmptyInput when a gzip inflates to nothing.
Status read_whole_file(const std::string& path, PaddedBuffer& out,
                       const std::function<void(size_t, size_t)>& progress);

}  // namespace attnprof::ingest
