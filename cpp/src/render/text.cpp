// Terminal rendering of a Report: what ran, per layer, unfused calls first.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "attnprof/call_facts.h"
#include "attnprof/cost_render.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/output_format.h"
#include "attnprof/render.h"
#include "attnprof/text_format.h"
#include "attnprof/vocabulary.h"
#include "attnprof/report_view.h"
#include "render/diff_render.h"

namespace attnprof {
namespace {

using Row = std::vector<std::string>;

std::string table(const Row& header, const std::vector<Row>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto widen = [&](const Row& r) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  };
  widen(header);
  for (const Row& r : rows) widen(r);
  std::string out;
  auto line = [&](const Row& r) {
    std::string l = " ";
    for (size_t i = 0; i < r.size(); ++i) l += fmt::format(" {:<{}}", r[i], i + 1 == r.size() ? 0 : width[i]);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const Row& r : rows) line(r);
  return out;
}

std::string header(const Report& r) {
  std::string out;
  for (const std::string& f : r.source.files) out += fmt::format("{}: {}\n", source_file_kind(f), f);
  out += fmt::format("device: {}\n", device_text(r.source, r.summary.has_gpu));
  return out;
}

std::string summary(const Report& r) {
  const Summary& s = r.summary;
  const char* time_kind = s.has_gpu ? "device time" : "CPU time";
  const bool no_time = device_time_unknown(s);
  std::string out = fmt::format("attention: {} call{}, {} fused ({} of calls, {} of time), {} {}", s.call_count,
                                s.call_count == 1 ? "" : "s", s.fused_call_count, percent_text(s.fused_call_fraction),
                                no_time ? "unknown share" : percent_text(s.fused_time_fraction),
                                no_time ? "unknown" : time_text(s.attention_device_time_us), time_kind);
  if (s.has_gpu && !no_time)
    out += fmt::format(", {} of GPU busy time ({})", percent_text(s.attention_share), time_text(s.gpu_time_us));
  if (s.unknown_time_call_count > 0)
    out += fmt::format("; device time unknown for {} call{} (attention kernels not recorded: graph capture?)",
                       s.unknown_time_call_count, s.unknown_time_call_count == 1 ? "" : "s");
  return out + "\n";
}

// Attention-like names no catalog knows: shown so they can be reported (docs/backends.md).
std::string unrecognised_text(const Report& r) {
  if (!r.unrecognised || r.unrecognised->empty()) return "";
  std::vector<Row> rows;
  for (const UnrecognisedName& n : *r.unrecognised)
    rows.push_back({n.kind, short_kernel_name(n.name), std::to_string(n.count), time_text(n.device_time_us)});
  return "\nUnrecognised attention-like kernels (counted as library \"unknown\"; please report them):\n" +
         table({"kind", "name", "count", "time"}, rows);
}

std::string unfused_calls(const ReportView& v) {
  if (v.unfused.empty()) return "";
  std::vector<Row> rows;
  for (const Call* c : v.unfused)
    rows.push_back({std::to_string(c->layer), std::to_string(c->step), c->direction, c->backend,
                    time_or_unknown(c->device_time_unknown, time_text(c->device_time_us)), shape_text(c->shape),
                    kernels_text(*c)});
  return fmt::format("\nUnfused attention calls ({}), slowest first:\n", v.unfused.size()) +
         table({"layer", "step", "dir", "backend", "time", "shape", "kernels"}, rows);
}

std::string activation_map(const ReportView& v, const TextOptions& options) {
  const bool per_phase = std::any_of(v.layers.begin(), v.layers.end(),
                                     [](const ActivationRow& row) { return row.layer && !row.layer->phases.empty(); });
  std::vector<Row> rows;
  for (const ActivationRow& row : v.layers) {
    if (rows.size() == options.max_rows) break;
    if (row.first == nullptr) continue;
    const Layer& layer = *row.layer;
    const Call& first = *row.first;
    const std::string backends = backends_text(layer);
    const std::string fused = time_or_unknown(
        layer.device_time_unknown,
        layer.fused_time_fraction >= 0.999 ? "yes" : layer.fused_time_fraction <= 0.001 ? "NO" : percent_text(layer.fused_time_fraction));
    rows.push_back({std::to_string(layer.index), layer.module.empty() ? "-" : layer.module, backends,
                    first.library.empty() ? "-" : first.library, fused, std::to_string(layer.call_ids.size()),
                    time_or_unknown(layer.device_time_unknown, time_text(layer.device_time_us)), shape_text(first.shape),
                    kernels_text(first)});
    if (per_phase) rows.back().insert(rows.back().begin() + 7, layer.phases.empty() ? "-" : layer_phases_text(layer));
  }
  Row columns{"layer", "module", "backend", "library", "fused", "calls", "time", "shape", "kernels"};
  if (per_phase) columns.insert(columns.begin() + 7, "per phase");
  std::string out = "\nActivation map (one row per attention layer):\n" + table(columns, rows);
  if (v.layers.size() > rows.size()) out += fmt::format("  ... {} more layers\n", v.layers.size() - rows.size());
  return out;
}

// Steps and phases: how much of each engine step is attention, prefill against decode.
std::string story(const Report& r, const TextOptions& options) {
  std::string out;
  const bool several_steps = r.steps.size() > 1;
  if (several_steps) {
    out += "\n" + steps_line(r) + ":\n" +
           table({"step", "marker", "phase", "tokens", "calls", "attention", "overhead", "GPU time", "share"},
                 step_rows(r, options.max_rows));
    if (r.steps.size() > options.max_rows) out += fmt::format("  ... {} more steps\n", r.steps.size() - options.max_rows);
  }
  if (!r.summary.phases.empty())
    out += "\nPhases:\n" + table({"phase", "steps", "calls", "time", "share", "useful FLOP/s", "backends", "kernels"}, phase_rows(r));
  if (const std::string scope = heads_scope_text(r.source); !scope.empty()) out += "  " + scope + "\n";
  return out;
}

// What a Report without calls says: "no attention found", or the finding naming what still
// resembles attention (attention_candidates, finding::kAttentionCandidates).
const Finding* candidates_finding(const Report& r) {
  for (const Finding& f : r.findings)
    if (f.rule == finding::kAttentionCandidates) return &f;
  return nullptr;
}

std::string no_calls_text(const Report& r) {
  const Finding* f = candidates_finding(r);
  return f ? fmt::format("{}\n  {}\n", f->title, f->detail) : "no attention found\n";
}

std::string findings(const Report& r) {
  if (r.findings.empty()) return "";
  std::string out = "\nFindings:\n";
  for (const Finding& f : r.findings) {
    out += fmt::format("  [{}] {}\n      {}\n", f.severity, f.title, f.detail);
    if (const FixVerification* v = verification_of(r, f)) out += "      " + verification_mark(*v) + "\n";
  }
  return out;
}

// attnprof.verify's measured fixes: the table, then why each got its verdict.
std::string verification_text(const Report& r) {
  if (!r.verification) return "";
  std::vector<std::vector<std::string>> rows = verification_rows(r);
  std::vector<std::string> columns = verification_columns();
  std::string why;
  for (size_t i = 0; i < rows.size(); ++i) {
    why += fmt::format("  {}: {}\n", rows[i].front(), rows[i].back());
    rows[i].pop_back();
  }
  columns.pop_back();
  return "\nVerified fixes (" + verification_line(r) + "):\n" + table(columns, rows) + why;
}

// Head utilisation and sparsity (cpp/src/heads; formulas in docs/heads.md).
std::string heads_text(const ReportView& v) {
  const Report& r = *v.report;
  if (!r.heads) return "";
  const HeadsSection& h = *r.heads;
  std::string out;
  if (!h.heads.empty()) {
    out += "\n" + v.heads.title + ":\n";
    if (!h.weights_look_trained) out += "  weights look untrained: " + h.untrained_reason + "\n";
    out += table(v.heads.header, v.heads.rows);
    for (const HeadCandidate& c : h.candidates)
      out += fmt::format("  candidate: layer {} head {} -> {}: {}{}{}\n", c.layer, c.head, c.action, c.reason,
                         c.kv_bytes_per_token ? fmt::format(", frees {} KV bytes per token", c.kv_bytes_per_token) : "",
                         c.expected_speedup > 0 ? fmt::format(", {} faster attention", estimated_ratio_text(c.expected_speedup)) : "");
    if (!h.sampling_note.empty()) out += "  " + h.sampling_note + "\n";
  }
  for (const auto& [layers, verdict] : grouped_window_verdicts(h.sliding_window))
    out += fmt::format("  masked attention, {}: {}\n", layers, verdict);
  for (const std::string& n : h.notes) out += "  note: " + n + "\n";
  return out;
}

// One group of identical explanations as its line(s).
std::string explanation_text(const ExplanationRow& row) {
  const Call& c = *row.call;
  const Explanation& e = *c.explanation;
  std::string text = fmt::format("ran {}, rules predict {}", c.backend, e.predicted_backend);
  for (const auto& [backend, value] : row.rejected) text += fmt::format("; {}: {}", backend, value);
  if (!e.consistency_note.empty()) text += "\n      " + e.consistency_note;
  if (!e.fix.empty()) text += "\n      fix: " + e.fix;
  if (e.expected_speedup > 0)
    text += "\n      expected: " + expected_gain_text(e);
  return text;
}

// Why each backend ran, grouped by identical explanation (cpp/src/rules; docs/rules.md).
std::string explanations(const ReportView& v) {
  if (v.explanation_groups.empty()) return "";
  std::string out = "\nWhy these backends (rules):\n";
  for (const ExplanationGroup& g : v.explanation_groups)
    out += fmt::format("  {}: {}\n", format_layer_ranges(g.layers), explanation_text(v.explanations[g.first]));
  for (const std::string& a : v.assumptions) out += "  assumed: " + a + "\n";
  return out;
}

// Several ranks in one Report (cpp/src/fleet): totals, stragglers, disagreements, groups, failures.
std::string ranks_text(const Report& r) {
  if (!r.ranks) return "";
  const RanksSection& k = *r.ranks;
  std::string out = "\nRanks: " + ranks_line(k) + "\n";
  if (!k.stragglers.empty()) {
    out += "Stragglers (overall first):\n" + table(straggler_columns(), straggler_rows(k, kMaxRankLines));
    if (k.stragglers.size() > kMaxRankLines)
      out += fmt::format("  ... {} more (JSON Report: ranks.stragglers)\n", k.stragglers.size() - kMaxRankLines);
  }
  const std::vector<std::string> differ = disagreement_lines(k);
  if (!differ.empty()) out += "Ranks that ran something else than most ranks:\n";
  for (size_t i = 0; i < differ.size() && i < kMaxRankLines; ++i) out += "  " + differ[i] + "\n";
  if (differ.size() > kMaxRankLines)
    out += fmt::format("  ... {} more (JSON Report: ranks.disagreements)\n", differ.size() - kMaxRankLines);
  if (!k.groups.empty()) out += "Process groups:\n" + table(group_columns(), group_rows(k));
  if (!k.failed.empty()) out += "Failed ranks:\n";
  for (const auto& row : failed_rank_rows(k)) out += fmt::format("  {}: {}\n", row[0], row[1]);
  return out;
}

std::string source_notes(const Report& r) {
  std::string out;
  for (const std::string& m : r.source.missing) out += "  note: " + m + "\n";
  for (const std::string& a : r.source.assumptions) out += "  assumed: " + a + "\n";
  return out.empty() ? "" : "\n" + out;
}

// The report before terminal_escape: every section, names from the trace as they came.
std::string sections_text(const ReportView& view, const TextOptions& options) {
  const Report& report = *view.report;
  std::string out = header(report);
  const std::string cost = render_cost_text(view.cost_tables);  // cost sections (cpp/src/render/cost_render.cpp)
  if (report.calls.empty())
    return out + (report.heads ? heads_text(view) : cost.empty() ? no_calls_text(report) : "\n") + cost +
           ranks_text(report) + unrecognised_text(report) + source_notes(report);
  out += summary(report);
  out += story(report, options);
  out += ranks_text(report);
  out += unfused_calls(view);
  out += activation_map(view, options);
  out += unrecognised_text(report);
  out += heads_text(view);
  out += cost.empty() ? "" : "\n" + cost;
  out += explanations(view);
  out += findings(report);
  out += verification_text(report);
  out += source_notes(report);
  return out;
}

// The diff section follows the run's own sections; a Report of a diff alone is its verdict.
std::string report_text(const ReportView& view, const TextOptions& options) {
  const Report& report = *view.report;
  if (diff_only(report)) return render_diff_text(*report.diff);
  std::string out = sections_text(view, options);
  return report.diff ? out + "\n" + render_diff_text(*report.diff) : out;
}

}  // namespace

std::string render_text(const ReportView& view, const TextOptions& options) {
  return terminal_escape(report_text(view, options));
}

std::string render_text(const Report& report, const TextOptions& options) {
  return render_text(make_report_view(report), options);
}

namespace {
// The terminal report; several Reports one after the other, a blank line between them.
std::string text_of(const FormatInput& in) {
  std::string out;
  for (size_t i = 0; i < in.views.size(); ++i) out += (i ? "\n" : "") + render_text(in.views[i]);
  return out;
}
}  // namespace

extern const OutputFormat kTextFormat{"text", ".txt", "--text", "write the terminal report to a file", text_of, nullptr};

}  // namespace attnprof
