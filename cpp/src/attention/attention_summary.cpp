// The Summary of a Report and the core findings (see docs/report-schema.md for formulas).
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "attnprof/attention.h"
#include "attnprof/text_format.h"

namespace attnprof {

// Kineto's "Input type" spelling or torch's dtype name (the live capture's): the vocabulary's.
std::string dtype_name(std::string_view t) { return std::string(dtype_of_spelling(t)); }

Summary summarize_attention(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls) {
  Summary s;
  s.has_gpu = !index.gpu_slices.empty();
  s.call_count = static_cast<int64_t>(calls.size());
  double fused_time = 0;
  for (const Call& c : calls) {
    if (c.device_time_unknown) ++s.unknown_time_call_count;
    s.attention_device_time_us += c.device_time_us;
    s.overhead_time_us += c.overhead_time_us;
    if (c.recompute) {
      ++s.recompute_call_count;
      s.recompute_time_us += c.device_time_us;
    }
    if (c.fused) {
      ++s.fused_call_count;
      fused_time += c.device_time_us;
    }
  }
  s.fused_call_fraction = s.call_count ? static_cast<double>(s.fused_call_count) / static_cast<double>(s.call_count) : 0;
  s.fused_time_fraction = s.attention_device_time_us > 0 ? fused_time / s.attention_device_time_us : 0;
  s.gpu_time_us = static_cast<double>(gpu_busy_ns(trace, index)) / 1000.0;
  s.attention_share = s.gpu_time_us > 0 ? s.attention_device_time_us / s.gpu_time_us : 0;
  return s;
}

namespace {

std::string layer_list(const std::vector<int64_t>& layers) {
  std::string out;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (i == 8) return out + fmt::format(", ... ({} layers)", layers.size());
    out += (i ? ", " : "") + std::to_string(layers[i]);
  }
  return out;
}

}  // namespace

// Calls whose heads and head dim are known but whose key length the trace does not give
// (no max_seqlen_k, seq_lens or block table: SGLang's ragged decode, vLLM's unified
// attention), grouped by op: their FLOPs are unknown, which 0 in the Call must not hide.
std::optional<Finding> unknown_flops_finding(const std::vector<Call>& calls) {
  std::map<std::string, int64_t> by_op;
  int64_t count = 0;
  for (const Call& c : calls) {
    if (c.flops > 0 || c.shape.Hq <= 0 || c.shape.D <= 0 || c.shape.Skv > 0) continue;
    ++by_op[c.op.empty() ? c.library : c.op];
    ++count;
  }
  if (count == 0) return std::nullopt;
  std::string ops;
  for (const auto& [op, n] : by_op) ops += fmt::format("{}{} ({})", ops.empty() ? "" : ", ", op, n);
  Finding f;
  f.severity = "info";
  f.rule = finding::kKeyLengthUnknown;
  f.title = fmt::format("FLOPs and TFLOP/s unknown for {} call{}: the trace records no key length", count,
                        count == 1 ? "" : "s");
  f.detail = fmt::format(
      "{}: the op's recorded arguments give query tokens, heads and head dim, but neither max_seqlen_k, "
      "seq_lens, a block table nor the keys themselves, so the number of keys each query attends to is not "
      "known (docs/cost.md).",
      ops);
  return f;
}

namespace {

// The unfused calls of one backend.
struct UnfusedGroup {
  std::vector<int64_t> layers;  // sorted
  int64_t calls = 0;
  double time_us = 0;
  size_t kernels = 0;
};

// The unfused calls by backend, the costliest first.
std::vector<std::pair<std::string, UnfusedGroup>> unfused_by_backend(const std::vector<Call>& calls) {
  std::map<std::string, UnfusedGroup> unfused;
  for (const Call& c : calls) {
    if (c.fused) continue;
    UnfusedGroup& g = unfused[c.backend];
    if (c.layer >= 0 && std::find(g.layers.begin(), g.layers.end(), c.layer) == g.layers.end()) g.layers.push_back(c.layer);
    ++g.calls;
    g.time_us += c.device_time_us;
    g.kernels += c.kernels.size();
  }
  std::vector<std::pair<std::string, UnfusedGroup>> ranked(unfused.begin(), unfused.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second.time_us > b.second.time_us; });
  for (auto& [backend, g] : ranked) std::sort(g.layers.begin(), g.layers.end());
  return ranked;
}

Finding unfused_finding(const std::string& backend, const UnfusedGroup& g, const Summary& s) {
  const double share = s.attention_device_time_us > 0 ? g.time_us / s.attention_device_time_us : 0;
  Finding f;
  f.severity = share >= 0.2 ? "high" : "medium";
  f.title = fmt::format("{} attention call{} ran unfused ({}): {} of attention time", g.calls,
                        g.calls == 1 ? "" : "s", backend, percent_text(share));
  // A CPU-only trace has no kernels: the unfused work is separate CPU ops.
  f.detail = fmt::format(
      "Layers {} computed softmax(QK^T)V {}; the full Sq x Skv score matrix was written to and read from "
      "memory. A fused backend ({}) computes the same result in one {} without materialising it.",
      layer_list(g.layers),
      s.has_gpu ? fmt::format("with separate kernels ({} kernels, {})", g.kernels, time_text(g.time_us))
                : fmt::format("with separate CPU ops ({} of CPU time)", time_text(g.time_us)),
      s.has_gpu ? "flash, efficient, cudnn" : "SDPA's CPU flash attention", s.has_gpu ? "kernel" : "op");
  f.layers = g.layers;
  f.cause = "unfused:" + backend;
  return f;
}

// What a run without unfused calls says instead: no attention (or the candidates' finding),
// or that every call was fused.
Finding no_unfused_finding(const Report& report, std::optional<Finding> candidates) {
  const Summary& s = report.summary;
  if (report.calls.empty() && candidates) return std::move(*candidates);
  if (report.calls.empty())
    return {"info", "no attention found", "The trace has no attention op, no attention kernel "
            "and no matmul -> softmax -> matmul pattern.", "", {}, 0};
  return {"info", fmt::format("all {} attention calls used fused kernels", report.calls.size()),
          s.has_gpu ? fmt::format("Attention took {}, {} of GPU busy time.", time_text(s.attention_device_time_us),
                                  percent_text(s.attention_share))
                    : fmt::format("Attention took {} of CPU time (no GPU in the trace).",
                                  time_text(s.attention_device_time_us)),
          "", {}, 0};
}

}  // namespace

// One finding per unfused backend, the costliest first; then the unknown-FLOPs finding; then,
// where no call ran unfused, what the run shows instead.
std::vector<Finding> core_findings(const Report& report, std::optional<Finding> candidates) {
  std::vector<Finding> findings;
  const auto unfused = unfused_by_backend(report.calls);
  for (const auto& [backend, g] : unfused) findings.push_back(unfused_finding(backend, g, report.summary));
  if (auto f = unknown_flops_finding(report.calls)) findings.push_back(std::move(*f));
  if (unfused.empty()) findings.push_back(no_unfused_finding(report, std::move(candidates)));
  return findings;
}

}  // namespace attnprof
