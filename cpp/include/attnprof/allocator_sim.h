// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp; the ROCm
// build is the same code through HIP): what counts against a memory cap is reserved memory
// (segments), which block rounding, segment sizes, splitting and fragmentation push above the
// allocated bytes. The rules and the PyTorch commit they were read from: docs/cost.md,
// "Allocator simulation".
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include "attnprof/error.h"

namespace attnprof {

// The caching allocator's size constants (c10/cuda/CUDACachingAllocator.cpp, docs/cost.md
// section 7), one copy for the simulator and the settings parser.
namespace caching_allocator {
inline constexpr int64_t kMiB = 1024 * 1024;
inline constexpr int64_t kMinBlockSize = 512;        // every request is rounded to this
inline constexpr int64_t kSmallSize = kMiB;          // largest small-pool request
inline constexpr int64_t kSmallBuffer = 2 * kMiB;    // small-pool segment
inline constexpr int64_t kLargeBuffer = 20 * kMiB;   // segment of a 1-10 MiB request
inline constexpr int64_t kMinLargeAlloc = 10 * kMiB; // from here segments are the request rounded
inline constexpr int64_t kRoundLarge = 2 * kMiB;     // ... up to this
}  // namespace caching_allocator

// The PYTORCH_CUDA_ALLOC_CONF options that change where blocks go.
struct AllocatorConfig {
  bool expandable_segments = false;
  int64_t max_split_size = std::numeric_limits<int64_t>::max();  // bytes; max = unlimited
  // A request >= max_split_size may take a cached oversize block at most this much larger.
  int64_t max_non_split_rounding = 20 * 1024 * 1024;
  // Divisions per power-of-two interval of the request size, interval k = [2^k, 2^(k+1)) MiB
  // (k = 0 also holds everything below 1 MiB, the last one everything above); 0 or 1 = off.
  std::vector<int64_t> roundup_power2_divisions = std::vector<int64_t>(16, 0);
  double garbage_collection_threshold = 0;  // 0 = off; only acts under a memory cap
};

// Parses a PYTORCH_CUDA_ALLOC_CONF string ("expandable_segments:True,max_split_size_mb:128",
// "roundup_power2_divisions:[256:1,512:2,>:4]", "garbage_collection_threshold:0.6").
// Keys that do not change the simulation (pinned_*, release_lock_on_cudamalloc, backend) are
// accepted and ignored. Errors (never throws): kInvalidArgument naming the option and value.
Result<AllocatorConfig> parse_allocator_config(std::string_view text);

// Size the allocator hands out for a request: 512 B multiples, or the next power-of-two
// division when roundup_power2_divisions applies.
int64_t allocator_round_size(const AllocatorConfig& config, int64_t bytes);

// Segment the allocator asks the driver for when no cached block fits a rounded request:
// 2 MiB for <= 1 MiB (small pool), 20 MiB for < 10 MiB, else rounded up to 2 MiB.
int64_t allocator_segment_size(int64_t rounded_bytes);

// One device's caching allocator, one stream, with its CUDA-graph private pools. Handles are
// the caller's names for blocks.
class CachingAllocatorSim {
 public:
  // limit_bytes: the reserved-memory cap (set_per_process_memory_fraction, or the device's
  // memory left to PyTorch); 0 = no cap.
  explicit CachingAllocatorSim(AllocatorConfig config = {}, int64_t limit_bytes = 0);
  ~CachingAllocatorSim();
  CachingAllocatorSim(CachingAllocatorSim&&) noexcept;
  CachingAllocatorSim& operator=(CachingAllocatorSim&&) noexcept;

  // False when the allocator would raise OutOfMemoryError (after releasing every cached
  // segment without a live block and retrying); the handle is then not allocated.
  bool malloc(uint64_t handle, int64_t bytes);
  // Frees a live handle; unknown handles are ignored (the caller's trace may hold frees of
  // blocks allocated before it began).
  void free(uint64_t handle);
  // torch.cuda.empty_cache(): releases every segment without a live block, except those of a
  // private pool whose graphs are alive.
  void empty_cache();
  // CUDA-graph capture (CUDAGraph::capture_begin calls beginAllocateToPool): until
  // end_allocate_to_pool, requests are served from private pool `pool_id` (>= 1, created on
  // first use; captures that share a pool pass the same id), which has large and small pools
  // of its own and shares no free block with the default pool. Blocks keep their pool: freed
  // after the capture, they return to it. While a capture is underway an OOM is raised without
  // first releasing every cached segment.
  void begin_allocate_to_pool(int pool_id);
  void end_allocate_to_pool();
  // releasePool (the pool's last graph was destroyed): empty_cache and the OOM retry may now
  // release its segments without a live block.
  void release_pool(int pool_id);
  // Pool id of a live handle's block (0 = default pool); -1 when the handle is not live.
  int pool_of(uint64_t handle) const;
  // Reserved memory no request can be served from (free cache a recording shows its pass could
  // not use, such as a CUDA-graph private pool's): counts against the cap, is never placed
  // and never released.
  void hold_unusable(int64_t bytes);

  int64_t reserved_bytes() const;   // torch.cuda.memory_reserved()
  int64_t allocated_bytes() const;  // torch.cuda.memory_allocated() (rounded block sizes)
  int64_t peak_reserved_bytes() const;
  int64_t peak_allocated_bytes() const;
  int64_t segment_count() const;
  // Address of a live handle's block in the simulator's own address space (segments are
  // placed at increasing addresses); -1 when the handle is not live.
  int64_t address_of(uint64_t handle) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace attnprof
