#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <map>
#include <vector>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "attnprof/heads.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/render.h"

namespace attnprof {

std::string short_kernel_name(std::string_view name) {
  // The catalog's matching name less its template arguments.
  std::string_view function = kernel_function_name(name);
  function = function.substr(0, function.find('<'));
  return function.empty() ? std::string(name) : std::string(function);
}

std::string kernels_text(const Call& call, size_t max_chars) {
  std::vector<std::string> parts;
  if (call.fused) {
    for (const KernelRef& k : call.kernels) {
      if (k.component != component::kFused) continue;
      std::string n = short_kernel_name(k.name);
      if (std::find(parts.begin(), parts.end(), n) == parts.end()) parts.push_back(n);
    }
  } else {
    std::map<std::string, int> count;
    std::vector<std::string> order;
    for (const KernelRef& k : call.kernels) {
      if (k.component == component::kOther) continue;
      if (count[k.component]++ == 0) order.push_back(k.component);
    }
    for (const std::string& c : order) parts.push_back(count[c] > 1 ? fmt::format("{} x{}", c, count[c]) : c);
  }
  if (parts.empty()) return call.kernels.empty() ? "-" : fmt::format("{} kernels", call.kernels.size());
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  if (!call.fused && call.kernels.size() > 0) out += fmt::format(" ({} kernels)", call.kernels.size());
  if (out.size() > max_chars) out = out.substr(0, max_chars - 3) + "...";
  return out;
}

std::string_view source_file_kind(std::string_view path) {
  return path.ends_with(kSidecarSuffix) ? "live capture" : "trace";
}

std::string device_text(const SourceInfo& source, bool has_gpu) {
  const std::string arch = source.arch.empty() ? "" : " (" + source.arch + ")";
  if (source.device_name.empty() && source.device_identified_by.empty())
    return has_gpu ? "GPU, model unknown" + arch : "CPU only (no GPU events)";
  if (source.device_identified_by.empty() || source.device_identified_by == "deviceProperties name")
    return source.device_name + arch;
  if (source.device_identified_by.starts_with("unknown"))
    return source.device_identified_by + arch;
  return source.device_name + arch + ", identified from " + source.device_identified_by;
}

std::string time_or_unknown(bool unknown, const std::string& time) { return unknown ? "unknown" : time; }

std::string backends_text(const Layer& layer) {
  std::string out;
  for (const std::string& b : layer.backends) {
    if (!out.empty()) out += '+';
    out += b;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> grouped_window_verdicts(
    const std::vector<WindowEffectiveness>& verdicts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (WindowVerdictGroup& g : group_window_verdicts(verdicts))
    out.emplace_back(format_layer_ranges(std::move(g.layers)), g.first->verdict);
  return out;
}

}  // namespace attnprof
