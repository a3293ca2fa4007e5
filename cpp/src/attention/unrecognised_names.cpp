// Attention-like names no catalog knows, listed in the Report (Report::unrecognised) so a
// user sees them and can report them (docs/backends.md, "Unrecognised attention-like names").
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "attnprof/attention.h"
#include "extraction.h"

namespace attnprof {

bool is_unrecognised_attention_op(std::string_view op_name, const CatalogExtension* extension) {
  // A backward node runs inside "evaluate_function: <node>": judge the node.
  if (op_name.starts_with(kAutogradNodePrefix)) op_name.remove_prefix(kAutogradNodePrefix.size());
  return classify_attention_op(op_name, extension) == nullptr && is_unrecognised(classify_kernel(op_name, extension));
}

namespace {

struct Tally {
  int64_t count = 0;
  int64_t dur_ns = 0;
};

void append(const Trace& trace, const std::unordered_map<StrId, Tally>& tallies, const char* kind,
            std::vector<UnrecognisedName>& out) {
  for (const auto& [name, t] : tallies)
    out.push_back({std::string(trace.strings.get(name)), kind, t.count, static_cast<double>(t.dur_ns) / 1000.0});
}

}  // namespace

std::vector<UnrecognisedName> unrecognised_attention_names(const Trace& trace, const TraceIndex& index,
                                                           const CatalogExtension* extension) {
  NameClasses names(trace, extension);
  const auto unknown_kernel = [&](const Slice& k) { return is_unrecognised(names.kernel(k)); };
  const auto known_attention = [&](const Slice& k) {
    const KernelPattern* p = names.kernel(k);
    return p && p->kind == KernelKind::kFusedAttention && !is_unrecognised(p);
  };
  std::unordered_map<StrId, Tally> kernels, ops;
  for (const uint32_t g : index.gpu_slices) {
    const Slice& k = trace.slices[g];
    if (!unknown_kernel(k)) continue;
    Tally& t = kernels[k.name];
    ++t.count;
    t.dur_ns += k.dur_ns;
  }
  std::vector<uint32_t> gpu;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (!is_cpu_op(s) || !names.unrecognised_attention_op(s)) continue;
    gpu.clear();
    collect_subtree_gpu(trace, index, i, gpu);
    // An op around catalog attention kernels (a library's autograd Function) is named by them.
    const bool runs_known_attention =
        std::any_of(gpu.begin(), gpu.end(), [&](uint32_t g) { return known_attention(trace.slices[g]); });
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
