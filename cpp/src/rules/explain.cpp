// Explanations for the calls of a Report: why this backend ran, what would be faster, and a
// consistency check of the rules' prediction against what the trace shows.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "attnprof/report.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/call_facts.h"
#include "attnprof/rules.h"

namespace attnprof::rules {
namespace {

constexpr const char* kDefaultTorch = "2.11";   // newest version verified by the H200 fixture grid
constexpr const char* kDefaultCudnn = "9.19";
constexpr const char* kDefaultArch = "sm90";

bool is_sdpa_backend(std::string_view b) {
  return b == backend::kFlash || b == backend::kEfficient || b == backend::kCudnn || b == backend::kMath ||
         b == backend::kCpuFlash;
}

// The SDPA backend the library would prefer if nothing disqualified it: the first of the order
// that is fused (math is the fallback).
const Verdict* best_fused(const Decision& d) {
  for (const Verdict& v : d.sdpa)
    if (v.backend != Backend::kMath) return &v;
  return nullptr;
}

// The fused backend worth fixing for: fewest failed checks among those ranked above the choice.
const Verdict* fix_target(const Decision& d) {
  const Verdict* target = nullptr;
  for (const Verdict& v : d.sdpa) {
    if (d.choice != "ERROR" && v.backend == d.chosen) break;
    if (v.backend == Backend::kMath || v.eligible) continue;
    if (!target || v.failed.size() < target->failed.size()) target = &v;
  }
  return target;
}

std::string join_fixes(const Verdict& v) {
  std::vector<std::string> fixes;
  for (const RuleCheck& c : v.failed)
    if (std::find(fixes.begin(), fixes.end(), c.fix) == fixes.end()) fixes.push_back(c.fix);
  return fmt::format("{}", fmt::join(fixes, "; "));
}

std::string short_reasons(const Explanation& e, const std::string& chosen) {
  std::vector<std::string> parts;
  for (const BackendVerdict& v : e.backends) {
    if (v.backend == chosen || v.eligible || v.failed.empty() || v.backend == backend::kMath) continue;
    if (sdp_backend_of(v.backend).empty()) continue;  // a library's verdict, not SDPA's
    parts.push_back(fmt::format("{}: {}", v.backend, v.failed.front().value));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

MaskKind mask_kind(const MaskInfo& m, std::vector<std::string>& assumptions) {
  if (!m.present || m.kind == mask_kind::kNone || m.kind == mask_kind::kCausalFlag || m.kind.empty()) return MaskKind::kNone;
  if (m.kind == mask_kind::kBool) return MaskKind::kBool;
  if (m.kind == mask_kind::kFloat) return MaskKind::kFloat;
  assumptions.push_back("mask of kind '" + m.kind + "' treated as a boolean attn_mask");
  return MaskKind::kBool;
}

SdpaInput input_from_call(const Call& c, std::vector<std::string>& assumptions) {
  SdpaInput in;
  in.B = c.shape.B;
  in.Hq = c.shape.Hq;
  in.Hkv = c.shape.Hkv ? c.shape.Hkv : c.shape.Hq;
  in.Sq = c.shape.Sq;
  in.Skv = c.shape.Skv ? c.shape.Skv : c.shape.Sq;
  in.D = c.shape.D;
  in.Dv = c.shape.Dv ? c.shape.Dv : c.shape.D;
  in.dtype = c.shape.dtype;
  if (in.dtype.empty()) {
    in.dtype = "bf16";
    assumptions.push_back("dtype bf16 assumed (trace has no input types)");
  }
  in.mask = mask_kind(c.mask, assumptions);
  in.mask_dims = c.mask.dims;
  in.causal = c.causal;
  in.dropout = c.dropout;
  in.enable_gqa = c.gqa || in.Hq != in.Hkv;
  in.requires_grad = c.direction == direction::kBackward || c.pair_id >= 0;
  if (c.capture) {  // the live capture saw the real arguments
    in.requires_grad = c.capture->requires_grad;
    in.enable_gqa = c.capture->enable_gqa;
    if (!c.capture->last_dim_contiguous) in.q_stride_last = 0;  // "not 1": the exact stride is unknown
  }
  return in;
}

std::string version_of(const SourceInfo& s, std::string_view name) {
  for (const auto& [k, v] : s.versions)
    if (k == name) return v;
  return "";
}

// Resolves torch/cuDNN/arch: explicit options, then the trace, then stated defaults.
Env env_for(const SourceInfo& source, bool has_gpu, const ExplainOptions& o, std::vector<std::string>& assumptions) {
  Env env;
  std::string arch = o.arch.empty() ? source.arch : o.arch;
  if (arch.empty()) {
    arch = has_gpu ? kDefaultArch : "cpu";
    assumptions.push_back(fmt::format("arch {} assumed (trace has no deviceProperties; pass --arch)", arch));
  }
  if (auto d = parse_arch(arch)) env.device = *d;
  else assumptions.push_back(fmt::format("arch '{}' not understood, sm90 assumed", arch));

  std::string torch = o.torch_version.empty() ? version_of(source, "torch") : o.torch_version;
  if (torch.empty()) {
    torch = kDefaultTorch;
    assumptions.push_back(fmt::format("torch {} assumed (trace has no torch version; pass --torch)", torch));
  }
  if (auto v = parse_version(torch)) env.torch = *v;
  else assumptions.push_back(fmt::format("torch version '{}' not understood, {} assumed", torch, kDefaultTorch));

  if (env.device.kind == DeviceKind::kCuda) {
    std::string cudnn = o.cudnn_version.empty() ? version_of(source, "cudnn") : o.cudnn_version;
    if (cudnn.empty()) {
      cudnn = kDefaultCudnn;
      assumptions.push_back(fmt::format("cuDNN {} assumed (trace has no cuDNN version; pass --cudnn)", cudnn));
    }
    if (auto v = parse_version(cudnn)) env.cudnn = *v;
  } else {
    env.cudnn = {};
  }
  return env;
}

EnabledBackends only(Backend b) {
  EnabledBackends e{false, false, false, false};
  if (b == Backend::kFlash || b == Backend::kCpuFlash) e.flash = true;
  if (b == Backend::kEfficient) e.efficient = true;
  if (b == Backend::kCudnn) e.cudnn = true;
  if (b == Backend::kMath) e.math = true;
  return e;
}

std::optional<Backend> backend_from_name(std::string_view name) {
  for (Backend b : {Backend::kFlash, Backend::kEfficient, Backend::kCudnn, Backend::kMath, Backend::kCpuFlash})
    if (name == backend_name(b)) return b;
  return std::nullopt;
}

struct Group {
  std::string title_core;  // e.g. "math fallback (flash: attn_mask=bool; ...)"
  std::string severity;
  std::string detail;
  std::string rule;
  double gain = 0;
  std::vector<int64_t> layers;
  std::string cause;  // "unfused:<backend>" when the call ran unfused, else ""
};

std::vector<int64_t> layer_set(std::vector<int64_t> layers) {
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  return layers;
}

int severity_rank(std::string_view s) {
  return s == "high" ? 3 : s == "medium" ? 2 : s == "low" ? 1 : 0;
}

// A finding another analyzer already made for the same cause and layers (the unfused-backend
// finding, say) takes this one's reasons instead of being repeated in other words: the why
// (this title and fix) leads, the other's numbers follow.
void add_or_merge(std::vector<Finding>& findings, Finding f) {
  const auto same = std::find_if(findings.begin(), findings.end(), [&](const Finding& g) {
    return !f.cause.empty() && g.cause == f.cause && layer_set(g.layers) == layer_set(f.layers);
  });
  if (same == findings.end()) {
    findings.push_back(std::move(f));
    return;
  }
  Finding& kept = *same;
  if (severity_rank(f.severity) > severity_rank(kept.severity)) kept.severity = f.severity;
  kept.detail = fmt::format("{}. {}", f.detail, kept.detail);
  kept.title = fmt::format("{}; {}", f.title, kept.title);
  kept.rule = f.rule;
  kept.expected_gain = std::max(kept.expected_gain, f.expected_gain);
}

}  // namespace

Explanation explanation_from(const SdpaInput& input, const Env& env, const Decision& d) {
  Explanation e;
  e.predicted_backend = d.choice == "ERROR" ? "error" : backend_name(d.chosen);
  for (const auto* list : {&d.sdpa, &d.libraries})
    for (const Verdict& v : *list) e.backends.push_back({backend_name(v.backend), v.eligible, v.failed});

  const Verdict* target = fix_target(d);
  const Verdict* best = best_fused(d);
  if (target) {
    e.fix = fmt::format("to run {}: {}", backend_name(target->backend), join_fixes(*target));
    const Gain g = expected_gain(e.predicted_backend, backend_name(target->backend), input.Sq, input.dtype);
    e.expected_speedup = g.speedup;
    e.expected_memory_ratio = g.memory_ratio;
    e.gain_basis = g.basis;
  } else if (best && d.choice != "ERROR" && d.chosen != best->backend) {
    e.fix = fmt::format("enable {} (it is eligible and first in the priority order)", backend_name(best->backend));
  }
  // Point at the libraries that would run where SDPA's fused kernels cannot.
  if (d.choice == "ERROR" || d.chosen == Backend::kMath || d.chosen == Backend::kEfficient) {
    for (const Verdict& v : d.libraries) {
      if (!v.eligible || v.backend == Backend::kFlex || v.backend == Backend::kXformers) continue;
      e.fix += fmt::format("{}{} would run these inputs on {} (attn_implementation=\"flash_attention_{}\")",
                           e.fix.empty() ? "" : ". ", v.backend == Backend::kFa3 ? "FlashAttention-3" : "FlashAttention-2",
                           env.device.str(), v.backend == Backend::kFa3 ? "3" : "2");
      break;
    }
  }
  return e;
}

std::vector<Finding> merge_findings(std::vector<Finding> base, std::vector<Finding> more) {
  for (Finding& f : more) add_or_merge(base, std::move(f));
  return base;
}

namespace {

bool is_dimension(const std::string& fact) { return fact != "dtype"; }

// SDPA's rules explain what SDPA dispatched: calls of its entry, backend or autograd ops (and
// kernel-only calls, whose op the trace lost). A library's own op (flash_attn, aiter, a native
// fast path such as _native_multi_head_attention) chose its kernel without SDPA's rules.
bool sdpa_dispatched(const Call& call) {
  constexpr std::string_view kSdpa = "scaled_dot_product";
  return call.op.empty() || call.op.find(kSdpa) != std::string::npos ||
         call.backend_op.find(kSdpa) != std::string::npos || call.op.starts_with("ScaledDotProduct");
}

// The rules read B, H, S and D; a dtype the trace lacks is assumed, and said so.
bool dims_unknown(const Call& call) { return std::any_of(call.unknown.begin(), call.unknown.end(), is_dimension); }

// What a call whose shape facts are unknown gets instead of a verdict: which facts are missing.
Explanation unknown_shape_explanation(const Call& call) {
  std::string missing;
  for (const std::string& fact : call.unknown)
    if (is_dimension(fact)) missing += (missing.empty() ? "" : ", ") + fact;
  Explanation e;
  e.consistent = true;
  e.consistency_note = fmt::format(
      "no rule verdict: the trace does not record {} of this call (no Input Dims for its op{}); record_shapes=True "
      "or a live capture gives them",
      missing, call.op.empty() ? ": its kernels ran without an enclosing ATen op" : "");
  return e;
}

}  // namespace


ExplanationsSection explain_calls(const std::vector<Call>& calls, const SourceInfo& source, bool has_gpu,
                                  const ExplainOptions& options) {
  std::vector<std::string> env_assumptions;
  const Env env = env_for(source, has_gpu, options, env_assumptions);
  ExplanationsSection section;
  section.calls.resize(calls.size());

  // A trace where every SDPA call ran one backend that is eligible but not first in the order
  // was run under sdpa_kernel([X]).
  std::set<std::string> sdpa_backends;
  for (const Call& c : calls)
    if (is_sdpa_backend(c.backend) && sdpa_dispatched(c)) sdpa_backends.insert(c.backend);
  const std::optional<Backend> single =
      sdpa_backends.size() == 1 ? backend_from_name(*sdpa_backends.begin()) : std::nullopt;

  std::map<std::string, Group> groups;
  std::vector<std::string> group_order;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& call = calls[i];
    const bool eager = call.backend == backend::kEager;
    if (!eager && (!is_sdpa_backend(call.backend) || !sdpa_dispatched(call))) continue;
    if (dims_unknown(call)) {  // a shape the trace did not record is unknown: no verdict from it
      Explanation e = unknown_shape_explanation(call);
      if (eager && call.direction != direction::kBackward) {  // that eager ran is known; which backend SDPA would run is not
        e.fix = "use SDPA: attn_implementation=\"sdpa\" (transformers) or torch.nn.functional.scaled_dot_product_attention";
        auto [it, inserted] = groups.try_emplace("eager-unknown-shape");
        if (inserted) {
          group_order.push_back("eager-unknown-shape");
          it->second = {"eager attention (no SDPA call)", "high", e.fix + ". " + e.consistency_note,
                        finding::kEagerAttention, 0, {}, "unfused:" + call.backend};
        }
        it->second.layers.push_back(call.layer >= 0 ? call.layer : call.id);
      }
      section.calls[i] = std::move(e);
      continue;
    }
    std::vector<std::string> assumptions = env_assumptions;
    const SdpaInput input = input_from_call(call, assumptions);
    Decision d = decide(input, env);
    Explanation e;
    std::string cause_key, title_core, severity = "medium", rule_id;

    if (eager) {
      e = explanation_from(input, env, d);
      const Gain g = expected_gain(backend::kEager, e.predicted_backend, input.Sq, input.dtype);
      e.fix = fmt::format(
          "use SDPA: attn_implementation=\"sdpa\" (transformers) or torch.nn.functional.scaled_dot_product_attention; "
          "SDPA would run {} here",
          e.predicted_backend);
      e.expected_speedup = g.speedup;
      e.expected_memory_ratio = g.memory_ratio;
      e.gain_basis = g.basis;
      cause_key = backend::kEager;
      title_core = fmt::format("eager attention (no SDPA call); SDPA would run {}", e.predicted_backend);
      severity = "high";
      rule_id = finding::kEagerAttention;
    } else {
      const Backend seen = *backend_from_name(call.backend);
      const Verdict* seen_verdict = d.verdict(seen);
      bool forced = false;
      if (d.choice == "ERROR" || d.chosen != seen) {
        forced = single == seen && seen_verdict && seen_verdict->eligible;
        // With the versions assumed, an older default order (flash first everywhere, or an older
        // cuDNN) explains the trace as well as sdpa_kernel does: say so, claim neither.
        const PriorityRow& flash_first = newest_flash_first_row();
        Env older = env;
        older.torch = flash_first.last_release();
        const bool versions_assumed = options.torch_version.empty() && version_of(source, "torch").empty();
        if (forced && versions_assumed && decide(input, older).chosen == seen) {
          d = decide(input, older);
          e = explanation_from(input, older, d);
          e.consistency_note = fmt::format(
              "{} is the default choice of torch {} ({}); with torch {} it would "
              "mean sdpa_kernel([{}]). The trace has no torch version: pass --torch/--cudnn to decide",
              call.backend, flash_first.torch_range(), order_text(flash_first.order), env.torch.str(),
              sdp_backend_enum(seen));
          assumptions.push_back(fmt::format("torch {} priority order used: it explains the backend in the trace",
                                            older.torch.str()));
          cause_key = "older-order";
          forced = false;
        } else if (forced) {
          // Explain what the user got and what the default would have been.
          const Decision by_default = d;
          Env forced_env = env;
          forced_env.enabled = only(seen);
          d = decide(input, forced_env);
          e = explanation_from(input, forced_env, d);
          const Gain g = expected_gain(call.backend, backend_name(by_default.chosen), input.Sq, input.dtype);
          e.fix = fmt::format("remove sdpa_kernel([{}]) so SDPA can pick {}", sdp_backend_enum(seen),
                              backend_name(by_default.chosen));
          e.expected_speedup = g.speedup;
          e.expected_memory_ratio = g.memory_ratio;
          e.gain_basis = g.basis;
          e.consistency_note = fmt::format(
              "backend forced by the user (sdpa_kernel): only {} ran; it is eligible but the rules rank {} first",
              call.backend, backend_name(by_default.chosen));
          assumptions.push_back(fmt::format("sdpa_kernel([{}]) inferred: every SDPA call ran {}",
                                            sdp_backend_enum(seen), call.backend));
          cause_key = "forced:" + call.backend;
          title_core = fmt::format("{} forced by the user (sdpa_kernel); SDPA would pick {}", call.backend,
                                   backend_name(by_default.chosen));
          severity = call.backend == backend::kMath ? "high" : "low";
          rule_id = finding::kForcedBackend;
        } else if (cause_key.empty()) {
          e = explanation_from(input, env, d);
          e.consistent = false;
          e.consistency_note = fmt::format(
              "the rules predict {} but the trace shows {}{}: the rules or the assumed versions/arch are wrong for "
              "this run",
              e.predicted_backend, call.backend,
              seen_verdict && !seen_verdict->eligible ? fmt::format(" (rules reject it: {})", seen_verdict->failed.front().rule) : "");
          cause_key = "mismatch:" + call.backend + ">" + e.predicted_backend;
          title_core = fmt::format("rules predict {} but {} ran", e.predicted_backend, call.backend);
          severity = "medium";
          rule_id = finding::kConsistency;
        }
      } else {
        e = explanation_from(input, env, d);
        const Verdict* target = fix_target(d);
        if (target) {
          const std::string reasons = short_reasons(e, e.predicted_backend);
          cause_key = "fallback:" + e.predicted_backend + ":" + reasons;
          title_core = fmt::format("{} {} ({})", e.predicted_backend,
                                   d.chosen == Backend::kMath ? "fallback" : "instead of a faster fused kernel", reasons);
          severity = d.chosen == Backend::kMath ? "high" : "low";
          rule_id = target->failed.front().rule;
        }
      }
    }
    e.assumptions = std::move(assumptions);
    // The live capture recorded PyTorch's own choice (torch._fused_sdp_choice): a second check.
    if (!eager && call.capture && !call.capture->pytorch_choice.empty() && call.capture->pytorch_choice != d.choice) {
      e.consistent = false;
      e.consistency_note += fmt::format("{}PyTorch's own choice (live capture) was {}, the rules say {}",
                                        e.consistency_note.empty() ? "" : "; ", call.capture->pytorch_choice, d.choice);
      if (cause_key.empty() || cause_key == "older-order") {
        cause_key = "capture-mismatch:" + call.capture->pytorch_choice + ">" + d.choice;
        title_core = fmt::format("rules predict {} but PyTorch chose {} (live capture)", d.choice,
                                 call.capture->pytorch_choice);
        rule_id = finding::kConsistency;
      }
    }
    if (cause_key == "older-order") cause_key.clear();
    // The user's own measurement of this fix, where one matches, replaces the fixture's.
    if (const std::optional<Gain> measured = user_gain(options.gains, fix_for_finding(rule_id), call.backend, input.Sq,
                                                       input.dtype, gain_device(source, has_gpu))) {
      e.expected_speedup = measured->speedup;
      e.expected_memory_ratio = measured->memory_ratio;
      e.gain_basis = measured->basis;
    }
    if (!cause_key.empty() && call.direction != direction::kBackward) {
      auto [it, inserted] = groups.try_emplace(cause_key);
      Group& g = it->second;
      if (inserted) {
        group_order.push_back(cause_key);
        g = {title_core, severity,
             fmt::format("{}{}{}", e.fix.empty() ? e.consistency_note : e.fix,
                         e.expected_speedup > 0 ? ". Expected " + expected_gain_text(e) : "",
                         e.fix.empty() || e.consistency_note.empty() ? "" : ". " + e.consistency_note),
             rule_id, e.expected_speedup, {}, call.fused ? "" : "unfused:" + call.backend};
      }
      g.layers.push_back(call.layer >= 0 ? call.layer : call.id);
    }
    section.calls[i] = std::move(e);
  }
  for (const std::string& key : group_order) {
    Group& g = groups[key];
    section.findings.push_back({g.severity, fmt::format("{}: {}", format_layer_ranges(g.layers), g.title_core),
                                g.detail, g.rule, g.layers, g.gain, g.cause});
  }
  return section;
}

}  // namespace attnprof::rules
