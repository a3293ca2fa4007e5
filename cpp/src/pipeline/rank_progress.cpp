#include "pipeline/rank_progress.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace attnprof::ranks {

RankProgress::RankProgress(std::vector<size_t> file_sizes, DirectoryProgressFn sink)
    : sizes_(std::move(file_sizes)), read_(sizes_.size(), 0), sink_(std::move(sink)) {
  now_.files_total = sizes_.size();
  now_.bytes_total = std::accumulate(sizes_.begin(), sizes_.end(), size_t{0});
  step_ = std::max<size_t>(1, now_.bytes_total / 1000);
}

void RankProgress::bytes_read(size_t file, size_t consumed) {
  std::lock_guard lock(mutex_);
  // A file's count only grows and never passes its size, so the sum never decreases.
  consumed = std::min(consumed, sizes_[file]);
  if (consumed <= read_[file]) return;
  now_.bytes_done += consumed - read_[file];
  read_[file] = consumed;
  emit_locked(false);
}

void RankProgress::file_done(size_t file) {
  std::lock_guard lock(mutex_);
  now_.bytes_done += sizes_[file] - read_[file];
  read_[file] = sizes_[file];
  ++now_.files_done;
  emit_locked(true);
}

DirectoryProgress RankProgress::snapshot() const {
  std::lock_guard lock(mutex_);
  return now_;
}

void RankProgress::emit_locked(bool force) {
  if (!sink_) return;
  if (!force && now_.bytes_done - emitted_bytes_ < step_) return;
  emitted_bytes_ = now_.bytes_done;
  sink_(now_);
}

}  // namespace attnprof::ranks
