#include "attnprof/io.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace attnprof {

Status write_file_atomic(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(ErrorCode::kIoError, "cannot write " + path);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return make_error(ErrorCode::kIoError, "cannot write " + path + " (disk full?)");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return make_error(ErrorCode::kIoError, "cannot write " + path + ": " + ec.message());
  }
  return Ok{};
}

namespace {

Result<std::string> gunzip(const std::string& path, const std::string& compressed) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return make_error(ErrorCode::kInternal, "zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      return make_error(ErrorCode::kCorruptGzip, path + ": corrupt or truncated gzip data");
    }
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      return make_error(ErrorCode::kCorruptGzip, path + ": truncated gzip data");
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kFileNotFound, path + ": no such file");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
      static_cast<unsigned char>(data[1]) == 0x8b)
    return gunzip(path, data);
  return data;
}

}  // namespace attnprof
