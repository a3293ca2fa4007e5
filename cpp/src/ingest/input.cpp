#include "ingest/input.h"

#include <simdjson.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
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

Status read_all(ByteSource& source, PaddedBuffer& out) {
  constexpr size_t kBlock = size_t{4} << 20;
  std::vector<char> block(kBlock);
  for (size_t n; (n = source.read(block.data(), block.size())) > 0;) out.append(block.data(), n);
  return source.status();
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Raw bytes: from a file or from memory.
class RawSource {
 public:
  virtual ~RawSource() = default;
  virtual size_t read(char* dst, size_t capacity) = 0;
  virtual size_t consumed() const = 0;
  virtual size_t total() const = 0;
};

class FileSource final : public ByteSource, public RawSource {
 public:
  FileSource(File f, size_t size, std::string head)
      : file_(std::move(f)), size_(size), pending_(std::move(head)) {}
  size_t read(char* dst, size_t capacity) override {
    size_t n = 0;
    if (!pending_.empty()) {  // the bytes read to sniff the gzip magic
      n = std::min(capacity, pending_.size());
      std::memcpy(dst, pending_.data(), n);
      pending_.erase(0, n);
    }
    if (n < capacity) n += std::fread(dst + n, 1, capacity - n, file_.get());
    consumed_ += n;
    return n;
  }
  size_t consumed() const override { return consumed_; }
  size_t total() const override { return size_; }

 private:
  File file_;
  size_t size_;
  std::string pending_;
  size_t consumed_ = 0;
};

class MemorySource final : public ByteSource, public RawSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(char* dst, size_t capacity) override {
    const size_t n = std::min(capacity, bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  size_t consumed() const override { return pos_; }
  size_t total() const override { return bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Inflates a gzip stream (all members) in a background thread that fills a bounded queue
// of blocks, so that inflating (serial, the slowest step) overlaps with parsing.
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<RawSource> raw, std::string label)
      : raw_(std::move(raw)), label_(std::move(label)) {
    worker_ = std::thread([this] { inflate_loop(); });
  }
  ~GzipSource() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  size_t read(char* dst, size_t capacity) override {
    size_t n = 0;
    while (n < capacity) {
      if (current_pos_ == current_.size()) {
        std::unique_lock lock(mu_);
        if (current_.size() == kBlock) free_.push_back(std::move(current_));  // for the inflater to refill
        cv_.wait(lock, [this] { return !queue_.empty() || done_; });
        if (queue_.empty()) break;
        current_ = std::move(queue_.front());
        queue_.pop_front();
        current_pos_ = 0;
        lock.unlock();
        cv_.notify_all();
      }
      const size_t k = std::min(capacity - n, current_.size() - current_pos_);
      std::memcpy(dst + n, current_.data() + current_pos_, k);
      current_pos_ += k;
      n += k;
    }
    return n;
  }
  Status status() const override {
    std::lock_guard lock(mu_);
    if (error_) return *error_;
    return Ok{};
  }
  size_t consumed() const override { return raw_consumed_.load(); }
  size_t total() const override { return raw_->total(); }
  bool inflates() const override { return true; }

 private:
  static constexpr size_t kBlock = size_t{4} << 20;
  static constexpr size_t kQueueDepth = 4;

  void finish(std::optional<Error> error) {
    std::lock_guard lock(mu_);
    error_ = std::move(error);
    done_ = true;
    cv_.notify_all();
  }

  bool push(std::vector<char>&& block) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return queue_.size() < kQueueDepth || stop_; });
    if (stop_) return false;
    queue_.push_back(std::move(block));
    cv_.notify_all();
    return true;
  }

  // A block the reader is done with, else a new one: refilling the same few blocks saves
  // faulting in and zeroing fresh pages for every 4 MiB of output (1 GB of them for a 1 GB trace).
  std::vector<char> recycled_block() {
    {
      std::lock_guard lock(mu_);
      if (!free_.empty()) {
        std::vector<char> block = std::move(free_.back());
        free_.pop_back();
        return block;
      }
    }
    return std::vector<char>(kBlock);
  }

  // long: zlib's own loop (zlib.h, inflate()): refill the input, inflate, hand on each full
  // block; its end, error and multi-member cases read best beside the call they follow
  void inflate_loop() {
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK) return finish(make_error(ErrorCode::kInternal, "zlib init failed"));
    std::vector<char> in(kBlock);
    std::vector<char> out(kBlock);
    size_t out_used = 0;
    bool input_done = false;
    int rc = Z_OK;
    for (;;) {
      if (zs.avail_in == 0 && !input_done) {
        const size_t n = raw_->read(in.data(), in.size());
        raw_consumed_.store(raw_->consumed());
        input_done = n == 0;
        zs.next_in = reinterpret_cast<Bytef*>(in.data());
        zs.avail_in = static_cast<uInt>(n);
      }
      if (rc == Z_STREAM_END) {
        if (zs.avail_in == 0 && input_done) break;  // clean end after the last member
        if (zs.avail_in == 0) continue;             // read more to see if a member follows
        inflateReset(&zs);                          // another gzip member
      }
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_used);
      zs.avail_out = static_cast<uInt>(out.size() - out_used);
      rc = inflate(&zs, Z_NO_FLUSH);
      out_used = out.size() - zs.avail_out;
      if (rc == Z_BUF_ERROR && zs.avail_in == 0 && input_done) {
        inflateEnd(&zs);
        return finish(make_error(ErrorCode::kCorruptGzip, label_ + ": truncated gzip data (the file ends mid-stream)"));
      }
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        inflateEnd(&zs);
        return finish(make_error(ErrorCode::kCorruptGzip, label_ + ": corrupt gzip data"));
      }
      if (out_used == out.size()) {
        if (!push(std::move(out))) break;
        out = recycled_block();
        out_used = 0;
      }
    }
    inflateEnd(&zs);
    if (out_used > 0) {
      out.resize(out_used);
      push(std::move(out));
    }
    finish(std::nullopt);
  }

  std::unique_ptr<RawSource> raw_;
  std::string label_;
  std::atomic<size_t> raw_consumed_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> queue_;
  std::vector<std::vector<char>> free_;  // blocks read out, each kBlock long
  bool done_ = false, stop_ = false;
  std::optional<Error> error_;
  std::vector<char> current_;
  size_t current_pos_ = 0;
  std::thread worker_;
};

}  // namespace

Result<std::unique_ptr<ByteSource>> open_source(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error(ErrorCode::kFileNotFound, path + ": no such file");
  if (S_ISDIR(st.st_mode)) return make_error(ErrorCode::kFileNotFound, path + ": is a directory, not a trace file");
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return make_error(ErrorCode::kFileNotFound, path + ": cannot open: " + std::strerror(errno));
  std::string head(2, '\0');
  head.resize(std::fread(head.data(), 1, 2, f.get()));
  if (head.empty()) return make_error(ErrorCode::kEmptyInput, path + ": empty file");
  const bool gz = starts_with_gzip_magic(head);
  auto file = std::make_unique<FileSource>(std::move(f), static_cast<size_t>(st.st_size), std::move(head));
  if (!gz) return std::unique_ptr<ByteSource>(std::move(file));
  return std::unique_ptr<ByteSource>(std::make_unique<GzipSource>(std::move(file), path));
}

std::unique_ptr<ByteSource> memory_source(std::string_view bytes, const std::string& label) {
  auto raw = std::make_unique<MemorySource>(bytes);
  if (!starts_with_gzip_magic(bytes)) return raw;
  return std::make_unique<GzipSource>(std::move(raw), label);
}

Status read_whole_file(const std::string& path, PaddedBuffer& out,
                       const std::function<void(size_t, size_t)>& progress) {
  auto src = open_source(path);
  if (!src) return src.error();
  out.clear();
  if (auto st = read_all(**src, out); !st) return st;
  if (progress) progress((*src)->consumed(), (*src)->total());
  if (out.size() == 0) return make_error(ErrorCode::kEmptyInput, path + ": empty file");
  return Ok{};
}

}  // namespace attnprof::ingest
