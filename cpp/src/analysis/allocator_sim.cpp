// The caching allocator's block bookkeeping: pools of free blocks ordered by (size, address)
// for best fit, blocks split from and merged back into their segment, segments released
// before an OOM is raised (docs/cost.md, "Allocator simulation").
#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_map>

#include "attnprof/allocator_sim.h"

namespace attnprof {
namespace {

using namespace caching_allocator;
// Expandable segments map physical memory in pages of 2 MiB (small pool) and 20 MiB (large).
constexpr int64_t kSmallPage = kSmallBuffer;  // the pools' segment sizes, as PyTorch maps them
constexpr int64_t kLargePage = kLargeBuffer;
constexpr int64_t kAddressSpace = int64_t{1} << 46;  // virtual room of one expandable segment
constexpr int kNone = -1;

struct Block {
  int64_t addr = 0;
  int64_t size = 0;
  bool allocated = false;
  bool mapped = true;
  bool small = false;
  bool expandable = false;
  int pool = 0;  // index into State::pools: 2 * pool id + small
  int prev = kNone;
  int next = kNone;
  int64_t gc_base = 0;  // the pool's lookup count when the block became free
  bool is_split() const { return prev != kNone || next != kNone; }
};

using FreeKey = std::tuple<int64_t, int64_t, int>;  // (size, address, block id)

struct Pool {
  std::set<FreeKey> free;  // mapped free blocks
  int64_t lookups = 0;     // get_free_block calls (the garbage collector's clock)
  int expandable_head = kNone;
  int64_t expandable_base = 0;
};

// Index of a (pool id, size class) in State::pools; pool id 0 is the default pool, ids >= 1
// CUDA-graph private pools (each has a large and a small pool of its own).
size_t pool_index(int pool_id, bool small) { return 2 * static_cast<size_t>(pool_id) + (small ? 1 : 0); }

}  // namespace

struct CachingAllocatorSim::State {
  AllocatorConfig config;
  int64_t limit = 0;
  std::vector<Block> blocks;
  std::vector<int> recycled;
  std::vector<Pool> pools = std::vector<Pool>(2);  // pool_index(id, small)
  std::vector<bool> pool_released = std::vector<bool>(1, false);  // per pool id: its graphs are gone
  int active_pool = 0;  // the pool requests go to: 0, or the private pool of a capture underway
  std::unordered_map<uint64_t, int> live;
  int64_t next_addr = 0;
  int64_t reserved = 0, allocated = 0, peak_reserved = 0, peak_allocated = 0, segments = 0;

  Pool& pool_of(const Block& b) { return pools[static_cast<size_t>(b.pool)]; }
  Pool& request_pool(bool small) { return pools[pool_index(active_pool, small)]; }
  void ensure_pool(int pool_id) {
    if (pools.size() < pool_index(pool_id, true) + 1) pools.resize(pool_index(pool_id, true) + 1);
    if (pool_released.size() < static_cast<size_t>(pool_id) + 1) pool_released.resize(static_cast<size_t>(pool_id) + 1, false);
  }
  FreeKey key(int id) const { return {blocks[static_cast<size_t>(id)].size, blocks[static_cast<size_t>(id)].addr, id}; }
  Block& at(int id) { return blocks[static_cast<size_t>(id)]; }

  int new_block(const Block& b) {
    if (!recycled.empty()) {
      const int id = recycled.back();
      recycled.pop_back();
      at(id) = b;
      return id;
    }
    blocks.push_back(b);
    return static_cast<int>(blocks.size() - 1);
  }
  void drop_block(int id) { recycled.push_back(id); }

  void make_free(int id) {
    Block& b = at(id);
    b.gc_base = pool_of(b).lookups;
    if (b.mapped) pool_of(b).free.insert(key(id));
  }
  void unlist(int id) {
    if (at(id).mapped) pool_of(at(id)).free.erase(key(id));
  }

  void grow_reserved(int64_t bytes) {
    reserved += bytes;
    peak_reserved = std::max(peak_reserved, reserved);
  }

  // Best fit in the pool; the oversize rules keep blocks >= max_split_size for requests of
  // about their size.
  int get_free_block(bool small, int64_t size) {
    Pool& pool = request_pool(small);
    if (config.garbage_collection_threshold > 0 && limit > 0) ++pool.lookups;
    const auto it = pool.free.lower_bound({size, INT64_MIN, INT32_MIN});
    if (it == pool.free.end()) return kNone;
    const int64_t found = std::get<0>(*it);
    if (size < config.max_split_size && found >= config.max_split_size) return kNone;
    if (size >= config.max_split_size && found >= size + config.max_non_split_rounding) return kNone;
    const int id = std::get<2>(*it);
    pool.free.erase(it);
    return id;
  }

  bool over_limit(int64_t more) const { return limit > 0 && reserved + more > limit; }

  int alloc_segment(bool small, int64_t size) {
    const int64_t bytes = allocator_segment_size(size);
    if (over_limit(bytes)) return kNone;
    if (config.expandable_segments) return expand(small, size);
    Block b;
    b.addr = next_addr;
    b.size = bytes;
    b.small = small;
    b.pool = static_cast<int>(pool_index(active_pool, small));
    next_addr += bytes;
    grow_reserved(bytes);
    ++segments;
    return new_block(b);
  }

  // Expandable segments: one segment per pool whose tail is unmapped address space; a request
  // no free block fits maps pages at the lowest address where free and unmapped neighbours
  // together hold it, and the range becomes one free mapped block.
  int expand(bool small, int64_t size) {
    Pool& pool = request_pool(small);
    if (pool.expandable_head == kNone) {
      Block tail;
      tail.addr = next_addr;
      tail.size = kAddressSpace;
      tail.small = small;
      tail.pool = static_cast<int>(pool_index(active_pool, small));
      tail.expandable = true;
      tail.mapped = false;
      pool.expandable_base = next_addr;
      next_addr += kAddressSpace;
      pool.expandable_head = new_block(tail);
      ++segments;
    }
    int start = pool.expandable_head;
    int64_t span = 0;
    for (int id = pool.expandable_head; id != kNone; id = at(id).next) {
      if (at(id).allocated) {
        start = at(id).next;
        span = 0;
        continue;
      }
      span += at(id).size;
      if (span >= size) return map_range(small, start, size);
    }
    return kNone;
  }

  int map_range(bool small, int start, int64_t size) {
    const int64_t page = small ? kSmallPage : kLargePage;
    const int64_t begin = at(start).addr, end = begin + size;
    int id = start;
    while (id != kNone && at(id).addr < end) {
      Block& b = at(id);
      if (!b.mapped) {
        const int64_t want = std::min(b.size, (end - b.addr + page - 1) / page * page);
        if (want < b.size) split_off(id, want);  // the rest stays unmapped
        at(id).mapped = true;
        grow_reserved(at(id).size);
        make_free(id);
      }
      id = at(id).next;
    }
    // One free mapped block from `begin`: merge the run.
    unlist(start);
    for (int n = at(start).next; n != kNone && at(n).addr < end && !at(n).allocated && at(n).mapped;
         n = at(start).next) {
      unlist(n);
      absorb_next(start);
    }
    return start;
  }

  // Splits block `id` at `size`: `id` keeps the front, a new block (same state) the rest.
  int split_off(int id, int64_t size) {
    Block rest = at(id);
    rest.addr += size;
    rest.size -= size;
    rest.prev = id;
    const int r = new_block(rest);
    if (at(r).next != kNone) at(at(r).next).prev = r;
    at(id).next = r;
    at(id).size = size;
    return r;
  }

  void absorb_next(int id) {
    const int n = at(id).next;
    at(id).size += at(n).size;
    at(id).next = at(n).next;
    if (at(id).next != kNone) at(at(id).next).prev = id;
    drop_block(n);
  }

  bool should_split(const Block& b, int64_t size) const {
    const int64_t remaining = b.size - size;
    if (b.small || b.expandable) return remaining >= kMinBlockSize;
    return size < config.max_split_size && remaining > kSmallSize;
  }

  void release_block(int id) {
    unlist(id);
    reserved -= at(id).size;
    --segments;
    drop_block(id);
  }

  // Frees every segment without a live block (expandable: unmaps the whole free pages) of the
  // default pools and of the private pools whose graphs were all destroyed; a live graph's
  // pool keeps its segments (release_cached_blocks walks only graph_pools_freeable).
  void release_cached() {
    for (size_t p = 0; p < pools.size(); ++p) {
      if (p >= 2 && !pool_released[p / 2]) continue;
      std::vector<int> ids;
      for (const auto& k : pools[p].free) ids.push_back(std::get<2>(k));
      for (int id : ids) {
        if (at(id).expandable) unmap_free_pages(id, p % 2 == 1 ? kSmallPage : kLargePage, pools[p].expandable_base);
        else if (!at(id).is_split()) release_block(id);
      }
    }
  }

  void unmap_free_pages(int id, int64_t page, int64_t base) {
    Block& b = at(id);
    const int64_t first = base + (b.addr - base + page - 1) / page * page;
    const int64_t last = base + (b.addr + b.size - base) / page * page;
    if (last <= first) return;
    unlist(id);
    int target = id;
    if (first > at(id).addr) {
      target = split_off(id, first - at(id).addr);
      make_free(id);
    }
    if (at(target).addr + at(target).size > last) {
      const int rest = split_off(target, last - at(target).addr);
      make_free(rest);
    }
    at(target).mapped = false;
    reserved -= at(target).size;
    // Neighbouring unmapped ranges become one, so a later mapping sees the whole hole.
    if (at(target).next != kNone && !at(at(target).next).mapped) absorb_next(target);
    if (at(target).prev != kNone && !at(at(target).prev).mapped) absorb_next(at(target).prev);
  }

  // With max_split_size set: free one oversize cached block >= the request, else oversize
  // blocks from the largest down until their sum covers it.
  bool release_available(bool small, int64_t size) {
    if (config.max_split_size == INT64_MAX) return false;
    Pool& pool = request_pool(small);
    const int64_t want = std::max(size, config.max_split_size);
    auto it = pool.free.lower_bound({want, INT64_MIN, INT32_MIN});
    if (it != pool.free.end()) {
      if (at(std::get<2>(*it)).is_split() || at(std::get<2>(*it)).expandable) return false;
      release_block(std::get<2>(*it));
      return true;
    }
    int64_t released = 0;
    while (released < want && !pool.free.empty()) {
      const int id = std::get<2>(*std::prev(pool.free.end()));
      if (at(id).size < config.max_split_size || at(id).is_split() || at(id).expandable) break;
      released += at(id).size;
      release_block(id);
    }
    return released >= want;
  }

  // garbage_collection_threshold: above threshold * cap, free unsplit large cached blocks at
  // least as old as the average (age = pool lookups since the block became free).
  void garbage_collect() {
    const auto threshold = static_cast<int64_t>(config.garbage_collection_threshold * static_cast<double>(limit));
    if (reserved <= threshold) return;
    const int64_t target = reserved - threshold;
    Pool& pool = pools[0];
    int64_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed) {
      std::vector<int> candidates;
      double total_age = 0;
      for (const auto& k : pool.free)
        if (!at(std::get<2>(k)).is_split() && !at(std::get<2>(k)).expandable) {
          candidates.push_back(std::get<2>(k));
          total_age += static_cast<double>(pool.lookups - at(std::get<2>(k)).gc_base);
        }
      if (candidates.empty()) return;
      const double average = total_age / static_cast<double>(candidates.size());
      freed = false;
      for (int id : candidates)
        if (static_cast<double>(pool.lookups - at(id).gc_base) >= average) {
          reclaimed += at(id).size;
          release_block(id);
          freed = true;
        }
    }
  }

  int find_or_allocate(bool small, int64_t size) {
    int id = get_free_block(small, size);
    if (id != kNone) return id;
    if (config.garbage_collection_threshold > 0 && limit > 0) garbage_collect();
    id = alloc_segment(small, size);
    if (id == kNone && release_available(small, size)) id = alloc_segment(small, size);
    // The last resort runs only when no capture is underway (malloc checks captures_underway).
    if (id == kNone && active_pool == 0) {
      release_cached();
      id = alloc_segment(small, size);
    }
    return id;
  }
};

CachingAllocatorSim::CachingAllocatorSim(AllocatorConfig config, int64_t limit_bytes)
    : state_(std::make_unique<State>()) {
  state_->config = std::move(config);
  state_->limit = limit_bytes;
}
CachingAllocatorSim::~CachingAllocatorSim() = default;
CachingAllocatorSim::CachingAllocatorSim(CachingAllocatorSim&&) noexcept = default;
CachingAllocatorSim& CachingAllocatorSim::operator=(CachingAllocatorSim&&) noexcept = default;

bool CachingAllocatorSim::malloc(uint64_t handle, int64_t bytes) {
  State& s = *state_;
  if (s.live.count(handle)) free(handle);
  const int64_t size = allocator_round_size(s.config, bytes);
  const bool small = size <= kSmallSize;
  const int id = s.find_or_allocate(small, size);
  if (id == kNone) return false;
  if (s.should_split(s.at(id), size)) s.make_free(s.split_off(id, size));
  Block& b = s.at(id);
  b.allocated = true;
  s.allocated += b.size;
  s.peak_allocated = std::max(s.peak_allocated, s.allocated);
  s.live[handle] = id;
  return true;
}

void CachingAllocatorSim::free(uint64_t handle) {
  State& s = *state_;
  const auto it = s.live.find(handle);
  if (it == s.live.end()) return;
  int id = it->second;
  s.live.erase(it);
  s.at(id).allocated = false;
  s.allocated -= s.at(id).size;
  // Merge with free neighbours of the same segment (and the same mapping state).
  const auto mergeable = [&](int other) {
    return other != kNone && !s.at(other).allocated && s.at(other).mapped == s.at(id).mapped;
  };
  if (mergeable(s.at(id).next)) {
    s.unlist(s.at(id).next);
    s.absorb_next(id);
  }
  if (mergeable(s.at(id).prev)) {
    const int p = s.at(id).prev;
    s.unlist(p);
    s.absorb_next(p);
    id = p;
  }
  s.make_free(id);
}

void CachingAllocatorSim::empty_cache() { state_->release_cached(); }

void CachingAllocatorSim::begin_allocate_to_pool(int pool_id) {
  if (pool_id < 1) return;
  state_->ensure_pool(pool_id);
  state_->active_pool = pool_id;
}
void CachingAllocatorSim::end_allocate_to_pool() { state_->active_pool = 0; }
void CachingAllocatorSim::release_pool(int pool_id) {
  if (pool_id < 1) return;
  state_->ensure_pool(pool_id);
  state_->pool_released[static_cast<size_t>(pool_id)] = true;
}
int CachingAllocatorSim::pool_of(uint64_t handle) const {
  const auto it = state_->live.find(handle);
  return it == state_->live.end() ? -1 : state_->blocks[static_cast<size_t>(it->second)].pool / 2;
}
void CachingAllocatorSim::hold_unusable(int64_t bytes) { state_->grow_reserved(bytes); }

int64_t CachingAllocatorSim::reserved_bytes() const { return state_->reserved; }
int64_t CachingAllocatorSim::allocated_bytes() const { return state_->allocated; }
int64_t CachingAllocatorSim::peak_reserved_bytes() const { return state_->peak_reserved; }
int64_t CachingAllocatorSim::peak_allocated_bytes() const { return state_->peak_allocated; }
int64_t CachingAllocatorSim::segment_count() const { return state_->segments; }
int64_t CachingAllocatorSim::address_of(uint64_t handle) const {
  const auto it = state_->live.find(handle);
  return it == state_->live.end() ? -1 : state_->blocks[static_cast<size_t>(it->second)].addr;
}

}  // namespace attnprof
