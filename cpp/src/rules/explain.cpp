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
    assumptions.push_back(fmt::format("arch {} assumed (trace has no deviceProperties; give the run's GPU architecture)", arch));
  }
  if (auto d = parse_arch(arch)) env.device = *d;
  else assumptions.push_back(fmt::format("arch '{}' not understood, sm90 assumed", arch));

  std::string torch = o.torch_version.empty() ? version_of(source, "torch") : o.torch_version;
  if (torch.empty()) {
    torch = kDefaultTorch;
    assumptions.push_back(fmt::format("torch {} assumed (trace has no torch version; give the run's torch version)", torch));
  }
  if (auto v = parse_version(torch)) env.torch = *v;
  else assumptions.push_back(fmt::format("torch version '{}' not understood, {} assumed", torch, kDefaultTorch));

  if (env.device.kind == DeviceKind::kCuda) {
    std::string cudnn = o.cudnn_version.empty() ? version_of(source, "cudnn") : o.cudnn_version;
    if (cudnn.empty()) {
      cudnn = kDefaultCudnn;
      assumptions.push_back(fmt::format("cuDNN {} assumed (trace has no cuDNN version; give the run's cuDNN version)", cudnn));
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

// Points at the FlashAttention library that would run where SDPA's fused kernels cannot ("" if none).
std::string library_alternative(const Decision& d, const Env& env) {
  if (d.choice != "ERROR" && d.chosen != Backend::kMath && d.chosen != Backend::kEfficient) return "";
  for (const Verdict& v : d.libraries) {
    if (!v.eligible || v.backend == Backend::kFlex || v.backend == Backend::kXformers) continue;
    const bool fa3 = v.backend == Backend::kFa3;
    return fmt::format("{} would run these inputs on {} (attn_implementation=\"flash_attention_{}\")",
                       fa3 ? "FlashAttention-3" : "FlashAttention-2", env.device.str(), fa3 ? "3" : "2");
  }
  return "";
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
  if (const std::string library = library_alternative(d, env); !library.empty())
    e.fix += (e.fix.empty() ? "" : ". ") + library;
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

// The finding a call's explanation joins: the calls of one key make one finding.
struct FindingDraft {
  std::string key;         // "" = the call joins no finding
  std::string title_core;  // e.g. "math fallback (flash: attn_mask=bool; ...)"
  std::string severity = "medium";
  std::string rule;
};

struct Explained {
  Explanation e;
  FindingDraft finding;
};

void set_gain(Explanation& e, const Gain& g) {
  e.expected_speedup = g.speedup;
  e.expected_memory_ratio = g.memory_ratio;
  e.gain_basis = g.basis;
}

// What every call of a run shares: the environment the rules assume, and what the run's
// calls show together.
struct RunFacts {
  const SourceInfo& source;
  bool has_gpu;
  const ExplainOptions& options;
  std::vector<std::string> env_assumptions;
  Env env;
  // The backend every SDPA call ran, when they all ran one: a trace where it is eligible but
  // not first in the order was run under sdpa_kernel([X]).
  std::optional<Backend> single_backend;
  bool torch_version_assumed = false;
};

std::optional<Backend> single_sdpa_backend(const std::vector<Call>& calls) {
  std::set<std::string> sdpa_backends;
  for (const Call& c : calls)
    if (is_sdpa_backend(c.backend) && sdpa_dispatched(c)) sdpa_backends.insert(c.backend);
  return sdpa_backends.size() == 1 ? backend_from_name(*sdpa_backends.begin()) : std::nullopt;
}

// Calls with the same finding key make one finding, in the order the keys first appear.
class FindingGroups {
 public:
  // Adds the call's layer (its id when it has none) to the group of `key`, made by `make()`
  // when the key is new.
  template <typename Make>
  void add(const std::string& key, const Call& call, Make make) {
    auto [it, inserted] = groups_.try_emplace(key);
    if (inserted) {
      order_.push_back(key);
      it->second = make();
    }
    it->second.layers.push_back(call.layer >= 0 ? call.layer : call.id);
  }

  std::vector<Finding> findings() const {
    std::vector<Finding> out;
    for (const std::string& key : order_) {
      const Group& g = groups_.at(key);
      out.push_back({g.severity, fmt::format("{}: {}", format_layer_ranges(g.layers), g.title_core), g.detail, g.rule,
                     g.layers, g.gain, g.cause});
    }
    return out;
  }

 private:
  std::map<std::string, Group> groups_;
  std::vector<std::string> order_;
};

constexpr const char* kUseSdpa =
    "use SDPA: attn_implementation=\"sdpa\" (transformers) or torch.nn.functional.scaled_dot_product_attention";

// A call whose shape the trace did not record gets no verdict; that eager ran is known, so a
// forward eager call still joins the finding that says to use SDPA.
Explanation explain_unknown_shape(const Call& call, FindingGroups& groups) {
  Explanation e = unknown_shape_explanation(call);
  if (call.backend != backend::kEager || call.direction == direction::kBackward) return e;
  e.fix = kUseSdpa;
  groups.add("eager-unknown-shape", call, [&] {
    return Group{"eager attention (no SDPA call)", "high", e.fix + ". " + e.consistency_note, finding::kEagerAttention,
                 0, {}, "unfused:" + call.backend};
  });
  return e;
}

Explained explain_eager(const SdpaInput& input, const Env& env, const Decision& d) {
  Explained x{explanation_from(input, env, d), {}};
  Explanation& e = x.e;
  e.fix = fmt::format("{}; SDPA would run {} here", kUseSdpa, e.predicted_backend);
  set_gain(e, expected_gain(backend::kEager, e.predicted_backend, input.Sq, input.dtype));
  x.finding = {backend::kEager, fmt::format("eager attention (no SDPA call); SDPA would run {}", e.predicted_backend), "high",
               finding::kEagerAttention};
  return x;
}

// The trace shows the backend the rules predict: a finding only when a faster fused one was
// ranked above it and failed its checks.
Explained explain_predicted(const SdpaInput& input, const Env& env, const Decision& d) {
  Explained x{explanation_from(input, env, d), {}};
  const Verdict* target = fix_target(d);
  if (!target) return x;
  const std::string& predicted = x.e.predicted_backend;
  const std::string reasons = short_reasons(x.e, predicted);
  const bool math = d.chosen == Backend::kMath;
  x.finding = {"fallback:" + predicted + ":" + reasons,
               fmt::format("{} {} ({})", predicted, math ? "fallback" : "instead of a faster fused kernel", reasons),
               math ? "high" : "low", target->failed.front().rule};
  return x;
}

// With the versions assumed, an older default order (flash first: the priority table's newest
// flash-first row, or an older cuDNN) explains the trace as well as sdpa_kernel does: say so, claim neither. The key
// "older-order" only marks the case for the live-capture check; it makes no finding.
Explained explain_older_order(const Call& call, const SdpaInput& input, const Env& env, const Env& older, Backend seen,
                              Decision& d, std::vector<std::string>& assumptions) {
  d = decide(input, older);
  Explained x{explanation_from(input, older, d), {}};
  const PriorityRow& flash_first = newest_flash_first_row();
  x.e.consistency_note = fmt::format(
      "{} is the default choice of torch {} ({}); with torch {} it would "
      "mean sdpa_kernel([{}]). The trace has no torch version: give the run's torch and cuDNN versions to decide",
      call.backend, flash_first.torch_range(), order_text(flash_first.order), env.torch.str(), sdp_backend_enum(seen));
  assumptions.push_back(fmt::format("torch {} priority order used: it explains the backend in the trace", older.torch.str()));
  x.finding.key = "older-order";
  return x;
}

// Every SDPA call ran one eligible backend the rules do not rank first: the user pinned it.
// Explain what the user got and what the default would have been.
Explained explain_forced(const Call& call, const SdpaInput& input, const Env& env, Backend seen, Decision& d,
                         std::vector<std::string>& assumptions) {
  const std::string by_default = backend_name(d.chosen);
  Env forced_env = env;
  forced_env.enabled = only(seen);
  d = decide(input, forced_env);
  Explained x{explanation_from(input, forced_env, d), {}};
  Explanation& e = x.e;
  e.fix = fmt::format("remove sdpa_kernel([{}]) so SDPA can pick {}", sdp_backend_enum(seen), by_default);
  set_gain(e, expected_gain(call.backend, by_default, input.Sq, input.dtype));
  e.consistency_note = fmt::format(
      "backend forced by the user (sdpa_kernel): only {} ran; it is eligible but the rules rank {} first", call.backend,
      by_default);
  assumptions.push_back(
      fmt::format("sdpa_kernel([{}]) inferred: every SDPA call ran {}", sdp_backend_enum(seen), call.backend));
  x.finding = {"forced:" + call.backend,
               fmt::format("{} forced by the user (sdpa_kernel); SDPA would pick {}", call.backend, by_default),
               call.backend == backend::kMath ? "high" : "low", finding::kForcedBackend};
  return x;
}

// The trace shows another backend than the rules predict, and nothing explains why.
Explained explain_mismatch(const Call& call, const SdpaInput& input, const Env& env, const Decision& d,
                           const Verdict* seen_verdict) {
  Explained x{explanation_from(input, env, d), {}};
  Explanation& e = x.e;
  e.consistent = false;
  e.consistency_note = fmt::format(
      "the rules predict {} but the trace shows {}{}: the rules or the assumed versions/arch are wrong for this run",
      e.predicted_backend, call.backend,
      seen_verdict && !seen_verdict->eligible ? fmt::format(" (rules reject it: {})", seen_verdict->failed.front().rule)
                                              : "");
  x.finding = {"mismatch:" + call.backend + ">" + e.predicted_backend,
               fmt::format("rules predict {} but {} ran", e.predicted_backend, call.backend), "medium",
               finding::kConsistency};
  return x;
}

// An SDPA call: the backend it ran against the rules' prediction. `d` becomes the decision
// the explanation is made from (under an older order or the pinned backend, where those
// explain the trace).
Explained explain_sdpa(const Call& call, const SdpaInput& input, const RunFacts& run, Decision& d,
                       std::vector<std::string>& assumptions) {
  const Backend seen = *backend_from_name(call.backend);
  if (d.choice != "ERROR" && d.chosen == seen) return explain_predicted(input, run.env, d);
  const Verdict* seen_verdict = d.verdict(seen);
  const bool forced = run.single_backend == seen && seen_verdict && seen_verdict->eligible;
  if (!forced) return explain_mismatch(call, input, run.env, d, seen_verdict);
  // With the versions assumed, an older default order (flash first everywhere, or an older
  // cuDNN) explains the trace as well as sdpa_kernel does: say so, claim neither.
  Env older = run.env;
  older.torch = newest_flash_first_row().last_release();
  if (run.torch_version_assumed && decide(input, older).chosen == seen)
    return explain_older_order(call, input, run.env, older, seen, d, assumptions);
  return explain_forced(call, input, run.env, seen, d, assumptions);
}

// The live capture recorded PyTorch's own choice (torch._fused_sdp_choice): a second check,
// whose disagreement becomes the call's finding unless the call already has one.
void check_capture_choice(const Call& call, const Decision& d, Explained& x) {
  if (!call.capture || call.capture->pytorch_choice.empty() || call.capture->pytorch_choice == d.choice) return;
  const std::string& choice = call.capture->pytorch_choice;
  Explanation& e = x.e;
  e.consistent = false;
  e.consistency_note += fmt::format("{}PyTorch's own choice (live capture) was {}, the rules say {}",
                                    e.consistency_note.empty() ? "" : "; ", choice, d.choice);
  if (!x.finding.key.empty() && x.finding.key != "older-order") return;
  x.finding.key = "capture-mismatch:" + choice + ">" + d.choice;
  x.finding.title_core = fmt::format("rules predict {} but PyTorch chose {} (live capture)", d.choice, choice);
  x.finding.rule = finding::kConsistency;
}

// The user's own measurement of this fix, where one matches, replaces the fixture's.
void apply_user_gain(const Call& call, const SdpaInput& input, const RunFacts& run, Explained& x) {
  if (const std::optional<Gain> measured =
          user_gain(run.options.gains, fix_for_finding(x.finding.rule), call.backend, input.Sq, input.dtype,
                    gain_device(run.source, run.has_gpu)))
    set_gain(x.e, *measured);
}

// A finding's detail: the fix (else the consistency note), the expected gain, then the note.
std::string finding_detail(const Explanation& e) {
  return fmt::format("{}{}{}", e.fix.empty() ? e.consistency_note : e.fix,
                     e.expected_speedup > 0 ? ". Expected " + expected_gain_text(e) : "",
                     e.fix.empty() || e.consistency_note.empty() ? "" : ". " + e.consistency_note);
}

Explanation explain_known_shape(const Call& call, const RunFacts& run, FindingGroups& groups) {
  const bool eager = call.backend == backend::kEager;
  std::vector<std::string> assumptions = run.env_assumptions;
  const SdpaInput input = input_from_call(call, assumptions);
  Decision d = decide(input, run.env);
  Explained x = eager ? explain_eager(input, run.env, d) : explain_sdpa(call, input, run, d, assumptions);
  x.e.assumptions = std::move(assumptions);
  if (!eager) check_capture_choice(call, d, x);
  if (x.finding.key == "older-order") x.finding.key.clear();
  apply_user_gain(call, input, run, x);
  if (!x.finding.key.empty() && call.direction != direction::kBackward) {
    groups.add(x.finding.key, call, [&] {
      return Group{x.finding.title_core, x.finding.severity, finding_detail(x.e), x.finding.rule,
                   x.e.expected_speedup, {}, call.fused ? "" : "unfused:" + call.backend};
    });
  }
  return std::move(x.e);
}

}  // namespace

ExplanationsSection explain_calls(const std::vector<Call>& calls, const SourceInfo& source, bool has_gpu,
                                  const ExplainOptions& options) {
  RunFacts run{source, has_gpu, options, {}, {}, single_sdpa_backend(calls),
               options.torch_version.empty() && version_of(source, "torch").empty()};
  run.env = env_for(source, has_gpu, options, run.env_assumptions);
  ExplanationsSection section;
  section.calls.resize(calls.size());
  FindingGroups groups;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& call = calls[i];
    const bool eager = call.backend == backend::kEager;
    if (!eager && (!is_sdpa_backend(call.backend) || !sdpa_dispatched(call))) continue;
    section.calls[i] = dims_unknown(call) ? explain_unknown_shape(call, groups) : explain_known_shape(call, run, groups);
  }
  section.findings = groups.findings();
  return section;
}

}  // namespace attnprof::rules
