// TraceIndex: the relations between a Trace's slices that every analysis needs and that
// the flat tables do not spell out:
//   - CPU-side trees per (pid, tid) by time containment (cpu_op, user_annotation,
//     python_function, cuda_runtime, cuda_driver), so an ATen op knows its parent op and
//     the nn.Module it ran in;
//   - CPU -> GPU links: each kernel/memcpy/memset -> the runtime call that launched it
//     (same `correlation`) -> the innermost cpu_op around that launch (falling back to the
//     cpu_op with the same `External id` when the launch was not recorded);
//   - profiler steps (ProfilerStep#N annotations).
// Built once per Trace; holds indices into Trace::slices only (no strings copied).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof {

inline constexpr uint32_t kNoSlice = UINT32_MAX;

struct StepRange {
  int64_t number = 0;  // N of ProfilerStep#N
  int64_t ts_ns = 0;
  int64_t end_ns = 0;
};

struct TraceIndex {
  // Per slice (parallel to Trace::slices): the innermost CPU-side slice around it on its
  // thread; kNoSlice for roots and for GPU slices.
  std::vector<uint32_t> parent;
  // The CPU-side slices in nesting order (cpu_position), thread by thread, threads in (pid,
  // tid) order: a pre-order walk of each thread's tree, so a slice's subtree is the run right
  // after it (walk_below). That and `parent` are the trees in 8 bytes per slice, where
  // parent, first child and next sibling per slice took 12.
  std::vector<uint32_t> cpu_order;
  struct Range {
    uint32_t begin = 0, end = 0;
  };
  std::vector<Range> thread_order;  // per Trace::threads id: its run of cpu_order
  // Root CPU slices of every thread, in (pid, tid, ts) order.
  std::vector<uint32_t> roots;
  // All GPU activity slices (kernel, memcpy, memset) in start-time order.
  std::vector<uint32_t> gpu_slices;
  // GPU slices that have neither a recorded launch nor a linked op (they started before
  // the profiling window or come from another process).
  std::vector<uint32_t> orphan_gpu_slices;
  std::vector<StepRange> steps;  // sorted by ts
  bool has_python_tree = false;  // python_function events present (with_stack=True)

  // For a GPU slice: the runtime/driver call that launched it (same correlation) and the
  // linked cpu_op; kNoSlice when there is none, and for every other slice.
  uint32_t launch_of(uint32_t gpu_slice) const { return gpu_link(gpu_slice).launch; }
  uint32_t op_of(uint32_t gpu_slice) const { return gpu_link(gpu_slice).op; }
  // The GPU slices a cpu_op launched directly, in device-time order (empty for other slices).
  std::span<const uint32_t> gpu_of(uint32_t op) const;

  // The links behind launch_of / op_of / gpu_of, one row per GPU slice or per op with GPU
  // work rather than per slice: most slices are CPU-side, and per-slice link arrays cost
  // 12 bytes for every one of them (half of what the index held per slice).
  struct GpuLink {
    uint32_t slice = kNoSlice, launch = kNoSlice, op = kNoSlice;
  };
  struct OpGpuRange {
    uint32_t op, begin;  // the op's GPU slices: gpu_items[begin, next row's begin)
  };
  std::vector<GpuLink> gpu_links;     // one per GPU slice, by slice
  std::vector<OpGpuRange> op_ranges;  // by op, then one past the last: {kNoSlice, gpu_items.size()}
  std::vector<uint32_t> gpu_items;

 private:
  GpuLink gpu_link(uint32_t gpu_slice) const {
    auto it = std::lower_bound(gpu_links.begin(), gpu_links.end(), gpu_slice,
                               [](const GpuLink& l, uint32_t s) { return l.slice < s; });
    return it != gpu_links.end() && it->slice == gpu_slice ? *it : GpuLink{};
  }
};

// `threads` > 1 builds the CPU trees and the GPU launch links side by side (the index is the
// same for any value).
TraceIndex build_trace_index(const Trace& trace, size_t threads = 1);

// True for cpu_op slices (ATen ops and FUNCTION-scope record_function). Inline: every stage
// asks it per slice inside its walks (1.9% of analyze's CPU time as a call).
inline bool is_cpu_op(const Slice& s) { return s.cat == Category::kCpuOp; }
// True for kernel, memcpy and memset slices.
inline bool is_gpu_activity(const Slice& s) { return is_gpu_activity(s.cat); }

// Nearest cpu_op ancestor of a slice (python frames and annotations are skipped).
uint32_t parent_op(const Trace& trace, const TraceIndex& index, uint32_t slice);

// Appends the GPU slices launched by `slice` and by every op below it.
void collect_subtree_gpu(const Trace& trace, const TraceIndex& index, uint32_t slice,
                         std::vector<uint32_t>& out);

// Where a CPU-side slice is in TraceIndex::cpu_order; cpu_order.size() for other slices.
size_t cpu_position(const Trace& trace, const TraceIndex& index, uint32_t slice);

// Visits the subtree below `slice` in time order (pre-order), not including `slice`;
// visit(s) returns whether to go on below s.
template <typename Visit>
void walk_below(const Trace& trace, const TraceIndex& index, uint32_t slice, Visit&& visit) {
  const size_t position = cpu_position(trace, index, slice);
  if (position == index.cpu_order.size()) return;
  const size_t end = index.thread_order[trace.slices[slice].thread].end;
  struct Open {
    uint32_t slice;
    bool visiting;  // whether the slices below it are visited
  };
  std::vector<Open> path{{slice, true}};  // the open slices around the next one, `slice` first
  for (size_t k = position + 1; k < end; ++k) {
    const uint32_t s = index.cpu_order[k];
    while (!path.empty() && path.back().slice != index.parent[s]) path.pop_back();
    if (path.empty()) return;  // past the subtree: it is one run
    const bool visiting = path.back().visiting && visit(s);
    path.push_back({s, visiting});
  }
}

// Visits every slice below `slice`, in time order (pre-order), not including `slice`.
template <typename Fn>
void for_each_descendant(const Trace& trace, const TraceIndex& index, uint32_t slice, Fn&& fn) {
  walk_below(trace, index, slice, [&](uint32_t s) {
    fn(s);
    return true;
  });
}

// Visits the slices directly below `slice`, in time order.
template <typename Fn>
void for_each_child(const Trace& trace, const TraceIndex& index, uint32_t slice, Fn&& fn) {
  walk_below(trace, index, slice, [&](uint32_t s) {
    fn(s);
    return false;
  });
}

// "nn.Module: LlamaAttention_0" -> "LlamaAttention_0"; "" for other python frames.
std::string_view module_instance_name(std::string_view python_function_name);

// Module path of the innermost nn.Module around `slice`: the chain of enclosing
// nn.Module instance names from the outermost, joined by '.', e.g.
// "LlamaForCausalLM_0.LlamaModel_0.LlamaDecoderLayer_2.LlamaAttention_2". "" when the
// trace has no nn.Module events around it.
std::string module_path(const Trace& trace, const TraceIndex& index, uint32_t slice);

// Step number of the ProfilerStep#N whose time range holds ts; -1 when none does.
int64_t step_at(const TraceIndex& index, int64_t ts_ns);

// Union of all GPU activity intervals, per device, summed over devices (ns).
int64_t gpu_busy_ns(const Trace& trace, const TraceIndex& index);

}  // namespace attnprof
