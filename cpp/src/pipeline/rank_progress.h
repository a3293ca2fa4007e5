// One progress stream for a directory of rank traces read by several worker threads: each
// worker reports its own file's bytes, this sums them over all files and forwards throttled,
// serialised, never-decreasing totals to one DirectoryProgressFn.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "attnprof/ranks.h"

namespace attnprof::ranks {

class RankProgress {
 public:
  // file_sizes: bytes of each file, in the order workers refer to them by index.
  RankProgress(std::vector<size_t> file_sizes, DirectoryProgressFn sink);

  // Ingest of file `file` has read `consumed` of its bytes (thread-safe).
  void bytes_read(size_t file, size_t consumed);
  // File `file` is finished, loaded or not; its bytes count as read (thread-safe).
  void file_done(size_t file);

  // The totals as they stand (thread-safe).
  DirectoryProgress snapshot() const;

 private:
  void emit_locked(bool force);

  mutable std::mutex mutex_;
  std::vector<size_t> sizes_;
  std::vector<size_t> read_;
  DirectoryProgressFn sink_;
  DirectoryProgress now_;
  size_t emitted_bytes_ = 0;
  size_t step_ = 1;  // bytes between two calls of the sink (0.1% of the total), unless a file ends
};

}  // namespace attnprof::ranks
