#include "attnprof/trace_index.h"

#include <algorithm>
#include <charconv>
#include <future>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "attnprof/kineto_keys.h"

namespace attnprof {
namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";

bool is_cpu_side(const Slice& s) {
  switch (s.cat) {
    case Category::kCpuOp:
    case Category::kUserAnnotation:
    case Category::kPythonFunction:
    case Category::kRuntime:
    case Category::kDriver:
      return true;
    default:
      return false;
  }
}

// Among slices that start together and last as long, the enclosing one comes first:
// Python frames call ops, ops launch kernels.
int nesting_rank(Category c) {
  switch (c) {
    case Category::kPythonFunction: return 0;
    case Category::kUserAnnotation: return 1;
    case Category::kCpuOp: return 2;
    default: return 3;
  }
}

// Nesting order: by start, longer first, then Python frames before annotations before ops
// (nesting_rank), then file order.
struct NestingOrder {
  const Trace& trace;
  bool operator()(uint32_t a, uint32_t b) const {
    const Slice &x = trace.slices[a], &y = trace.slices[b];
    if (x.ts_ns != y.ts_ns) return x.ts_ns < y.ts_ns;
    if (x.dur_ns != y.dur_ns) return x.dur_ns > y.dur_ns;
    const int rx = nesting_rank(x.cat), ry = nesting_rank(y.cat);
    return rx != ry ? rx < ry : a < b;
  }
};

// Merges the sorted neighbours [first, mid) and [mid, last). Only the overlap moves: what
// is already in place at either end is cut off first, so runs that follow each other in time
// (a trace's steps, its profiling windows) cost two binary searches.
void merge_runs(std::vector<uint32_t>& slices, size_t first, size_t mid, size_t last, const NestingOrder& less) {
  const auto b = slices.begin();
  using Diff = std::ptrdiff_t;
  if (!less(b[static_cast<Diff>(mid)], b[static_cast<Diff>(mid - 1)])) return;
  const auto lo = std::upper_bound(b + static_cast<Diff>(first), b + static_cast<Diff>(mid), b[static_cast<Diff>(mid)], less);
  const auto hi = std::lower_bound(b + static_cast<Diff>(mid), b + static_cast<Diff>(last), b[static_cast<Diff>(mid - 1)], less);
  std::inplace_merge(lo, b + static_cast<Diff>(mid), hi, less);
}

// Puts one thread's slices (file order) in nesting order. Kineto writes a thread's events
// in a few sorted runs (ops in one, the Python frames of the same time in another, window
// after window), so the runs are found and merged pairwise, which holds 4 bytes per slice at
// most (inplace_merge's buffer); sorting packed (ts, dur, rank, index) keys held 24 bytes
// per slice of the largest thread, most of a trace's CPU slices (60 MiB at 1 GB), and was
// the peak of the whole analysis.
void sort_for_nesting(const Trace& trace, std::vector<uint32_t>& slices, size_t begin, size_t end) {
  const NestingOrder less{trace};
  std::vector<uint32_t> bounds{static_cast<uint32_t>(begin)};  // where each sorted run starts, then the end
  for (size_t k = begin + 1; k < end; ++k)
    if (less(slices[k], slices[k - 1])) bounds.push_back(static_cast<uint32_t>(k));
  bounds.push_back(static_cast<uint32_t>(end));
  while (bounds.size() > 2) {
    size_t kept = 1;
    for (size_t r = 0; r + 2 < bounds.size(); r += 2) {
      merge_runs(slices, bounds[r], bounds[r + 1], bounds[r + 2], less);
      bounds[kept++] = bounds[r + 2];
    }
    if (bounds[kept - 1] != bounds.back()) bounds[kept++] = bounds.back();  // an odd run out, merged next round
    bounds.resize(kept);
  }
}

// How many slices of each kind a trace holds, from one pass over its slices: the tables
// below are sized from it (no doubling slack on millions of entries).
struct SliceCensus {
  std::vector<uint32_t> cpu_side_per_thread;  // by Trace::threads id
  size_t launches = 0;                        // correlated launch calls
  size_t gpu = 0;                             // kernel, memcpy and memset slices
};

// The ProfilerStep#N number of a user annotation; nullopt for other names.
std::optional<int64_t> step_number(std::string_view name) {
  if (!name.starts_with(kStepPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kStepPrefix.size());
  int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return n;
}

// The census, and the profiler steps (few: they are kept on the way).
SliceCensus count_slices(const Trace& trace, TraceIndex& index) {
  SliceCensus census;
  census.cpu_side_per_thread.assign(trace.threads.size(), 0);
  for (const Slice& s : trace.slices) {
    if (is_cpu_side(s)) ++census.cpu_side_per_thread[s.thread];
    if (is_correlated_launch(s)) ++census.launches;
    else if (is_gpu_activity(s)) ++census.gpu;
    if (s.cat != Category::kUserAnnotation) continue;
    if (const std::optional<int64_t> n = step_number(trace.name_of(s))) index.steps.push_back({*n, s.ts_ns, s.end_ns()});
  }
  std::sort(index.steps.begin(), index.steps.end(),
            [](const StepRange& a, const StepRange& b) { return a.ts_ns < b.ts_ns; });
  return census;
}

// cpu_order: the CPU-side slices grouped by thread, threads in (pid, tid) order, each in
// file order (a counting sort: one array at its size, no list per thread). Returns the
// thread ids in that order.
std::vector<uint32_t> group_cpu_slices_by_thread(const Trace& trace, const SliceCensus& census, TraceIndex& index) {
  std::vector<uint32_t> by_key(trace.threads.size());
  std::iota(by_key.begin(), by_key.end(), 0);
  std::sort(by_key.begin(), by_key.end(),
            [&](uint32_t a, uint32_t b) { return trace.threads.get(a) < trace.threads.get(b); });
  index.thread_order.assign(trace.threads.size(), {});
  uint32_t next = 0;
  for (const uint32_t t : by_key) {
    index.thread_order[t] = {next, next + census.cpu_side_per_thread[t]};
    next = index.thread_order[t].end;
  }
  index.cpu_order.resize(next);
  std::vector<uint32_t> cursor(trace.threads.size());
  for (uint32_t t = 0; t < cursor.size(); ++t) cursor[t] = index.thread_order[t].begin;
  for (uint32_t i = 0; i < trace.slices.size(); ++i)
    if (is_cpu_side(trace.slices[i])) index.cpu_order[cursor[trace.slices[i].thread]++] = i;
  return by_key;
}

void build_cpu_trees(const Trace& trace, const SliceCensus& census, TraceIndex& index) {
  index.has_python_tree = trace.python_frames > 0;  // ingest counts the frames it does not keep
  const std::vector<uint32_t> by_key = group_cpu_slices_by_thread(trace, census, index);  // roots come out in (pid, tid) order
  std::vector<uint32_t> stack;
  for (const uint32_t t : by_key) {
    const TraceIndex::Range r = index.thread_order[t];
    sort_for_nesting(trace, index.cpu_order, r.begin, r.end);
    stack.clear();
    for (size_t k = r.begin; k < r.end; ++k) {
      const uint32_t i = index.cpu_order[k];
      const Slice& s = trace.slices[i];
      if (s.cat == Category::kPythonFunction) index.has_python_tree = true;
      // A slice belongs to the open one when it starts before that one ends (start
      // containment: Kineto's rounding can push a child's end a few ns out).
      while (!stack.empty() && s.ts_ns >= trace.slices[stack.back()].end_ns()) stack.pop_back();
      if (stack.empty()) index.roots.push_back(i);
      else index.parent[i] = stack.back();
      stack.push_back(i);
    }
  }
}

// Slices by a link id (correlation, External id: 32 bits, Slice::link), sorted by (id, slice): lookups find the first
// slice in file order with that id. Sorted pairs hold a tenth of what a node-based hash map
// of the same millions of entries does, and this table sets the peak of an analysis.
class SliceById {
 public:
  void reserve(size_t n) { entries_.reserve(n); }
  void add(uint32_t id, uint32_t slice) { entries_.push_back({id, slice}); }
  void finish() {
    if (!std::is_sorted(entries_.begin(), entries_.end())) std::sort(entries_.begin(), entries_.end());
  }
  uint32_t find(uint32_t id) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{id, 0});
    return it != entries_.end() && it->id == id ? it->slice : kNoSlice;
  }

 private:
  struct Entry {
    uint32_t id;
    uint32_t slice;
    bool operator<(const Entry& o) const { return std::tie(id, slice) < std::tie(o.id, o.slice); }
  };
  std::vector<Entry> entries_;
};

// The cpu_ops with an External id some GPU slice still needs (the fallback link, for
// kernels whose launch was not recorded): none in a trace whose launches were all recorded,
// so this table, which would otherwise hold every op, is then empty.
SliceById ops_by_wanted_external_id(const Trace& trace, std::vector<uint32_t> wanted) {
  SliceById ops;
  if (wanted.empty()) return ops;
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  const auto is_wanted = [&](uint32_t id) { return std::binary_search(wanted.begin(), wanted.end(), id); };
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (s.cat == Category::kCpuOp && s.link != Slice::kNoLink && is_wanted(s.link)) ops.add(s.link, i);
  }
  ops.finish();
  return ops;
}

// Each op's GPU slices in device-time order (`by_time`: gpu_links rows in gpu_slices order),
// grouped by op, as op_ranges rows.
void group_gpu_by_op(const std::vector<uint32_t>& by_time, TraceIndex& index) {
  std::vector<TraceIndex::GpuLink> linked;  // (slice, -, op) of the GPU slices with an op, in device-time order
  for (const uint32_t row : by_time)
    if (const TraceIndex::GpuLink& l = index.gpu_links[row]; l.op != kNoSlice) linked.push_back({l.slice, kNoSlice, l.op});
  std::stable_sort(linked.begin(), linked.end(),
                   [](const TraceIndex::GpuLink& a, const TraceIndex::GpuLink& b) { return a.op < b.op; });
  size_t ops = 0;
  for (size_t i = 0; i < linked.size(); ++i) ops += i == 0 || linked[i].op != linked[i - 1].op;
  index.op_ranges.reserve(ops + 1);  // sized, not doubled: one row per op with GPU work
  index.gpu_items.reserve(linked.size());
  for (const TraceIndex::GpuLink& l : linked) {
    if (index.op_ranges.empty() || index.op_ranges.back().op != l.op)
      index.op_ranges.push_back({l.op, static_cast<uint32_t>(index.gpu_items.size())});
    index.gpu_items.push_back(l.slice);
  }
  index.op_ranges.push_back({kNoSlice, static_cast<uint32_t>(index.gpu_items.size())});
}

// The gpu_links rows in start-time order of their slices (stable: file order among equal starts).
std::vector<uint32_t> gpu_rows_by_time(const Trace& trace, const TraceIndex& index) {
  const auto start_of = [&](uint32_t row) { return trace.slices[index.gpu_links[row].slice].ts_ns; };
  std::vector<uint32_t> rows(index.gpu_links.size());
  std::iota(rows.begin(), rows.end(), 0);
  // Most traces hold their GPU activity in time order already (40 of the 44 fixtures with
  // any): then the rows are in order as they stand, and the (start, row) keys of a sort
  // (16 bytes per GPU slice) are never built.
  if (std::is_sorted(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return start_of(a) < start_of(b); }))
    return rows;
  struct Start {
    int64_t ts_ns;
    uint32_t row;
  };
  std::vector<Start> starts;
  starts.reserve(index.gpu_links.size());
  for (const uint32_t row : rows) starts.push_back({start_of(row), row});
  std::stable_sort(starts.begin(), starts.end(), [](const Start& a, const Start& b) { return a.ts_ns < b.ts_ns; });
  for (size_t i = 0; i < starts.size(); ++i) rows[i] = starts[i].row;
  return rows;
}

// The half of the CPU -> GPU links that needs no CPU tree: each GPU slice's launch (same
// correlation), and the GPU slices in time order. Returns the gpu_links rows in that order.
std::vector<uint32_t> link_gpu_to_launches(const Trace& trace, const SliceCensus& census, TraceIndex& index) {
  SliceById launch_by_correlation;
  launch_by_correlation.reserve(census.launches);
  index.gpu_links.reserve(census.gpu);
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (is_correlated_launch(s)) launch_by_correlation.add(s.link, i);
    else if (is_gpu_activity(s)) index.gpu_links.push_back({i, kNoSlice, kNoSlice});
  }
  launch_by_correlation.finish();
  for (TraceIndex::GpuLink& link : index.gpu_links)
    if (const Slice& k = trace.slices[link.slice]; k.link != Slice::kNoLink) link.launch = launch_by_correlation.find(k.link);
  std::vector<uint32_t> by_time = gpu_rows_by_time(trace, index);
  index.gpu_slices.reserve(by_time.size());
  for (const uint32_t row : by_time) index.gpu_slices.push_back(index.gpu_links[row].slice);
  return by_time;
}

// The other half, once the CPU trees stand: each GPU slice's op (the innermost cpu_op around
// its launch, else the cpu_op of its External id), the orphans, and each op's GPU slices.
void link_gpu_to_ops(const Trace& trace, const std::vector<uint32_t>& by_time, TraceIndex& index) {
  std::vector<uint32_t> wanted_external_ids;
  for (TraceIndex::GpuLink& link : index.gpu_links) {
    if (link.launch != kNoSlice) link.op = parent_op(trace, index, link.launch);
    if (const int64_t external_id = trace.external_id_of(trace.slices[link.slice]); link.op == kNoSlice && external_id != kNoId)
      wanted_external_ids.push_back(static_cast<uint32_t>(external_id));
  }
  if (!wanted_external_ids.empty()) {
    const SliceById op_by_external_id = ops_by_wanted_external_id(trace, std::move(wanted_external_ids));
    for (TraceIndex::GpuLink& link : index.gpu_links) {
      const int64_t external_id = trace.external_id_of(trace.slices[link.slice]);
      if (link.op == kNoSlice && external_id != kNoId) link.op = op_by_external_id.find(static_cast<uint32_t>(external_id));
    }
  }
  for (const uint32_t row : by_time)
    if (const TraceIndex::GpuLink& l = index.gpu_links[row]; l.op == kNoSlice && l.launch == kNoSlice)
      index.orphan_gpu_slices.push_back(l.slice);
  group_gpu_by_op(by_time, index);
}

}  // namespace

// The CPU trees and the GPU launches are independent (they write different fields of the
// index): with a second thread they are built side by side, then the links that need both.
TraceIndex build_trace_index(const Trace& trace, size_t threads) {
  TraceIndex index;
  index.parent.assign(trace.slices.size(), kNoSlice);
  const SliceCensus census = count_slices(trace, index);
  std::vector<uint32_t> gpu_by_time;
  if (threads > 1) {
    std::future<void> beside = std::async(std::launch::async, [&] { gpu_by_time = link_gpu_to_launches(trace, census, index); });
    build_cpu_trees(trace, census, index);
    beside.get();
  } else {
    build_cpu_trees(trace, census, index);
    gpu_by_time = link_gpu_to_launches(trace, census, index);
  }
  link_gpu_to_ops(trace, gpu_by_time, index);
  return index;
}

std::span<const uint32_t> TraceIndex::gpu_of(uint32_t op) const {
  auto it = std::lower_bound(op_ranges.begin(), op_ranges.end(), op,
                             [](const OpGpuRange& r, uint32_t o) { return r.op < o; });
  if (op == kNoSlice || it == op_ranges.end() || it->op != op) return {};
  return {gpu_items.data() + it->begin, gpu_items.data() + std::next(it)->begin};
}

size_t cpu_position(const Trace& trace, const TraceIndex& index, uint32_t slice) {
  const Slice& s = trace.slices[slice];
  if (!is_cpu_side(s)) return index.cpu_order.size();
  const TraceIndex::Range r = index.thread_order[s.thread];
  const auto first = index.cpu_order.begin() + r.begin, last = index.cpu_order.begin() + r.end;
  const auto it = std::lower_bound(first, last, slice, NestingOrder{trace});
  return it != last && *it == slice ? static_cast<size_t>(it - index.cpu_order.begin()) : index.cpu_order.size();
}

uint32_t parent_op(const Trace& trace, const TraceIndex& index, uint32_t slice) {
  for (uint32_t p = index.parent[slice]; p != kNoSlice; p = index.parent[p])
    if (is_cpu_op(trace.slices[p])) return p;
  return kNoSlice;
}

void collect_subtree_gpu(const Trace& trace, const TraceIndex& index, uint32_t slice,
                         std::vector<uint32_t>& out) {
  auto add_direct = [&](uint32_t s) {
    if (!is_cpu_op(trace.slices[s])) return;
    for (const uint32_t g : index.gpu_of(s)) out.push_back(g);
  };
  add_direct(slice);
  for_each_descendant(trace, index, slice, add_direct);
}

std::string_view module_instance_name(std::string_view name) {
  if (!is_module_frame(name)) return {};
  return name.substr(kineto::kModuleFramePrefix.size());
}

// Only the module frames that are still open when the slice starts: a frame that outlives
// its parent (a generator's `next`, which ends when the generator is next resumed) hangs
// later slices under a module call that had already returned.
std::string module_path(const Trace& trace, const TraceIndex& index, uint32_t slice) {
  const int64_t start = trace.slices[slice].ts_ns;
  std::vector<std::string_view> chain;
  for (uint32_t p = index.parent[slice]; p != kNoSlice; p = index.parent[p]) {
    const Slice& s = trace.slices[p];
    if (s.cat != Category::kPythonFunction || s.end_ns() <= start) continue;
    if (auto m = module_instance_name(trace.name_of(s)); !m.empty()) chain.push_back(m);
  }
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!path.empty()) path += '.';
    path += *it;
  }
  return path;
}

int64_t step_at(const TraceIndex& index, int64_t ts_ns) {
  auto it = std::upper_bound(index.steps.begin(), index.steps.end(), ts_ns,
                             [](int64_t t, const StepRange& r) { return t < r.ts_ns; });
  if (it == index.steps.begin()) return -1;
  --it;
  return ts_ns < it->end_ns ? it->number : -1;
}

int64_t gpu_busy_ns(const Trace& trace, const TraceIndex& index) {
  struct Open {
    int64_t start = 0, end = 0, total = 0;
    bool any = false;
  };
  std::unordered_map<int64_t, Open> per_device;
  for (const uint32_t g : index.gpu_slices) {
    const Slice& s = trace.slices[g];
    const GpuArgs* args = trace.gpu_args_of(s);
    Open& o = per_device[args && args->device != kNoId ? args->device : trace.pid_of(s)];
    if (!o.any) {
      o = {s.ts_ns, s.end_ns(), 0, true};
    } else if (s.ts_ns > o.end) {
      o.total += o.end - o.start;
      o.start = s.ts_ns;
      o.end = s.end_ns();
    } else {
      o.end = std::max(o.end, s.end_ns());
    }
  }
  int64_t total = 0;
  for (const auto& [device, o] : per_device)
    if (o.any) total += o.total + (o.end - o.start);
  return total;
}

}  // namespace attnprof
