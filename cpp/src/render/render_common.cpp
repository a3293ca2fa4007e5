#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <map>
#include <vector>

#include "attnprof/call_facts.h"
#include "attnprof/kernel_names.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/render.h"
#include "attnprof/sidecar_name.h"
#include "attnprof/text_format.h"

namespace attnprof {

std::string short_kernel_name(std::string_view name) { return kernel_display_name(name); }

namespace {

// A fused call's kernels by their short names, each once, in order.
std::vector<std::string> fused_kernel_names(const Call& call) {
  std::vector<std::string> names;
  for (const KernelRef& k : call.kernels) {
    if (k.component != component::kFused) continue;
    std::string n = short_kernel_name(k.name);
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

// An unfused call's kernels as its components ("softmax x2"), in the order each first ran.
std::vector<std::string> component_counts(const Call& call) {
  std::map<std::string, int> count;
  std::vector<std::string> order;
  for (const KernelRef& k : call.kernels) {
    if (k.component == component::kOther) continue;
    if (count[k.component]++ == 0) order.push_back(k.component);
  }
  std::vector<std::string> parts;
  for (const std::string& c : order) parts.push_back(count[c] > 1 ? fmt::format("{} x{}", c, count[c]) : c);
  return parts;
}

}  // namespace

std::string kernels_text(const Call& call, size_t max_chars) {
  const std::vector<std::string> parts = call.fused ? fused_kernel_names(call) : component_counts(call);
  if (parts.empty()) return call.kernels.empty() ? "-" : fmt::format("{} kernels", call.kernels.size());
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  if (!call.fused && call.kernels.size() > 0) out += fmt::format(" ({} kernels)", call.kernels.size());
  if (out.size() > max_chars) out = out.substr(0, max_chars - 3) + "...";
  return out;
}

namespace {

std::string phase_text(const std::string& phase, bool inferred) {
  if (phase.empty()) return "-";
  return inferred ? phase + " (inferred)" : phase;
}

// "888 prefill tok (1 req)" from an engine annotation's or the attention op's counts; "" when
// neither recorded any.
std::string tokens_text(const char* phase, int64_t requests, int64_t tokens) {
  if (tokens <= 0) return "";
  if (requests <= 0) return fmt::format("{} {} tok", tokens, phase);
  return fmt::format("{} {} tok ({} req)", tokens, phase, requests);
}

}  // namespace

std::string steps_line(const Report& report) {
  if (report.steps.empty()) return "";
  std::map<std::string, int> kinds;
  for (const Step& s : report.steps) ++kinds[s.marker_kind];
  std::string how;
  for (const auto& [kind, n] : kinds) how += fmt::format("{}{} {}", how.empty() ? "" : ", ", n, kind);
  return fmt::format("steps: {} (marked by: {}), {} attention layer{} per step", report.steps.size(), how,
                     report.layers.size(), report.layers.size() == 1 ? "" : "s");
}

std::vector<std::vector<std::string>> step_rows(const Report& report, size_t max_rows) {
  std::vector<std::vector<std::string>> rows;
  for (const Step& s : report.steps) {
    if (rows.size() == max_rows) break;
    std::string tokens = tokens_text(phase::kPrefill, s.prefill_requests, s.prefill_tokens);
    if (const std::string d = tokens_text(phase::kDecode, s.decode_requests, s.decode_tokens); !d.empty())
      tokens += (tokens.empty() ? "" : " + ") + d;
    if (!tokens.empty() && s.tokens_from == "input_dims") tokens += " (op dims)";
    rows.push_back({std::to_string(s.index), s.marker.empty() ? s.marker_kind : s.marker,
                    phase_text(s.phase, s.phase_inferred), tokens.empty() ? "-" : tokens, std::to_string(s.call_count),
                    time_text(s.attention_device_time_us), time_text(s.overhead_time_us), time_text(s.gpu_time_us),
                    s.gpu_time_us > 0 ? percent_text(s.attention_share) : "-"});
  }
  return rows;
}

std::vector<std::vector<std::string>> phase_rows(const Report& report) {
  std::vector<std::vector<std::string>> rows;
  for (const PhaseSummary& p : report.summary.phases) {
    std::string backends, kernels;
    for (const std::string& b : p.backends) backends += (backends.empty() ? "" : ", ") + b;
    for (const std::string& k : p.kernels) kernels += (kernels.empty() ? "" : ", ") + short_kernel_name(k);
    rows.push_back({phase_text(p.phase, p.inferred), std::to_string(p.steps), std::to_string(p.calls),
                    time_text(p.device_time_us), percent_text(p.share),
                    p.tflops > 0 ? flops_text(p.tflops) : "-", backends.empty() ? "-" : backends,
                    kernels.empty() ? "-" : kernels});
  }
  return rows;
}

std::string layer_phases_text(const Layer& layer) {
  std::string out;
  for (const LayerPhase& p : layer.phases)
    out += fmt::format("{}{} {} {}", out.empty() ? "" : ", ", p.phase, p.calls, time_text(p.device_time_us));
  return out;
}

std::string heads_scope_text(const SourceInfo& source) {
  if (source.tensor_parallel <= 0) return "";
  return source.tensor_parallel > 1
             ? fmt::format("head counts are per rank (tensor parallel, world size {})", source.tensor_parallel)
             : "head counts are per rank (tensor parallel)";
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

Table heads_table(const HeadsSection& heads) {
  Table t{fmt::format("Heads ({} analysed, blocks {}x{}, sinks = first {} tokens)", heads.heads.size(), heads.block_size,
                      heads.block_size, heads.sink_tokens),
          {"layer", "head", "entropy", "max weight", "sink/special", "output share", "blocks @95%", "sink+window", "kind"},
          {},
          {}};
  for (const HeadStats& s : heads.heads)
    t.rows.push_back({std::to_string(s.layer), std::to_string(s.head), fmt::format("{:.3f}", s.entropy),
                      fmt::format("{:.3f}", s.max_weight), percent_text(s.special_mass),
                      s.output_share < 0 ? "-" : percent_text(s.output_share), percent_text(s.block_coverage_95),
                      percent_text(s.sink_window_recall), s.kind.empty() ? "-" : s.kind});
  return t;
}

}  // namespace attnprof
