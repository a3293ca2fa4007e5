// compare_reports: the pure part of `attnprof diff` (docs/diff.md says how each number is
// reached). Samples are (run, step) pairs: every step of every run of a side is one sample,
// so a side with several steps or runs carries its own measure of noise.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

#include "attnprof/call_facts.h"
#include "attnprof/compare.h"
#include "attnprof/text_format.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/peak_memory.h"
#include "compare/compare_ranks.h"

namespace attnprof {

const char* const kNoiseRule =
    "Each side's samples are its (run, step) pairs. A metric's value is the median of its "
    "samples; its spread is max - min over them (0 with one sample). noise = max(baseline "
    "spread, candidate spread). A gated metric regresses when its worsening exceeds both the "
    "threshold (time and memory: threshold x baseline median; fused share: percentage points) "
    "and the noise.";

namespace {

// Which way is worse for a metric, and whether it gates the verdict.
enum class Worse { kUp, kDown };

struct Sample {
  double time_us = 0;
  double fused_time_us = 0;
  int64_t calls = 0;
  int64_t fused_calls = 0;
  double flops = 0;
  int64_t peak_bytes = -1;
  // Calls whose kernels were not recorded (graph captures): their time and whether they were
  // fused are unknown, so they add nothing above, and every time-based metric of the sample
  // is unknown rather than a sum that silently reads them as 0.
  int64_t unknown_time_calls = 0;
};

// Samples of one scope (a layer, or the whole run), keyed by (run index, step).
using SampleMap = std::map<std::pair<size_t, int64_t>, Sample>;

void add_call(Sample& s, const Call& call) {
  if (call.device_time_unknown) {
    ++s.unknown_time_calls;
    s.peak_bytes = std::max(s.peak_bytes, call_peak_bytes(call));
    return;
  }
  s.time_us += call.device_time_us;
  s.calls += 1;
  if (call.fused) {
    s.fused_time_us += call.device_time_us;
    s.fused_calls += 1;
  }
  s.flops += call.flops;
  s.peak_bytes = std::max(s.peak_bytes, call_peak_bytes(call));
}

struct SideSamples {
  SampleMap total;
  std::map<int64_t, SampleMap> per_layer;
};

SideSamples collect_samples(std::span<const Report> runs) {
  SideSamples out;
  for (size_t run = 0; run < runs.size(); ++run) {
    const Report& report = runs[run];
    for (const Call& call : report.calls) {
      const auto key = std::make_pair(run, call.step);
      add_call(out.total[key], call);
      add_call(out.per_layer[call.layer][key], call);
    }
    // The cost stage's per-layer peak is one number per run: use it where calls carry none.
    for (const Layer& layer : report.layers) {
      const int64_t layer_peak = layer_peak_bytes(layer);
      if (layer_peak < 0) continue;
      for (auto& [key, sample] : out.per_layer[layer.index]) {
        if (key.first == run && sample.peak_bytes < 0) sample.peak_bytes = layer_peak;
      }
    }
  }
  // The run's peak is the largest of its layers' peaks in the same step.
  for (auto& [layer, samples] : out.per_layer) {
    for (auto& [key, sample] : samples) {
      auto it = out.total.find(key);
      if (it != out.total.end()) it->second.peak_bytes = std::max(it->second.peak_bytes, sample.peak_bytes);
    }
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double spread(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return *hi - *lo;
}

// A metric's value in one sample: known, absent (the sample lacks it: no memory events), or
// unknown (it depends on device time the trace did not record).
struct Value {
  enum State { kKnown, kAbsent, kUnknown } state = kAbsent;
  double v = 0;
};
Value known(double v) { return {Value::kKnown, v}; }
constexpr Value kAbsent{Value::kAbsent, 0};
constexpr Value kUnknown{Value::kUnknown, 0};

struct SideValues {
  std::vector<double> known;
  int64_t unknown = 0;
};

// One metric: a function of a sample that returns a Value.
template <typename F>
SideValues values(const SampleMap* samples, F metric) {
  SideValues out;
  if (!samples) return out;
  for (const auto& [key, sample] : *samples) {
    const Value v = metric(sample);
    if (v.state == Value::kKnown) out.known.push_back(v.v);
    if (v.state == Value::kUnknown) ++out.unknown;
  }
  return out;
}

// limit_of(before) gives the allowed worsening in the metric's unit.
template <typename F, typename L>
MetricDelta delta(const SampleMap* before, const SampleMap* after, F metric, Worse worse,
                  bool gated, L limit_of) {
  MetricDelta d;
  const SideValues bv = values(before, metric), av = values(after, metric);
  const std::vector<double>& b = bv.known;
  const std::vector<double>& a = av.known;
  d.before_samples = static_cast<int64_t>(b.size());
  d.after_samples = static_cast<int64_t>(a.size());
  d.before_unknown = bv.unknown;
  d.after_unknown = av.unknown;
  if (!b.empty()) d.before = median(b);
  if (!a.empty()) d.after = median(a);
  // A side with an unknown sample has no value to compare: never a regression or an improvement
  // (a gated metric still says it was not compared).
  if (bv.unknown > 0 || av.unknown > 0) {
    d.gated = gated;
    return d;
  }
  if (b.empty() || a.empty()) return d;
  d.known = true;
  d.noise = std::max(spread(b), spread(a));
  d.worsening = worse == Worse::kUp ? d.after - d.before : d.before - d.after;
  d.limit = limit_of(d.before);
  d.gated = gated;
  d.regression = gated && d.worsening > d.limit && d.worsening > d.noise;
  return d;
}

Value time_of(const Sample& s) {
  if (s.unknown_time_calls > 0) return kUnknown;
  return known(s.time_us);
}
Value fused_time_pct_of(const Sample& s) {
  if (s.unknown_time_calls > 0) return kUnknown;
  if (s.time_us <= 0) return kAbsent;
  return known(100.0 * s.fused_time_us / s.time_us);
}
// Whether a call whose kernels were not seen was fused is unknown too.
Value fused_calls_pct_of(const Sample& s) {
  if (s.unknown_time_calls > 0) return kUnknown;
  if (s.calls == 0) return kAbsent;
  return known(100.0 * static_cast<double>(s.fused_calls) / static_cast<double>(s.calls));
}
Value tflops_of(const Sample& s) {
  if (s.unknown_time_calls > 0) return kUnknown;
  if (s.time_us <= 0 || s.flops <= 0) return kAbsent;
  return known(s.flops / (s.time_us * 1e-6) / 1e12);
}
Value peak_bytes_of(const Sample& s) {
  if (s.peak_bytes < 0) return kAbsent;
  return known(static_cast<double>(s.peak_bytes));
}

}  // namespace

MetricDelta growth_delta(std::optional<double> before, std::optional<double> after, double max_increase, bool gated) {
  auto side = [](std::optional<double> value) {
    SampleMap samples;
    Sample& s = samples[{0, 0}];
    if (value) s.time_us = *value;
    else s.unknown_time_calls = 1;
    return samples;
  };
  const SampleMap b = side(before), a = side(after);
  return delta(&b, &a, time_of, Worse::kUp, gated, [&](double x) { return max_increase * x; });
}

namespace {

struct Deltas {
  MetricDelta time_us, fused_time_pct, fused_calls_pct, tflops, peak_bytes;
};

// Totals are gated; per-layer metrics are reported but never gate (one layer of many that
// is 10% slower is noise in the step, and a backend change shows in the totals).
Deltas compute_deltas(const SampleMap* before, const SampleMap* after, const DiffThresholds& t,
                      bool gated) {
  Deltas d;
  d.time_us = delta(before, after, time_of, Worse::kUp, gated,
                    [&](double b) { return t.max_time_increase * b; });
  d.fused_time_pct = delta(before, after, fused_time_pct_of, Worse::kDown, gated,
                           [&](double) { return t.max_fused_drop_pp; });
  d.fused_calls_pct = delta(before, after, fused_calls_pct_of, Worse::kDown, gated,
                            [&](double) { return t.max_fused_drop_pp; });
  d.tflops = delta(before, after, tflops_of, Worse::kDown, /*gated=*/false,
                   [&](double b) { return t.max_time_increase * b; });
  d.peak_bytes = delta(before, after, peak_bytes_of, Worse::kUp, gated,
                       [&](double b) { return t.max_memory_increase * b; });
  return d;
}

// Distinct backends of a layer's calls in first-seen order.
std::vector<std::string> backends_of(const Report& report, int64_t layer) {
  std::vector<std::string> seen;
  for (const Call& call : report.calls) {
    if (call.layer != layer || call.backend.empty()) continue;
    if (std::find(seen.begin(), seen.end(), call.backend) == seen.end()) seen.push_back(call.backend);
  }
  return seen;
}

std::string joined(const std::vector<std::string>& parts, const char* separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

// The slowest backend class of a layer's calls, "" when it has none.
std::string class_of(const Report& report, int64_t layer) {
  std::string cls;
  for (const Call& call : report.calls)
    if (call.layer == layer) cls = worse_backend_class(cls, backend_class_of(call));
  return cls;
}

// The call that stands for a layer when comparing inputs: its first forward call.
const Call* representative_call(const Report& report, int64_t layer) {
  const Call* first = nullptr;
  for (const Call& call : report.calls) {
    if (call.layer != layer) continue;
    if (call.direction != direction::kBackward) return &call;
    if (!first) first = &call;
  }
  return first;
}

std::string module_of(const Report& report, int64_t layer) {
  for (const Layer& l : report.layers)
    if (l.index == layer && !l.module.empty()) return l.module;
  const Call* call = representative_call(report, layer);
  return call ? call->module : "";
}

std::string on_off(bool b) { return b ? "on" : "off"; }

std::string mask_text(const MaskInfo& m) {
  if (!m.present) return mask_kind::kNone;
  std::string s = m.kind.empty() ? mask_kind::kUnknown : m.kind;
  if (!m.dims.empty()) s += fmt::format(" [{}]", fmt::join(m.dims, ","));
  return s;
}

// What differs between the inputs of two calls, in words ("head_dim 128 -> 96").
// long: one comparison per input fact of a call, in the order the changes are printed
std::vector<std::string> input_changes(const Call& b, const Call& a) {
  std::vector<std::string> out;
  auto num = [&](const char* what, int64_t x, int64_t y) {
    if (x != y && x > 0 && y > 0) out.push_back(fmt::format("{} {} -> {}", what, x, y));
  };
  num("head_dim", b.shape.D, a.shape.D);
  if (b.shape.Dv != b.shape.D || a.shape.Dv != a.shape.D) num("value head_dim", b.shape.Dv, a.shape.Dv);
  if (b.shape.dtype != a.shape.dtype && !b.shape.dtype.empty() && !a.shape.dtype.empty())
    out.push_back(fmt::format("dtype {} -> {}", b.shape.dtype, a.shape.dtype));
  num("query heads", b.shape.Hq, a.shape.Hq);
  num("key/value heads", b.shape.Hkv, a.shape.Hkv);
  if (b.gqa != a.gqa) out.push_back(fmt::format("GQA {} -> {}", on_off(b.gqa), on_off(a.gqa)));
  num("batch", b.shape.B, a.shape.B);
  num("query length", b.shape.Sq, a.shape.Sq);
  num("key length", b.shape.Skv, a.shape.Skv);
  if (!b.mask.present && a.mask.present) {
    out.push_back("mask appeared (" + mask_text(a.mask) + ")");
  } else if (b.mask.present && !a.mask.present) {
    out.push_back("mask removed (was " + mask_text(b.mask) + ")");
  } else if (b.mask.present && b.mask.kind != a.mask.kind) {
    out.push_back(fmt::format("mask {} -> {}", mask_text(b.mask), mask_text(a.mask)));
  }
  if (b.causal != a.causal) out.push_back(fmt::format("causal flag {} -> {}", on_off(b.causal), on_off(a.causal)));
  if (b.dropout != a.dropout) out.push_back(fmt::format("dropout {:g} -> {:g}", b.dropout, a.dropout));
  if (b.op != a.op && !b.op.empty() && !a.op.empty())
    out.push_back(fmt::format("attention op {} -> {}", b.op, a.op));
  return out;
}

std::set<int64_t> layer_indices(const Report& r) {
  std::set<int64_t> out;
  for (const Call& c : r.calls) out.insert(c.layer);
  for (const Layer& l : r.layers) out.insert(l.index);
  return out;
}

void fill_backend_changes(DiffVerdict& v) {
  for (const LayerDelta& l : v.layers) {
    if (!l.in_baseline || !l.in_candidate || !l.backend_changed()) continue;
    BackendChange* last = v.backend_changes.empty() ? nullptr : &v.backend_changes.back();
    if (last && last->before == l.backend_before && last->after == l.backend_after &&
        last->explanation == l.fallback_explanation && last->layers.back() + 1 == l.layer) {
      last->layers.push_back(l.layer);
    } else {
      v.backend_changes.push_back({{l.layer}, l.backend_before, l.backend_after, l.fallback_explanation});
    }
  }
}

// "head_dim 128 -> 96 (layers 0-3)": one line per distinct change, with the layers it hit.
std::vector<std::string> summarize_input_changes(const std::vector<LayerDelta>& layers) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> grouped;
  for (const LayerDelta& l : layers) {
    for (const std::string& change : l.input_changes) {
      auto it = std::find_if(grouped.begin(), grouped.end(), [&](const auto& g) { return g.first == change; });
      if (it == grouped.end()) grouped.push_back({change, {l.layer}});
      else it->second.push_back(l.layer);
    }
  }
  std::vector<std::string> out;
  for (const auto& [change, ls] : grouped) out.push_back(change + " (" + format_layer_ranges(ls) + ")");
  return out;
}

std::vector<std::string> environment_changes(const SourceInfo& b, const SourceInfo& a) {
  std::vector<std::string> out;
  auto cmp = [&](const std::string& what, const std::string& x, const std::string& y) {
    if (x == y || (x.empty() && y.empty())) return;
    out.push_back(fmt::format("{} {} -> {}", what, x.empty() ? "(unknown)" : x, y.empty() ? "(unknown)" : y));
  };
  cmp("GPU", b.device_name, a.device_name);
  cmp("arch", b.arch, a.arch);
  std::vector<std::string> keys;
  for (const auto& [k, val] : b.versions) keys.push_back(k);
  for (const auto& [k, val] : a.versions)
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  auto lookup = [](const SourceInfo& s, const std::string& k) {
    for (const auto& [key, val] : s.versions)
      if (key == k) return val;
    return std::string();
  };
  for (const auto& k : keys) cmp(k, lookup(b, k), lookup(a, k));
  return out;
}

std::optional<CodeChange> code_change(const SourceInfo& b, const SourceInfo& a) {
  if (!b.code && !a.code) return std::nullopt;
  CodeChange c;
  if (b.code) {
    c.before_commit = b.code->git_commit;
    c.before_dirty = b.code->git_dirty;
    c.config_hash_before = b.code->config_hash;
  }
  if (a.code) {
    c.after_commit = a.code->git_commit;
    c.after_dirty = a.code->git_dirty;
    c.config_hash_after = a.code->config_hash;
  }
  // The candidate's work tree is the likelier one to still exist and to hold both commits.
  c.repo = a.code && !a.code->git_root.empty() ? a.code->git_root : (b.code ? b.code->git_root : "");
  if (!b.code || !a.code) c.note = "only one of the Reports records its code (git commit)";
  return c;
}

int64_t unknown_time_calls(std::span<const Report> runs) {
  int64_t n = 0;
  for (const Report& r : runs)
    for (const Call& c : r.calls) n += c.device_time_unknown ? 1 : 0;
  return n;
}

// Which side's calls have no recorded device time, and what that leaves uncompared.
std::optional<std::string> unknown_time_note(std::span<const Report> baseline, std::span<const Report> candidate) {
  const int64_t b = unknown_time_calls(baseline), a = unknown_time_calls(candidate);
  if (b == 0 && a == 0) return std::nullopt;
  std::vector<std::string> sides;
  if (b > 0) sides.push_back(fmt::format("baseline {}", b));
  if (a > 0) sides.push_back(fmt::format("candidate {}", a));
  return fmt::format("calls with unknown device time ({}; their kernels were not recorded, e.g. ops traced "
                     "during a CUDA/HIP graph capture): device time, fused share and TFLOP/s are unknown "
                     "wherever they occur and are neither a regression nor an improvement",
                     fmt::join(sides, ", "));
}

// "attention device time 1.00 ms -> 1.40 ms (+40.0%, limit +10.0%, noise 20.0 us)": a gated
// metric that grew past its relative limit, each value spelled by `value_text`.
template <typename F>
std::string growth_reason(const char* metric, const MetricDelta& d, double limit, F value_text) {
  return fmt::format("{} {} -> {} ({:+.1f}%, limit +{}{})", metric, value_text(d.before), value_text(d.after),
                     100 * d.relative(), percent_text(limit), d.noise > 0 ? ", noise " + value_text(d.noise) : "");
}

// The verdict's fused shares are percentages (fused_time_pct); a drop is in points.
std::string share_drop_reason(const char* metric, const MetricDelta& d, double limit_pp) {
  return fmt::format("{} {} -> {} ({:+.1f} pp, limit -{:g} pp{})", metric, percent_text(d.before / 100),
                     percent_text(d.after / 100), d.after - d.before, limit_pp,
                     d.noise > 0 ? fmt::format(", noise {:.1f} pp", d.noise) : "");
}

void add_reasons(DiffVerdict& v, const DiffThresholds& t) {
  if (v.fused_time_pct.regression)
    v.reasons.push_back(share_drop_reason("fused share by time", v.fused_time_pct, t.max_fused_drop_pp));
  if (v.fused_calls_pct.regression)
    v.reasons.push_back(share_drop_reason("fused share by calls", v.fused_calls_pct, t.max_fused_drop_pp));
  if (v.attention_time_us.regression)
    v.reasons.push_back(growth_reason("attention device time", v.attention_time_us, t.max_time_increase, time_text));
  if (v.peak_bytes.regression)
    v.reasons.push_back(growth_reason("peak memory during attention", v.peak_bytes, t.max_memory_increase, bytes_text));
}

}  // namespace

DiffVerdict compare_reports(const DiffSide& baseline, const DiffSide& candidate,
                            const DiffThresholds& thresholds) {
  DiffVerdict v = compare_runs(baseline.runs, candidate.runs, thresholds);
  v.baseline = baseline.label;
  v.candidate = candidate.label;
  return v;
}

namespace {

// One layer of either side: its module, backends and classes on each side, the deltas of its
// metrics (reported, never gating), and, where both sides ran it, what changed in its inputs
// and why the candidate's backend was not the baseline's.
LayerDelta layer_delta(int64_t index, const Report& base, const Report& cand, const SideSamples& bs,
                       const SideSamples& cs, const DiffThresholds& thresholds) {
  LayerDelta l;
  l.layer = index;
  const auto b_it = bs.per_layer.find(index);
  const auto c_it = cs.per_layer.find(index);
  l.in_baseline = b_it != bs.per_layer.end();
  l.in_candidate = c_it != cs.per_layer.end();
  l.module = module_of(cand, index);
  if (l.module.empty()) l.module = module_of(base, index);
  const std::vector<std::string> before_backends = backends_of(base, index);
  l.backend_before = joined(before_backends, "+");
  l.backend_after = joined(backends_of(cand, index), "+");
  l.class_before = class_of(base, index);
  l.class_after = class_of(cand, index);
  const Deltas d = compute_deltas(l.in_baseline ? &b_it->second : nullptr, l.in_candidate ? &c_it->second : nullptr,
                                  thresholds, false);
  l.time_us = d.time_us;
  l.fused_time_pct = d.fused_time_pct;
  l.fused_calls_pct = d.fused_calls_pct;
  l.tflops = d.tflops;
  l.peak_bytes = d.peak_bytes;
  const Call* bc = representative_call(base, index);
  const Call* cc = representative_call(cand, index);
  if (bc && cc) {
    l.input_changes = input_changes(*bc, *cc);
    if (l.backend_changed()) l.fallback_explanation = joined(rejection_lines(*cc, before_backends), "; ");
  }
  return l;
}

// What limits the comparison: a side without calls, CPU against GPU, unknown times, no memory.
void add_comparison_notes(std::span<const Report> baseline, std::span<const Report> candidate, DiffVerdict& v) {
  const Report& base = baseline.front();
  const Report& cand = candidate.front();
  if (base.calls.empty() && cand.calls.empty()) v.notes.push_back("no attention calls on either side");
  else if (base.calls.empty()) v.notes.push_back("the baseline has no attention calls");
  else if (cand.calls.empty()) v.notes.push_back("the candidate has no attention calls");
  if (base.summary.has_gpu != cand.summary.has_gpu && !base.calls.empty() && !cand.calls.empty())
    v.notes.push_back("one side is a CPU-only trace: device times are not comparable");
  if (const auto note = unknown_time_note(baseline, candidate)) v.notes.push_back(*note);
  if (!v.peak_bytes.known)
    v.notes.push_back("peak memory not compared: a side has no memory data (profile_memory=False?)");
}

// The fleets' ranks, where both runs have them, compared and gated.
void compare_fleet_ranks(const Report& base, const Report& cand, const DiffThresholds& thresholds, DiffVerdict& v) {
  if (base.ranks && cand.ranks) {
    v.ranks = compare_ranks(*base.ranks, *cand.ranks, thresholds);
    add_rank_reasons(v.reasons, *v.ranks, thresholds);
    if (const auto note = body_rank_note(*base.ranks, *cand.ranks)) v.notes.push_back(*note);
  } else if (base.ranks || cand.ranks) {
    v.notes.push_back(fmt::format("only the {} has a ranks section: ranks not compared", base.ranks ? "baseline" : "candidate"));
  }
}

}  // namespace

DiffVerdict compare_runs(std::span<const Report> baseline, std::span<const Report> candidate,
                         const DiffThresholds& thresholds) {
  DiffVerdict v;
  v.baseline_runs = static_cast<int64_t>(baseline.size());
  v.candidate_runs = static_cast<int64_t>(candidate.size());
  if (baseline.empty() || candidate.empty()) {
    v.notes.push_back("one side has no run to compare");
    return v;
  }
  const Report& base = baseline.front();
  const Report& cand = candidate.front();
  v.calls_before = static_cast<int64_t>(base.calls.size());
  v.calls_after = static_cast<int64_t>(cand.calls.size());

  const SideSamples bs = collect_samples(baseline);
  const SideSamples cs = collect_samples(candidate);
  const Deltas total = compute_deltas(&bs.total, &cs.total, thresholds, /*gated=*/true);
  v.attention_time_us = total.time_us;
  v.fused_time_pct = total.fused_time_pct;
  v.fused_calls_pct = total.fused_calls_pct;
  v.tflops = total.tflops;
  v.peak_bytes = total.peak_bytes;

  std::set<int64_t> layers = layer_indices(base);
  for (int64_t l : layer_indices(cand)) layers.insert(l);
  for (int64_t index : layers) v.layers.push_back(layer_delta(index, base, cand, bs, cs, thresholds));
  fill_backend_changes(v);

  v.causes.inputs = summarize_input_changes(v.layers);
  v.causes.environment = environment_changes(base.source, cand.source);
  v.causes.code = code_change(base.source, cand.source);
  add_comparison_notes(baseline, candidate, v);
  add_reasons(v, thresholds);
  compare_fleet_ranks(base, cand, thresholds, v);
  v.regression = !v.reasons.empty();
  return v;
}

namespace {
std::string label_of(const Report& run) { return run.source.files.empty() ? std::string() : run.source.files.front(); }
}  // namespace

void compare_with_first(std::vector<Report>& runs) {
  for (size_t i = 1; i < runs.size(); ++i) {
    DiffSection section;
    section.noise_rule = kNoiseRule;
    DiffVerdict v = compare_runs({&runs[0], 1}, {&runs[i], 1}, section.thresholds);
    v.name = "against the first run";  // the verdict's heading, under the run's own report
    v.baseline = label_of(runs[0]);
    v.candidate = label_of(runs[i]);
    section.pairs.push_back(std::move(v));
    runs[i].diff = std::move(section);
  }
}

}  // namespace attnprof
