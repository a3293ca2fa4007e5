#include "ingest/input.h"

#include <simdjson.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace attnprof::ingest {

void PaddedBuffer::reserve(size_t n) { bytes_.reserve(n + simdjson::SIMDJSON_PADDING); }

void PaddedBuffer::assign(std::string_view text) {
  reserve(text.size());
  bytes_.assign(text.data(), text.size());
}

void PaddedBuffer::append(const char* p, size_t n) {
  if (bytes_.size() + n + simdjson::SIMDJSON_PADDING > bytes_.capacity())
    reserve(std::max(bytes_.capacity() * 2, bytes_.size() + n));
  bytes_.append(p, n);
}

bool starts_with_gzip_magic(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

Error corrupt_gzip(const std::string& path, const char* what) {
  return make_error(ErrorCode::kCorruptGzip, path + ": " + what);
}

// Inflates every gzip member of `compressed` (concatenated members are legal gzip).
Status inflate_all(const std::string& path, std::string_view compressed, PaddedBuffer& out,
                   const std::function<void(size_t, size_t)>& progress) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return make_error(ErrorCode::kInternal, "zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(compressed.size(), UINT32_MAX));
  size_t fed = zs.avail_in;
  out.reserve(compressed.size() * 8);
  std::vector<char> block(size_t{1} << 20);
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(block.data());
    zs.avail_out = static_cast<uInt>(block.size());
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(block.data(), block.size() - zs.avail_out);
    if (zs.avail_in == 0 && fed < compressed.size()) {  // inputs over 4 GiB: feed the rest
      const size_t more = std::min<size_t>(compressed.size() - fed, UINT32_MAX);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + fed));
      zs.avail_in = static_cast<uInt>(more);
      fed += more;
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0 && fed == compressed.size()) break;
      if (inflateReset(&zs) != Z_OK) break;  // another gzip member follows
      continue;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return corrupt_gzip(path, "truncated gzip data (the file ends mid-stream)");
    }
    if (rc != Z_OK) {
      inflateEnd(&zs);
      return corrupt_gzip(path, "corrupt gzip data");
    }
    if (progress) progress(fed - zs.avail_in, compressed.size());
  }
  inflateEnd(&zs);
  return Ok{};
}

}  // namespace

Status read_whole_file(const std::string& path, PaddedBuffer& out,
                       const std::function<void(size_t, size_t)>& progress) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(ErrorCode::kFileNotFound, path + ": no such file");
  if (S_ISDIR(st.st_mode))
    return make_error(ErrorCode::kFileNotFound, path + ": is a directory, not a trace file");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return make_error(ErrorCode::kFileNotFound, path + ": cannot open: " + std::strerror(errno));
  PaddedBuffer raw;
  raw.reserve(static_cast<size_t>(st.st_size));
  std::vector<char> block(size_t{16} << 20);
  for (;;) {
    const size_t n = std::fread(block.data(), 1, block.size(), f.get());
    if (n > 0) raw.append(block.data(), n);
    if (n < block.size()) break;
  }
  if (std::ferror(f.get())) return make_error(ErrorCode::kIoError, path + ": read error");
  if (raw.size() == 0) return make_error(ErrorCode::kEmptyInput, path + ": empty file");
  if (!starts_with_gzip_magic(raw.view())) {
    out = std::move(raw);
    if (progress) progress(out.size(), out.size());
    return Ok{};
  }
  out.clear();
  if (auto st2 = inflate_all(path, raw.view(), out, progress); !st2) return st2.error();
  if (out.size() == 0) return make_error(ErrorCode::kEmptyInput, path + ": empty file (gzip of nothing)");
  return Ok{};
}

}  // namespace attnprof::ingest
