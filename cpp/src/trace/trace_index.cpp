#include "attnprof/trace_index.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace attnprof {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";
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

// The CPU-side slices of each thread, threads in (pid, tid) order, each in file order. Two
// passes (count, then fill) so that each list is allocated once at its size: doubling slack
// on lists of millions of slices would set the analysis's peak memory. Events of one thread
// come in runs, so the map is looked up when the thread changes, not per slice.
std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> cpu_slices_by_thread(const Trace& trace) {
  struct Thread {
    size_t count = 0;
    std::vector<uint32_t> slices;
  };
  std::map<std::pair<int64_t, int64_t>, Thread> threads;
  const auto for_each_cpu_slice = [&](auto&& visit) {
    Thread* last = nullptr;
    std::pair<int64_t, int64_t> last_key{};
    for (uint32_t i = 0; i < trace.slices.size(); ++i) {
      const Slice& s = trace.slices[i];
      if (!is_cpu_side(s)) continue;
      if (last == nullptr || last_key.first != s.pid || last_key.second != s.tid) {
        last_key = {s.pid, s.tid};
        last = &threads[last_key];
      }
      visit(*last, i);
    }
  };
  for_each_cpu_slice([](Thread& thread, uint32_t) { ++thread.count; });
  for (auto& [key, thread] : threads) thread.slices.reserve(thread.count);
  for_each_cpu_slice([](Thread& thread, uint32_t i) { thread.slices.push_back(i); });
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> lists;
  for (auto& [key, thread] : threads) lists.emplace_hint(lists.end(), key, std::move(thread.slices));
  return lists;
}

// Puts one thread's slices in nesting order: by start, longer first, then Python frames
// before annotations before ops (nesting_rank), then file order. Kineto writes each thread's
// events mostly in that order already, so the sort is skipped when it is; when it is not,
// packed keys held side by side are sorted rather than indices whose comparator would read
// 64-byte slices scattered over the table. One thread at a time: the keys of the largest
// thread, not of the whole trace, are what this holds at its peak.
void sort_for_nesting(const Trace& trace, std::vector<uint32_t>& slices) {
  struct Key {
    int64_t ts, neg_dur;
    uint32_t rank, index;
    bool operator<(const Key& o) const { return std::tie(ts, neg_dur, rank, index) < std::tie(o.ts, o.neg_dur, o.rank, o.index); }
  };
  const auto key_of = [&](uint32_t i) {
    const Slice& s = trace.slices[i];
    return Key{s.ts_ns, -s.dur_ns, static_cast<uint32_t>(nesting_rank(s.cat)), i};
  };
  bool sorted = true;
  for (size_t k = 1; k < slices.size() && sorted; ++k) sorted = !(key_of(slices[k]) < key_of(slices[k - 1]));
  if (sorted) return;
  std::vector<Key> keys;
  keys.reserve(slices.size());
  for (const uint32_t i : slices) keys.push_back(key_of(i));
  std::sort(keys.begin(), keys.end());
  for (size_t k = 0; k < keys.size(); ++k) slices[k] = keys[k].index;
}

void build_cpu_trees(const Trace& trace, TraceIndex& index) {
  std::vector<uint32_t> stack;
  std::vector<uint32_t> last_child;  // last child appended under each stack entry
  for (auto& [thread, slices] : cpu_slices_by_thread(trace)) {
    sort_for_nesting(trace, slices);
    stack.clear();
    last_child.clear();
    for (const uint32_t i : slices) {
      const Slice& s = trace.slices[i];
      if (s.cat == Category::kPythonFunction) index.has_python_tree = true;
      // A slice belongs to the open one when it starts before that one ends (start
      // containment: Kineto's rounding can push a child's end a few ns out).
      while (!stack.empty() && s.ts_ns >= trace.slices[stack.back()].end_ns()) {
        stack.pop_back();
        last_child.pop_back();
      }
      if (stack.empty()) {
        index.roots.push_back(i);
      } else {
        const uint32_t p = stack.back();
        index.parent[i] = p;
        if (last_child.back() == kNoSlice) index.first_child[p] = i;
        else index.next_sibling[last_child.back()] = i;
        last_child.back() = i;
      }
      stack.push_back(i);
      last_child.push_back(kNoSlice);
    }
  }
}

// Slices by an id (correlation, External id), sorted by (id, slice): lookups find the first
// slice in file order with that id. Sorted pairs hold a tenth of what a node-based hash map
// of the same millions of entries does, and this table sets the peak of an analysis.
class SliceById {
 public:
  void reserve(size_t n) { entries_.reserve(n); }
  void add(int64_t id, uint32_t slice) { entries_.push_back({id, slice}); }
  void finish() {
    if (!std::is_sorted(entries_.begin(), entries_.end())) std::sort(entries_.begin(), entries_.end());
  }
  uint32_t find(int64_t id) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), Entry{id, 0});
    return it != entries_.end() && it->id == id ? it->slice : kNoSlice;
  }

 private:
  struct Entry {
    int64_t id;
    uint32_t slice;
    bool operator<(const Entry& o) const { return std::tie(id, slice) < std::tie(o.id, o.slice); }
  };
  std::vector<Entry> entries_;
};

void link_gpu_to_cpu(const Trace& trace, TraceIndex& index) {
  SliceById launch_by_correlation;
  SliceById op_by_external_id;
  size_t launches = 0, ops = 0;  // sized up front: no doubling slack on millions of entries
  for (const Slice& s : trace.slices) {
    if ((s.cat == Category::kRuntime || s.cat == Category::kDriver) && s.correlation != kNoId) ++launches;
    else if (s.cat == Category::kCpuOp && s.external_id != kNoId) ++ops;
  }
  launch_by_correlation.reserve(launches);
  op_by_external_id.reserve(ops);
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if ((s.cat == Category::kRuntime || s.cat == Category::kDriver) && s.correlation != kNoId)
      launch_by_correlation.add(s.correlation, i);
    else if (s.cat == Category::kCpuOp && s.external_id != kNoId)
      op_by_external_id.add(s.external_id, i);
    else if (is_gpu_activity(s))
      index.gpu_slices.push_back(i);
  }
  launch_by_correlation.finish();
  op_by_external_id.finish();
  std::stable_sort(index.gpu_slices.begin(), index.gpu_slices.end(), [&](uint32_t a, uint32_t b) {
    return trace.slices[a].ts_ns < trace.slices[b].ts_ns;
  });
  // gpu_begin[op + 1] counts the op's GPU slices first, then becomes the CSR offsets.
  index.gpu_begin.assign(trace.slices.size() + 1, 0);
  for (const uint32_t g : index.gpu_slices) {
    const Slice& k = trace.slices[g];
    uint32_t op = kNoSlice;
    if (k.correlation != kNoId) {
      if (const uint32_t launch = launch_by_correlation.find(k.correlation); launch != kNoSlice) {
        index.launch_of[g] = launch;
        op = parent_op(trace, index, launch);
      }
    }
    if (op == kNoSlice && k.external_id != kNoId) op = op_by_external_id.find(k.external_id);
    index.op_of[g] = op;
    if (op != kNoSlice) ++index.gpu_begin[op + 1];
    else if (index.launch_of[g] == kNoSlice) index.orphan_gpu_slices.push_back(g);
  }
  for (size_t i = 0; i < trace.slices.size(); ++i) index.gpu_begin[i + 1] += index.gpu_begin[i];
  index.gpu_items.assign(index.gpu_begin.back(), kNoSlice);
  // Fill each op's range from its start, using gpu_begin[op] as the cursor, then shift the
  // cursors (now each op's end) back by one op to restore the starts.
  for (const uint32_t g : index.gpu_slices)
    if (index.op_of[g] != kNoSlice) index.gpu_items[index.gpu_begin[index.op_of[g]]++] = g;
  for (size_t i = trace.slices.size(); i > 0; --i) index.gpu_begin[i] = index.gpu_begin[i - 1];
  index.gpu_begin[0] = 0;
}

void find_steps(const Trace& trace, TraceIndex& index) {
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kUserAnnotation) continue;
    const std::string_view name = trace.name_of(s);
    if (!name.starts_with(kStepPrefix)) continue;
    const std::string_view digits = name.substr(kStepPrefix.size());
    int64_t n = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) continue;
    index.steps.push_back({n, s.ts_ns, s.end_ns()});
  }
  std::sort(index.steps.begin(), index.steps.end(),
            [](const StepRange& a, const StepRange& b) { return a.ts_ns < b.ts_ns; });
}

}  // namespace

TraceIndex build_trace_index(const Trace& trace) {
  TraceIndex index;
  const size_t n = trace.slices.size();
  index.parent.assign(n, kNoSlice);
  index.first_child.assign(n, kNoSlice);
  index.next_sibling.assign(n, kNoSlice);
  index.launch_of.assign(n, kNoSlice);
  index.op_of.assign(n, kNoSlice);
  build_cpu_trees(trace, index);
  link_gpu_to_cpu(trace, index);
  find_steps(trace, index);
  return index;
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
    for (uint32_t i = index.gpu_begin[s]; i < index.gpu_begin[s + 1]; ++i) out.push_back(index.gpu_items[i]);
  };
  add_direct(slice);
  for_each_descendant(index, slice, add_direct);
}

std::string_view module_instance_name(std::string_view name) {
  if (!name.starts_with(kModulePrefix)) return {};
  return name.substr(kModulePrefix.size());
}

std::string module_path(const Trace& trace, const TraceIndex& index, uint32_t slice) {
  std::vector<std::string_view> chain;
  for (uint32_t p = index.parent[slice]; p != kNoSlice; p = index.parent[p]) {
    const Slice& s = trace.slices[p];
    if (s.cat != Category::kPythonFunction) continue;
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
    Open& o = per_device[args && args->device != kNoId ? args->device : s.pid];
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
