// Getting trace bytes off disk: plain or gzip (detected by the magic bytes, not the name),
// into a buffer with the padding simdjson needs behind the last byte.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

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
  void reserve(size_t n);  // n bytes of content (padding is added)

 private:
  std::string bytes_;
};

bool starts_with_gzip_magic(std::string_view head);

// Reads the whole file (inflating gzip) into `out`. Errors name the file.
Status read_whole_file(const std::string& path, PaddedBuffer& out,
                       const std::function<void(size_t, size_t)>& progress);

}  // namespace attnprof::ingest
