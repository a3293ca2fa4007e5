// A pass's allocation sequence from [memory] events, and its replay through the allocator
// model (docs/cost.md, "Allocator simulation").
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analysis/memory_timeline.h"
#include "attnprof/memory_sim.h"
#include "attnprof/trace_index.h"
#include "attnprof/vocabulary.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

constexpr int64_t kAgreementTolerance = 2 * 1024 * 1024;
constexpr uint64_t kOpaqueHandle = ~uint64_t{0};
constexpr uint64_t kCarriedBase = uint64_t{1} << 62;
constexpr uint64_t kSeedBase = uint64_t{3} << 62;
constexpr int64_t kSmallSegment = 2 * 1024 * 1024;  // allocator_segment_size of a small request
constexpr int64_t kSmallRequest = 1024 * 1024;      // the small pool's largest request
constexpr int64_t kLargeSegmentMin = 10 * 1024 * 1024;  // smallest request given its own segment

// Most bytes the pass holds live at once in small-pool blocks (<= 1 MiB rounded) of one pool,
// rounded up to whole small segments: the small-pool free space a recording whose small
// requests never grew Total Reserved must have held there, since more would have grown it.
int64_t small_pool_need(const AllocationSequence& seq, const AllocatorConfig& config, int32_t pool) {
  std::vector<int64_t> rounded(seq.steps.size(), 0);
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < seq.steps.size(); ++i) {
    const AllocationStep& step = seq.steps[i];
    if (!step.is_free()) {
      const int64_t r = allocator_round_size(config, step.bytes);
      if (r <= kSmallRequest && step.pool == pool) live += rounded[i] = r;
    } else if (step.frees >= 0) {
      live -= rounded[static_cast<size_t>(step.frees)];
    }
    peak = std::max(peak, live);
  }
  return (peak + kSmallSegment - 1) / kSmallSegment * kSmallSegment;
}

uint64_t step_handle(int pass, size_t step) { return (static_cast<uint64_t>(pass) << 32) | step; }

// A CUDA/HIP graph capture on one CPU thread: from the stream-capture begin call to the end
// of the end call (CUDAGraph::capture_begin enters the allocator's private pool just before
// cudaStreamBeginCapture, capture_end leaves it just after cudaStreamEndCapture).
struct CaptureRange {
  int64_t tid = 0;
  int64_t begin_ns = 0, end_ns = 0;
};


std::vector<CaptureRange> capture_ranges(const Trace& trace) {
  // Roles per interned name: a trace repeats a few runtime call names millions of times.
  std::vector<RuntimeCallRole> role(trace.strings.size(), RuntimeCallRole::kNone);
  std::vector<bool> known(trace.strings.size(), false);
  const auto role_of = [&](const Slice& s) {
    if (s.name >= role.size()) return runtime_call_role(trace.name_of(s));
    if (!known[s.name]) role[s.name] = runtime_call_role(trace.name_of(s)), known[s.name] = true;
    return role[s.name];
  };
  std::vector<std::pair<const Slice*, bool>> calls;  // (call, begins a capture)
  for (const auto& s : trace.slices) {
    if (!is_launch_call(s.cat)) continue;
    const RuntimeCallRole r = role_of(s);
    if (r == RuntimeCallRole::kCaptureBegin || r == RuntimeCallRole::kCaptureEnd)
      calls.emplace_back(&s, r == RuntimeCallRole::kCaptureBegin);
  }
  std::sort(calls.begin(), calls.end(), [](const auto& a, const auto& b) { return a.first->ts_ns < b.first->ts_ns; });
  std::map<int64_t, std::vector<int64_t>> open;  // tid -> begin times of captures not yet ended
  std::vector<CaptureRange> ranges;
  for (const auto& [s, begins_capture] : calls) {
    auto& begins = open[trace.tid_of(*s)];
    if (begins_capture) {
      begins.push_back(s->ts_ns);
    } else if (!begins.empty()) {
      ranges.push_back({trace.tid_of(*s), begins.back(), s->end_ns()});
      begins.pop_back();
    }
  }
  return ranges;
}

// Finds the capture whose range holds an event on its thread: per thread, the captures by
// start time with the latest end among them so far (a serving engine captures thousands of
// graphs one after another: no scan of them per event, and nested captures are still found).
class CaptureLookup {
 public:
  explicit CaptureLookup(const std::vector<CaptureRange>& captures) : captures_(captures) {
    for (size_t c = 0; c < captures.size(); ++c) by_thread_[captures[c].tid].push_back({captures[c].begin_ns, 0, c});
    for (auto& [tid, starts] : by_thread_) {
      std::sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.begin_ns < b.begin_ns; });
      int64_t reach = INT64_MIN;
      for (Start& st : starts) st.reach_ns = reach = std::max(reach, captures_[st.capture].end_ns);
    }
  }
  // Index of the capture around an event at ts_ns on thread tid, or -1. Of nested
  // captures, the innermost (the latest begun).
  int64_t of(int64_t tid, int64_t ts_ns) const {
    const auto thread = by_thread_.find(tid);
    if (thread == by_thread_.end()) return -1;
    const auto& starts = thread->second;
    auto it = std::upper_bound(starts.begin(), starts.end(), ts_ns,
                               [](int64_t ts, const Start& st) { return ts < st.begin_ns; });
    while (it != starts.begin()) {
      --it;
      if (it->reach_ns < ts_ns) break;  // no capture begun this early is still open
      if (captures_[it->capture].end_ns >= ts_ns) return static_cast<int64_t>(it->capture);
    }
    return -1;
  }

 private:
  struct Start {
    int64_t begin_ns = 0;
    int64_t reach_ns = 0;  // latest end of this and every earlier capture of the thread
    size_t capture = 0;
  };
  const std::vector<CaptureRange>& captures_;
  std::map<int64_t, std::vector<Start>> by_thread_;
};

// The capture whose private pool each capture allocates from (a representative capture per
// pool). Captures share a pool (torch.cuda.graph(pool=...): vLLM and SGLang capture every
// graph into one) exactly when their blocks overlap in address: memory of one live private
// pool is never handed to another. Captures whose blocks overlap no other's get a pool each.
struct CaptureBlock {
  uint64_t begin = 0, end = 0;
  size_t capture = 0;
};
std::vector<size_t> shared_pool_roots(size_t captures, std::vector<CaptureBlock> blocks) {
  std::vector<size_t> parent(captures);
  for (size_t c = 0; c < captures; ++c) parent[c] = c;
  const auto root = [&](size_t c) {
    while (parent[c] != c) c = parent[c] = parent[parent[c]];
    return c;
  };
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  uint64_t cluster_end = 0;
  size_t cluster_capture = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i > 0 && blocks[i].begin < cluster_end) {
      parent[root(blocks[i].capture)] = root(cluster_capture);
      cluster_end = std::max(cluster_end, blocks[i].end);
    } else {
      cluster_end = blocks[i].end;
      cluster_capture = blocks[i].capture;
    }
  }
  std::vector<size_t> roots(captures);
  for (size_t c = 0; c < captures; ++c) roots[c] = root(c);
  return roots;
}

// Pool of each event (0 = default; 1, 2, ... = private pools in order of first allocation)
// and the number of private pools.
struct EventPools {
  std::vector<int32_t> of_event;
  int32_t private_pools = 0;
};
EventPools event_pools(const Trace& trace, const analysis::MemoryTimeline& events) {
  EventPools pools;
  pools.of_event.assign(events.size(), 0);
  const std::vector<CaptureRange> captures = capture_ranges(trace);
  if (captures.empty()) return pools;
  const CaptureLookup lookup(captures);
  std::vector<int64_t> capture(events.size(), -1);
  std::vector<CaptureBlock> blocks;
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    if (e.bytes <= 0 || (capture[i] = lookup.of(trace.tid_of(e), e.ts_ns)) < 0) continue;
    const auto begin = static_cast<uint64_t>(e.addr);
    blocks.push_back({begin, begin + static_cast<uint64_t>(allocator_round_size({}, e.bytes)),
                      static_cast<size_t>(capture[i])});
  }
  const std::vector<size_t> roots = shared_pool_roots(captures.size(), std::move(blocks));
  std::map<size_t, int32_t> id_of_root;
  for (size_t i = 0; i < events.size(); ++i) {
    if (capture[i] < 0) continue;
    const auto [it, added] = id_of_root.emplace(roots[static_cast<size_t>(capture[i])], pools.private_pools + 1);
    if (added) ++pools.private_pools;
    pools.of_event[i] = it->second;
  }
  return pools;
}

// Innermost CPU op around each event, by a sweep over each thread's ops in time order.
std::vector<std::string> enclosing_ops(const Trace& trace, const analysis::MemoryTimeline& events) {
  std::map<int64_t, std::vector<const Slice*>> ops_by_tid;
  for (const auto& s : trace.slices)
    if (is_cpu_op(s)) ops_by_tid[trace.tid_of(s)].push_back(&s);
  for (auto& [tid, ops] : ops_by_tid)
    std::sort(ops.begin(), ops.end(), [](const Slice* a, const Slice* b) {
      return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns : a->dur_ns > b->dur_ns;
    });
  std::vector<std::string> names(events.size());
  std::map<int64_t, std::pair<size_t, std::vector<const Slice*>>> cursor;  // tid -> (next op, open ops)
  for (size_t i = 0; i < events.size(); ++i) {
    const int64_t tid = trace.tid_of(events[i]);
    const auto found = ops_by_tid.find(tid);
    if (found == ops_by_tid.end()) continue;
    auto& [next, open] = cursor[tid];
    const auto& ops = found->second;
    const int64_t ts = events[i].ts_ns;
    while (next < ops.size() && ops[next]->ts_ns <= ts) {
      while (!open.empty() && open.back()->end_ns() < ops[next]->ts_ns) open.pop_back();
      open.push_back(ops[next++]);
    }
    while (!open.empty() && open.back()->end_ns() < ts) open.pop_back();
    if (!open.empty()) names[i] = std::string(trace.name_of(*open.back()));
  }
  return names;
}

// Layer of the last forward attention call that started at or before ts.
class LayerClock {
 public:
  explicit LayerClock(const Report& report) {
    for (const auto& call : report.calls)
      if (call.direction != direction::kBackward) starts_.emplace_back(call.cpu_ts_ns, call.layer);
    std::sort(starts_.begin(), starts_.end());
  }
  int64_t at(int64_t ts) const {
    const auto it = std::upper_bound(starts_.begin(), starts_.end(), std::pair<int64_t, int64_t>{ts, INT64_MAX});
    return it == starts_.begin() ? -1 : std::prev(it)->second;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> starts_;
};

struct PassRunner {
  const AllocationSequence& seq;
  CachingAllocatorSim sim;
  std::vector<bool> carried_live;
  std::vector<std::pair<size_t, int64_t>> seeded_regions;  // (index in free_regions, simulated address)
  std::vector<int64_t> placed;                             // simulated address per step, when tracked
  bool track_addresses = false;

  PassRunner(const AllocationSequence& s, const SimulationOptions& o)
      : seq(s), sim(o.config, o.limit_bytes), carried_live(s.carried.size(), false) {}

  bool setup(const SimulationOptions& o) {
    if (seq.opaque_bytes > 0 && !sim.malloc(kOpaqueHandle, seq.opaque_bytes)) return false;
    if (!restore_carried()) return false;
    const int64_t free_cache = o.initial_reserved > 0 ? o.initial_reserved - sim.reserved_bytes() : seq.held_free;
    return seed_free_cache(free_cache, o.config);
  }
  // Free cached memory the process held before the pass, as free segments: the small-pool
  // part the pass can use (small_pool_need) in 2 MiB segments, then the free regions the
  // addresses show, each its own segment (largest first, while the free cache holds them),
  // then the rest as one large-pool segment (the most reusable layout: one block, split per
  // request), or held unusable when the recording shows the pass could not use it. Created by
  // allocating and freeing blocks that fill whole segments, so the allocator's rules place them.
  // Each private pool (of the captures) gets its own small-pool space and the regions its
  // allocations were seen in; the untouched rest is the default pool's.
  bool seed_free_cache(int64_t free_bytes, const AllocatorConfig& config) {
    free_bytes = free_bytes / kSmallSegment * kSmallSegment;
    if (free_bytes <= 0) return true;
    const auto pools = static_cast<int32_t>(seq.private_small_pool_grew.size()) + 1;
    std::vector<int64_t> small(static_cast<size_t>(pools), 0);
    int64_t rest = free_bytes;
    for (int32_t p = 0; p < pools; ++p) {
      const bool grew = p == 0 ? seq.small_pool_grew : seq.private_small_pool_grew[static_cast<size_t>(p - 1)];
      small[static_cast<size_t>(p)] = grew ? 0 : std::min(rest, small_pool_need(seq, config, p));
      rest -= small[static_cast<size_t>(p)];
    }
    std::vector<std::pair<int32_t, int64_t>> segments;  // (pool, bytes)
    std::vector<size_t> regions;
    for (size_t k : regions_largest_first()) {
      const int64_t segment = allocator_segment_size(allocator_round_size(config, seq.free_regions[k].bytes));
      if (segment > rest) continue;
      segments.emplace_back(seq.free_regions[k].pool, segment);
      regions.push_back(k);
      rest -= segment;
    }
    if (seq.untouched_cache_unusable) {
      sim.hold_unusable(rest);
      rest = 0;
    } else if (rest < kLargeSegmentMin) {  // a smaller large segment does not exist
      small[0] += rest;
      rest = 0;
    }
    if (rest > 0) segments.emplace_back(0, rest);
    return seed_segments(small, segments, regions);
  }
  // Allocates the small pools' segments (two small requests fill one), then the large
  // segments (the first ones in the recorded regions), and frees them all into the cache.
  bool seed_segments(const std::vector<int64_t>& small, const std::vector<std::pair<int32_t, int64_t>>& segments,
                     const std::vector<size_t>& regions) {
    std::vector<uint64_t> seeded;
    const auto seed = [&](int32_t pool, int64_t bytes) {
      seeded.push_back(kSeedBase + seeded.size());
      sim.begin_allocate_to_pool(pool);
      const bool ok = sim.malloc(seeded.back(), bytes);
      sim.end_allocate_to_pool();
      return ok;
    };
    for (size_t p = 0; p < small.size(); ++p)
      for (int64_t b = 0; b < small[p]; b += kSmallSegment)
        if (!seed(static_cast<int32_t>(p), kSmallRequest) || !seed(static_cast<int32_t>(p), kSmallRequest)) return false;
    for (size_t j = 0; j < segments.size(); ++j) {
      if (!seed(segments[j].first, segments[j].second)) return false;
      if (j < regions.size()) seeded_regions.emplace_back(regions[j], sim.address_of(seeded.back()));
    }
    for (uint64_t h : seeded) sim.free(h);
    return true;
  }
  std::vector<size_t> regions_largest_first() const {
    std::vector<size_t> order(seq.free_regions.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return seq.free_regions[a].bytes > seq.free_regions[b].bytes; });
    return order;
  }
  bool restore_carried() {
    for (size_t k = 0; k < seq.carried.size(); ++k)
      if (!carried_live[k]) {
        if (!sim.malloc(kCarriedBase + k, seq.carried[k])) return false;
        carried_live[k] = true;
      }
    return true;
  }
  // Runs one pass; returns the failing step or -1.
  int64_t run(int pass, std::vector<int64_t>* reserved_after) {
    for (size_t i = 0; i < seq.steps.size(); ++i) {
      const AllocationStep& step = seq.steps[i];
      if (!step.is_free()) {
        sim.begin_allocate_to_pool(step.pool);  // pool 0: no capture underway
        const bool ok = sim.malloc(step_handle(pass, i), step.bytes);
        sim.end_allocate_to_pool();
        if (!ok) return static_cast<int64_t>(i);
        if (track_addresses) placed[i] = sim.address_of(step_handle(pass, i));
      } else if (step.frees >= 0) {
        sim.free(step_handle(pass, static_cast<size_t>(step.frees)));
      } else {
        const auto k = static_cast<size_t>(-step.frees - 1);
        sim.free(kCarriedBase + k);
        carried_live[k] = false;
      }
      if (reserved_after) reserved_after->push_back(sim.reserved_bytes());
    }
    return -1;
  }
  // What the caller drops after a pass (its outputs) is freed before the next one.
  void end_pass(int pass) {
    for (size_t i = 0; i < seq.steps.size(); ++i)
      if (!seq.steps[i].is_free()) sim.free(step_handle(pass, i));
  }
};

// An address range: a block the allocator handed out, or memory that was not free cache when
// the recording began.
struct AddressRange {
  uint64_t begin = 0, end = 0;
};

// The large-pool free blocks the recording began with, as far as its addresses show: every
// large-pool allocation lies inside one free block of one segment, so allocations whose
// ranges overlap (transitively) share a block; ranges that merely touch may be two segments
// cudaMalloc placed side by side, so they stay apart. A block is left out when it overlaps
// memory that was not free at the start: a segment the recording created (from the address of
// the allocation that grew Total Reserved, as long as the growth: a new segment's first block
// is at its start) or a block allocated before the recording that it frees.
// Sorted by start, overlapping ranges merged into one.
std::vector<AddressRange> merge_overlapping(std::vector<AddressRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
  std::vector<AddressRange> merged;
  for (const AddressRange& r : ranges) {
    if (!merged.empty() && r.begin < merged.back().end) {
      merged.back().end = std::max(merged.back().end, r.end);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

// Per pool: ranges[p] are the large-pool blocks pool p's allocations were seen in.
std::vector<FreeRegion> free_regions_seen(std::vector<std::vector<AddressRange>> ranges, std::vector<AddressRange> not_free) {
  not_free = merge_overlapping(std::move(not_free));  // disjoint, sorted: one lookup per block
  std::vector<FreeRegion> regions;
  for (size_t pool = 0; pool < ranges.size(); ++pool)
    for (const AddressRange& m : merge_overlapping(std::move(ranges[pool]))) {
      // The first not-free range ending after m begins is the only one that can overlap it.
      const auto n = std::upper_bound(not_free.begin(), not_free.end(), m.begin,
                                      [](uint64_t addr, const AddressRange& r) { return addr < r.end; });
      const bool was_free = n == not_free.end() || n->begin >= m.end;
      if (was_free) regions.push_back({m.begin, static_cast<int64_t>(m.end - m.begin), static_cast<int32_t>(pool)});
    }
  return regions;
}

}  // namespace

Result<AllocationSequence> allocation_sequence(const Trace& trace, const Report& report) {
  const analysis::MemoryTimeline events(trace);
  if (events.empty() || events[0].device_type == 0)
    return make_error(ErrorCode::kUnsupported,
                      fmt::format("{}: no CUDA/ROCm [memory] events (a CPU trace's allocator is not PyTorch's "
                                  "caching allocator, so there is nothing to replay)",
                                  trace.path));
  AllocationSequence seq;
  seq.file = trace.path;
  const std::vector<std::string> ops = enclosing_ops(trace, events);
  const LayerClock layers(report);
  const EventPools pools = event_pools(trace, events);
  seq.private_small_pool_grew.assign(static_cast<size_t>(pools.private_pools), false);
  std::unordered_map<int64_t, int32_t> live;  // address -> step that allocated it
  int64_t carried_total = 0;
  std::vector<std::vector<AddressRange>> large_ranges(static_cast<size_t>(pools.private_pools) + 1);
  std::vector<AddressRange> not_free;
  int64_t previous_reserved = events[0].total_reserved;
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& e = events[i];
    const int32_t pool = pools.of_event[i];
    const int64_t growth = e.total_reserved - previous_reserved;
    previous_reserved = e.total_reserved;
    if (growth > 0 && e.bytes > 0) {
      const bool small = allocator_round_size({}, e.bytes) <= kSmallRequest;
      if (pool > 0 && small) seq.private_small_pool_grew[static_cast<size_t>(pool - 1)] = true;
      if (pool == 0) (small ? seq.small_pool_grew : seq.untouched_cache_unusable) = true;
      not_free.push_back({static_cast<uint64_t>(e.addr), static_cast<uint64_t>(e.addr + growth)});
    }
    if (e.bytes == 0) continue;
    AllocationStep step;
    step.op = ops[i];
    step.layer = layers.at(e.ts_ns);
    step.recorded_reserved = e.total_reserved;
    step.addr = static_cast<uint64_t>(e.addr);
    if (e.bytes > 0) {
      step.bytes = e.bytes;
      step.pool = pool;
      live[e.addr] = static_cast<int32_t>(seq.steps.size());
      if (const int64_t rounded = allocator_round_size({}, e.bytes); rounded > kSmallRequest)
        large_ranges[static_cast<size_t>(pool)].push_back(
            {static_cast<uint64_t>(e.addr), static_cast<uint64_t>(e.addr + rounded)});
    } else if (const auto it = live.find(e.addr); it != live.end()) {
      step.frees = it->second;
      live.erase(it);
    } else {
      seq.carried.push_back(-e.bytes);
      not_free.push_back({static_cast<uint64_t>(e.addr), static_cast<uint64_t>(e.addr - e.bytes)});
      carried_total += -e.bytes;
      step.frees = -static_cast<int32_t>(seq.carried.size());
    }
    seq.steps.push_back(std::move(step));
  }
  seq.opaque_bytes = std::max<int64_t>(0, events.baseline() - carried_total);
  seq.initial_reserved = events[0].total_reserved;
  seq.free_regions = free_regions_seen(std::move(large_ranges), std::move(not_free));
  return seq;
}

PassSimulation simulate_pass(const AllocationSequence& seq, const SimulationOptions& options, bool record) {
  PassSimulation result;
  PassRunner runner(seq, options);
  const auto fail = [&](int64_t step) {
    result.fits = false;
    result.failed_step = step;
    result.reserved_at_failure = runner.sim.reserved_bytes();
    result.allocated_at_failure = runner.sim.allocated_bytes();
    return result;
  };
  if (!runner.setup(options)) return fail(-1);
  for (int pass = 0; pass < options.warmup_passes; ++pass) {
    if (const int64_t failed = runner.run(pass, nullptr); failed >= 0) return fail(failed);
    runner.end_pass(pass);
    if (!runner.restore_carried()) return fail(-1);
  }
  // Peak reserved of the measured pass alone (the simulator's own peak spans the warm-up).
  const int measured = options.warmup_passes;
  int64_t peak_reserved = runner.sim.reserved_bytes(), peak_allocated = runner.sim.allocated_bytes();
  std::vector<int64_t> reserved;
  const int64_t failed = runner.run(measured, &reserved);
  for (int64_t r : reserved) peak_reserved = std::max(peak_reserved, r);
  peak_allocated = std::max(peak_allocated, runner.sim.peak_allocated_bytes());
  if (failed >= 0) return fail(failed);
  result.peak_reserved = peak_reserved;
  result.peak_allocated = peak_allocated;
  if (record) result.reserved_after = std::move(reserved);
  return result;
}

AllocatorReplay replay_check(const AllocationSequence& recorded, const AllocatorConfig& config, ReplayStart start) {
  AllocatorReplay replay;
  replay.file = recorded.file;
  // The recording began with the segments of model init and earlier passes already reserved:
  // seeded as free cache, they hold what warm-up passes would have created. From an empty
  // cache (or without a recorded Total Reserved), two warm-up passes of the sequence leave the
  // cache in its steady state.
  const bool seeded = start == ReplayStart::kRecordedFreeCache && recorded.initial_reserved > 0;
  AllocationSequence seq = recorded;
  if (!seeded) {
    seq.held_free = 0;
    seq.free_regions.clear();
  }
  SimulationOptions options;
  options.config = config;
  options.initial_reserved = seeded ? seq.initial_reserved : 0;
  options.warmup_passes = seeded ? 0 : 2;
  const PassSimulation sim = simulate_pass(seq, options, /*record_reserved=*/true);
  int64_t within = 0;
  for (size_t i = 0; i < seq.steps.size() && i < sim.reserved_after.size(); ++i) {
    const int64_t recorded_reserved = seq.steps[i].recorded_reserved;
    if (recorded_reserved < 0) continue;
    ++replay.events;
    const int64_t diff = std::llabs(sim.reserved_after[i] - recorded_reserved);
    replay.largest_difference_bytes = std::max(replay.largest_difference_bytes, diff);
    if (diff <= kAgreementTolerance) ++within;
    replay.recorded_peak_reserved_bytes = std::max(replay.recorded_peak_reserved_bytes, recorded_reserved);
  }
  replay.simulated_peak_reserved_bytes = sim.peak_reserved;
  replay.within_2mib_share = replay.events > 0 ? static_cast<double>(within) / static_cast<double>(replay.events) : 0;
  replay.cannot_know = fmt::format(
      "the recording began mid-run: the {} allocated before it and kept (weights, inputs) are replayed as one "
      "block and the {} blocks allocated before it that it frees as blocks of their size; the free cache it began "
      "with ({} reserved in all at the first event) is {}, because how it was really laid out in segments "
      "beyond the ranges the pass allocates in (free space inside weight segments, segments left split by earlier "
      "passes), other streams and memory outside PyTorch are not in the trace{}",
      bytes_text(static_cast<double>(seq.opaque_bytes)), seq.carried.size(),
      bytes_text(static_cast<double>(recorded.initial_reserved)),
      seeded ? fmt::format("seeded as the {} free regions its addresses show, the small-pool space the pass needs "
                           "and the rest as {}",
                           seq.free_regions.size(),
                           seq.untouched_cache_unusable ? "memory the pass cannot use (it grew its reserved memory "
                                                          "instead)"
                                                        : "one large free block")
             : "not used: the replay starts from an empty cache and two warm-up passes",
      seq.private_small_pool_grew.empty()
          ? ""
          : fmt::format("; the allocations its CPU thread made during its graph captures are replayed in {} CUDA-graph "
                        "private pool(s) (captures share a pool where their blocks overlap), the others, and those of "
                        "other threads, in the default pool",
                        seq.private_small_pool_grew.size()));
  return replay;
}

namespace {

// Index of the region holding addr, or -1.
int64_t region_holding(const std::vector<std::pair<uint64_t, int64_t>>& regions, uint64_t addr) {
  for (size_t k = 0; k < regions.size(); ++k)
    if (addr >= regions[k].first && addr < regions[k].first + static_cast<uint64_t>(regions[k].second))
      return static_cast<int64_t>(k);
  return -1;
}

}  // namespace

PlacementCheck placement_check(const AllocationSequence& seq, const AllocatorConfig& config) {
  PlacementCheck check;
  if (seq.initial_reserved <= 0) return check;
  SimulationOptions options;
  options.config = config;
  options.initial_reserved = seq.initial_reserved;
  PassRunner runner(seq, options);
  if (!runner.setup(options)) return check;
  runner.track_addresses = true;
  runner.placed.assign(seq.steps.size(), -1);
  runner.run(0, nullptr);
  // The same regions twice, as (start, size): where the trace put them, where the simulator did.
  std::vector<std::pair<uint64_t, int64_t>> recorded, simulated;
  for (const auto& [k, sim_addr] : runner.seeded_regions) {
    recorded.emplace_back(seq.free_regions[k].addr, seq.free_regions[k].bytes);
    simulated.emplace_back(static_cast<uint64_t>(sim_addr), seq.free_regions[k].bytes);
  }
  for (size_t i = 0; i < seq.steps.size(); ++i) {
    const AllocationStep& step = seq.steps[i];
    if (step.is_free() || allocator_round_size(config, step.bytes) <= kSmallRequest) continue;
    const int64_t real = region_holding(recorded, step.addr);
    if (real < 0) continue;
    ++check.allocations;
    if (runner.placed[i] < 0 || region_holding(simulated, static_cast<uint64_t>(runner.placed[i])) != real) continue;
    ++check.same_region;
    const auto k = static_cast<size_t>(real);
    if (static_cast<uint64_t>(runner.placed[i]) - simulated[k].first == step.addr - recorded[k].first)
      ++check.same_address;
  }
  return check;
}

}  // namespace attnprof
