#include "attnprof/trace_index.h"

#include <algorithm>
#include <charconv>
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

void build_cpu_trees(const Trace& trace, TraceIndex& index) {
  // Sort packed keys held side by side rather than indices whose comparator reads two
  // 64-byte slices scattered over the table (cache misses dominated the sort).
  struct Key {
    int64_t pid, tid, ts, neg_dur;
    uint32_t rank;  // nesting_rank(cat)
    uint32_t index;
    bool operator<(const Key& o) const {
      return std::tie(pid, tid, ts, neg_dur, rank, index) <
             std::tie(o.pid, o.tid, o.ts, o.neg_dur, o.rank, o.index);
    }
  };
  std::vector<Key> keys;
  keys.reserve(trace.slices.size());  // an upper bound; the untouched tail is never paged in
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (is_cpu_side(s))
      keys.push_back(Key{s.pid, s.tid, s.ts_ns, -s.dur_ns, static_cast<uint32_t>(nesting_rank(s.cat)), i});
  }
  // Kineto writes each thread's events mostly in order: skip the sort when they already are.
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  std::vector<uint32_t> order(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].index;
  keys = {};
  std::vector<uint32_t> stack;
  std::vector<uint32_t> last_child;  // last child appended under each stack entry
  for (const uint32_t i : order) {
    const Slice& s = trace.slices[i];
    if (s.cat == Category::kPythonFunction) index.has_python_tree = true;
    while (!stack.empty()) {
      const Slice& top = trace.slices[stack.back()];
      // A slice belongs to the open one when it starts before that one ends on the same
      // thread (start containment: Kineto's rounding can push a child's end a few ns out).
      if (top.pid == s.pid && top.tid == s.tid && s.ts_ns < top.end_ns()) break;
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

void link_gpu_to_cpu(const Trace& trace, TraceIndex& index) {
  std::unordered_map<int64_t, uint32_t> launch_by_correlation;
  std::unordered_map<int64_t, uint32_t> op_by_external_id;
  size_t launches = 0, ops = 0;  // sized up front: rehashing millions of nodes as they grow is slow
  for (const Slice& s : trace.slices) {
    if ((s.cat == Category::kRuntime || s.cat == Category::kDriver) && s.correlation != kNoId) ++launches;
    else if (s.cat == Category::kCpuOp && s.external_id != kNoId) ++ops;
  }
  launch_by_correlation.reserve(launches);
  op_by_external_id.reserve(ops);
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if ((s.cat == Category::kRuntime || s.cat == Category::kDriver) && s.correlation != kNoId)
      launch_by_correlation.emplace(s.correlation, i);
    else if (s.cat == Category::kCpuOp && s.external_id != kNoId)
      op_by_external_id.emplace(s.external_id, i);
    else if (is_gpu_activity(s))
      index.gpu_slices.push_back(i);
  }
  std::stable_sort(index.gpu_slices.begin(), index.gpu_slices.end(), [&](uint32_t a, uint32_t b) {
    return trace.slices[a].ts_ns < trace.slices[b].ts_ns;
  });
  std::vector<uint32_t> count(trace.slices.size() + 1, 0);
  for (const uint32_t g : index.gpu_slices) {
    const Slice& k = trace.slices[g];
    uint32_t op = kNoSlice;
    if (k.correlation != kNoId) {
      if (auto it = launch_by_correlation.find(k.correlation); it != launch_by_correlation.end()) {
        index.launch_of[g] = it->second;
        op = parent_op(trace, index, it->second);
      }
    }
    if (op == kNoSlice && k.external_id != kNoId) {
      if (auto it = op_by_external_id.find(k.external_id); it != op_by_external_id.end()) op = it->second;
    }
    index.op_of[g] = op;
    if (op != kNoSlice) ++count[op];
    else if (index.launch_of[g] == kNoSlice) index.orphan_gpu_slices.push_back(g);
  }
  index.gpu_begin.assign(trace.slices.size() + 1, 0);
  for (size_t i = 0; i < trace.slices.size(); ++i) index.gpu_begin[i + 1] = index.gpu_begin[i] + count[i];
  index.gpu_items.assign(index.gpu_begin.back(), kNoSlice);
  std::vector<uint32_t> fill(index.gpu_begin.begin(), index.gpu_begin.end() - 1);
  for (const uint32_t g : index.gpu_slices)
    if (index.op_of[g] != kNoSlice) index.gpu_items[fill[index.op_of[g]]++] = g;
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

bool is_cpu_op(const Slice& s) { return s.cat == Category::kCpuOp; }

bool is_gpu_activity(const Slice& s) {
  return s.cat == Category::kKernel || s.cat == Category::kMemcpy || s.cat == Category::kMemset;
}

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
