// Attention-like names no catalog knows, listed in the Report (Report::unrecognised) so a
// user sees them and can report them (docs/backends.md, "Unrecognised attention-like names").
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "attnprof/attention.h"

namespace attnprof {

bool is_unrecognised_attention_op(std::string_view op_name) {
  // Autograd runs a backward node inside "evaluate_function: <node>": judge the node.
  constexpr std::string_view kNodePrefix = "autograd::engine::evaluate_function: ";
  if (op_name.starts_with(kNodePrefix)) op_name.remove_prefix(kNodePrefix.size());
  return classify_attention_op(op_name) == nullptr && is_unrecognised(classify_kernel(op_name));
}

namespace {

struct Tally {
  int64_t count = 0;
  int64_t dur_ns = 0;
};

// Per distinct name: is it an unrecognised kernel (for GPU slices) or op (for cpu ops)?
// Decided once per interned string, never per event.
class NameVerdicts {
 public:
  explicit NameVerdicts(const Trace& trace) : trace_(trace), verdict_(trace.strings.size(), kUnchecked) {}
  bool operator()(const Slice& s, bool gpu) {
    if (s.name >= verdict_.size()) return check(s, gpu);
    if (verdict_[s.name] == kUnchecked) verdict_[s.name] = check(s, gpu) ? kUnknown : kKnown;
    return verdict_[s.name] == kUnknown;
  }

 private:
  enum : uint8_t { kUnchecked, kKnown, kUnknown };
  bool check(const Slice& s, bool gpu) const {
    const std::string_view name = trace_.name_of(s);
    return gpu ? is_unrecognised(classify_kernel(name)) : is_unrecognised_attention_op(name);
  }
  const Trace& trace_;
  std::vector<uint8_t> verdict_;
};

void append(const Trace& trace, const std::unordered_map<StrId, Tally>& tallies, const char* kind,
            std::vector<UnrecognisedName>& out) {
  for (const auto& [name, t] : tallies)
    out.push_back({std::string(trace.strings.get(name)), kind, t.count, static_cast<double>(t.dur_ns) / 1000.0});
}

}  // namespace

std::vector<UnrecognisedName> unrecognised_attention_names(const Trace& trace, const TraceIndex& index) {
  NameVerdicts kernel_verdict(trace), op_verdict(trace);
  std::unordered_map<StrId, Tally> kernels, ops;
  for (const uint32_t g : index.gpu_slices) {
    const Slice& k = trace.slices[g];
    if (!kernel_verdict(k, true)) continue;
    Tally& t = kernels[k.name];
    ++t.count;
    t.dur_ns += k.dur_ns;
  }
  std::vector<uint32_t> gpu;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (!is_cpu_op(s) || !op_verdict(s, false)) continue;
    gpu.clear();
    collect_subtree_gpu(trace, index, i, gpu);
    // An op around catalog attention kernels (a library's autograd Function) is named by them.
    const bool runs_known_attention = std::any_of(gpu.begin(), gpu.end(), [&](uint32_t g) {
      const KernelPattern* p = classify_kernel(trace.name_of(trace.slices[g]));
      return p && p->kind == KernelKind::kFusedAttention && !is_unrecognised(p);
    });
    if (runs_known_attention) continue;
    Tally& t = ops[s.name];
    ++t.count;
    for (const uint32_t g : gpu) t.dur_ns += trace.slices[g].dur_ns;
  }
  std::vector<UnrecognisedName> out;
  append(trace, kernels, "kernel", out);
  append(trace, ops, "op", out);
  std::sort(out.begin(), out.end(), [](const UnrecognisedName& a, const UnrecognisedName& b) {
    return a.device_time_us != b.device_time_us ? a.device_time_us > b.device_time_us : a.name < b.name;
  });
  return out;
}

}  // namespace attnprof
