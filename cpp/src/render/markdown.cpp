// Markdown rendering of a Report (GitHub-flavoured tables). Every text that comes from a
// trace (kernel names, module paths) is escaped: it may hold '|', '<' or backticks.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "attnprof/call_facts.h"
#include "attnprof/cost_render.h"
#include "attnprof/output_format.h"
#include "attnprof/render.h"
#include "attnprof/table.h"
#include "attnprof/text_format.h"
#include "attnprof/vocabulary.h"
#include "attnprof/report_view.h"
#include "render/diff_render.h"

namespace attnprof {
namespace {


// A pipe table of plain cells: table_markdown escapes every one (table.h).
std::string markdown_table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows) {
  return table_markdown(Table{.title = {}, .header = std::move(header), .rows = std::move(rows), .notes = {}});
}

}  // namespace

// Head utilisation and sparsity (cpp/src/heads; docs/heads.md), "" without a heads section.
std::string heads_markdown(const ReportView& v) {
  const Report& r = *v.report;
  if (!r.heads) return "";
  const HeadsSection& h = *r.heads;
  std::string out = "\n## Heads\n\n";
  if (!h.weights_look_trained) out += "**Weights look untrained:** " + markdown_escape(h.untrained_reason) + "\n\n";
  if (!h.heads.empty()) out += table_markdown(v.heads);
  for (const HeadCandidate& c : h.candidates)
    out += fmt::format("- candidate: layer {} head {}: **{}**: {}{}\n", c.layer, c.head, markdown_escape(c.action),
                       markdown_escape(c.reason),
                       c.kv_bytes_per_token ? fmt::format(" (frees {} KV bytes per token)", c.kv_bytes_per_token) : "");
  for (const auto& [layers, verdict] : grouped_window_verdicts(h.sliding_window))
    out += fmt::format("- masked attention, {}: {}\n", layers, markdown_escape(verdict));
  if (!h.sampling_note.empty()) out += "- " + markdown_escape(h.sampling_note) + "\n";
  for (const std::string& n : h.notes) out += "- " + markdown_escape(n) + "\n";
  return out;
}

namespace {

// Attention-like names no catalog knows: shown so they can be reported (docs/backends.md).
std::string unrecognised_markdown(const Report& r) {
  if (!r.unrecognised || r.unrecognised->empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const UnrecognisedName& n : *r.unrecognised)
    rows.push_back({n.kind, short_kernel_name(n.name), std::to_string(n.count), time_text(n.device_time_us)});
  return "\n## Unrecognised attention-like kernels\n\nCounted as library `unknown`; please report them.\n\n" +
         markdown_table({"kind", "name", "count", "time"}, std::move(rows));
}

}  // namespace

// Steps and phases (render_common.cpp builds the rows the text report shows too).
std::string story_markdown(const Report& r) {
  std::string out;
  if (r.steps.size() > 1) {
    out += "\n## Steps\n\n" + markdown_escape(steps_line(r)) + "\n\n" +
           markdown_table({"step", "marker", "phase", "tokens", "calls", "attention", "overhead", "GPU time", "share"},
                          step_rows(r, 200));
    if (r.steps.size() > 200) out += fmt::format("\n... {} more steps (JSON Report: `steps`)\n", r.steps.size() - 200);
  }
  if (!r.summary.phases.empty()) {
    out += "\n## Phases\n\n" +
           markdown_table({"phase", "steps", "calls", "time", "share", "useful FLOP/s", "backends", "kernels"}, phase_rows(r));
  }
  if (const std::string scope = heads_scope_text(r.source); !scope.empty()) out += "\n" + markdown_escape(scope) + "\n";
  return out;
}
namespace {

// Several ranks in one Report (cpp/src/fleet): totals, stragglers, disagreements, groups, failures.
std::string ranks_markdown(const Report& r) {
  if (!r.ranks) return "";
  const RanksSection& k = *r.ranks;
  std::string out = "\n## Ranks\n\n" + markdown_escape(ranks_line(k)) + "\n";
  if (!k.stragglers.empty()) {
    out += "\n### Stragglers\n\n" + markdown_table(straggler_columns(), straggler_rows(k, kMaxRankLines));
    if (k.stragglers.size() > kMaxRankLines)
      out += fmt::format("\n... {} more (JSON Report: `ranks.stragglers`)\n", k.stragglers.size() - kMaxRankLines);
  }
  const std::vector<std::string> differ = disagreement_lines(k);
  if (!differ.empty()) out += "\n### Ranks that ran something else than most ranks\n\n";
  for (size_t i = 0; i < differ.size() && i < kMaxRankLines; ++i) out += "- " + markdown_escape(differ[i]) + "\n";
  if (differ.size() > kMaxRankLines)
    out += fmt::format("- ... {} more (JSON Report: `ranks.disagreements`)\n", differ.size() - kMaxRankLines);
  if (!k.groups.empty()) {
    out += "\n### Process groups\n\n" + markdown_table(group_columns(), group_rows(k));
  }
  if (!k.failed.empty()) {
    out += "\n### Failed ranks\n\n" + markdown_table({"file", "error"}, failed_rank_rows(k));
  }
  return out;
}

// "no attention found", or what still resembles attention (finding::kAttentionCandidates).
std::string no_calls_markdown(const Report& r) {
  for (const Finding& f : r.findings)
    if (f.rule == finding::kAttentionCandidates) return fmt::format("\n**{}**\n\n{}\n", markdown_escape(f.title), markdown_escape(f.detail));
  return "\n**no attention found**\n";
}

// The summary's call and time lines.
std::string calls_and_time_markdown(const Summary& s) {
  const bool no_time = device_time_unknown(s);
  std::string out = fmt::format("- attention calls: {} ({} fused: {} of calls, {} of time)\n", s.call_count,
                                s.fused_call_count, percent_text(s.fused_call_fraction),
                                no_time ? std::string("unknown share") : percent_text(s.fused_time_fraction));
  out += fmt::format("- attention {} time: {}", s.has_gpu ? "device" : "CPU",
                     no_time ? std::string("unknown") : time_text(s.attention_device_time_us));
  if (s.has_gpu && !no_time)
    out += fmt::format(" ({} of {} GPU busy time)", percent_text(s.attention_share), time_text(s.gpu_time_us));
  out += "\n";
  if (s.unknown_time_call_count > 0)
    out += fmt::format("- device time unknown for {} call(s): their attention kernels were not recorded (graph capture?)\n",
                       s.unknown_time_call_count);
  return out;
}

std::string unfused_markdown(const ReportView& v) {
  if (v.unfused.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const Call* c : v.unfused)
    rows.push_back({std::to_string(c->layer), std::to_string(c->step), c->direction, c->backend,
                    time_or_unknown(c->device_time_unknown, time_text(c->device_time_us)), shape_text(c->shape),
                    kernels_text(*c)});
  return "\n## Unfused attention calls\n\n" +
         markdown_table({"layer", "step", "direction", "backend", "time", "shape", "kernels"}, std::move(rows));
}

std::string activation_map_markdown(const ReportView& v) {
  const bool per_phase = std::any_of(v.layers.begin(), v.layers.end(),
                                     [](const ActivationRow& a) { return a.layer && !a.layer->phases.empty(); });
  std::vector<std::string> columns{"layer", "module", "backend", "library", "fused share", "calls", "time", "shape", "kernels"};
  if (per_phase) columns.insert(columns.begin() + 7, "per phase");
  std::vector<std::vector<std::string>> rows;
  for (const ActivationRow& activation : v.layers) {
    if (activation.first == nullptr) continue;
    const Layer& layer = *activation.layer;
    const Call& first = *activation.first;
    const std::string backends = backends_text(layer);
    std::vector<std::string> cells{
        std::to_string(layer.index), layer.module.empty() ? "-" : layer.module, backends, first.library,
        time_or_unknown(layer.device_time_unknown, percent_text(layer.fused_time_fraction)),
        std::to_string(layer.call_ids.size()), time_or_unknown(layer.device_time_unknown, time_text(layer.device_time_us)),
        shape_text(first.shape), kernels_text(first)};
    if (per_phase) cells.insert(cells.begin() + 7, layer.phases.empty() ? "-" : layer_phases_text(layer));
    rows.push_back(std::move(cells));
  }
  return "\n## Activation map\n\n" + markdown_table(std::move(columns), std::move(rows));
}

// Why each backend ran (cpp/src/rules; docs/rules.md): one row per forward call with an explanation.
std::string explanations_markdown(const ReportView& v) {
  if (v.explanations.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const ExplanationRow& why : v.explanations) {
    const Call& c = *why.call;
    const Explanation& e = *c.explanation;
    std::string rejected;
    for (const auto& [backend, value] : why.rejected) rejected += (rejected.empty() ? "" : "; ") + backend + ": " + value;
    std::string fix = e.fix;
    if (!e.consistency_note.empty()) fix = e.consistency_note + (fix.empty() ? "" : ". " + fix);
    rows.push_back({std::to_string(c.layer), c.backend, e.predicted_backend, rejected, fix,
                    e.expected_speedup > 0 ? expected_gain_text(e) : "-"});
  }
  return "\n## Why these backends\n\n" +
         markdown_table({"layer", "ran", "rules predict", "rejected", "fix", "expected gain"}, std::move(rows));
}

// The findings (each with its verification mark, where a fix was verified) and the verified fixes.
std::string findings_markdown(const Report& r) {
  std::string out;
  if (!r.findings.empty()) {
    out += "\n## Findings\n\n";
    for (const Finding& f : r.findings) {
      const FixVerification* verified = verification_of(r, f);
      out += fmt::format("- **{}** {}: {}{}\n", markdown_escape(f.severity), markdown_escape(f.title), markdown_escape(f.detail),
                         verified ? " **" + markdown_escape(verification_mark(*verified)) + "**" : "");
    }
  }
  if (r.verification) {
    out += "\n## Verified fixes\n\n" + markdown_escape(verification_line(r)) + "\n\n" + markdown_table(verification_columns(), verification_rows(r));
  }
  return out;
}

std::string notes_markdown(const SourceInfo& source) {
  if (source.missing.empty()) return "";
  std::string out = "\n## Notes\n\n";
  for (const std::string& m : source.missing) out += "- " + markdown_escape(m) + "\n";
  return out;
}

}  // namespace

namespace {

std::string sections_markdown(const ReportView& v) {
  const Report& r = *v.report;
  std::string out = "# attnprof report\n\n";
  for (const std::string& f : r.source.files) out += fmt::format("- {}: {}\n", source_file_kind(f), markdown_code(f));
  out += fmt::format("- device: {}\n", markdown_escape(device_text(r.source, r.summary.has_gpu)));
  const std::string cost = render_cost_markdown(v.cost_tables);  // cost sections (cpp/src/render/cost_render.cpp)
  if (r.calls.empty())
    return out + (cost.empty() && !r.heads ? no_calls_markdown(r) : "\n" + cost) + ranks_markdown(r) +
           unrecognised_markdown(r) + heads_markdown(v);
  out += calls_and_time_markdown(r.summary);
  out += story_markdown(r);
  out += ranks_markdown(r);
  out += unfused_markdown(v);
  out += activation_map_markdown(v);
  out += unrecognised_markdown(r);
  out += explanations_markdown(v);
  out += findings_markdown(r);
  if (!cost.empty()) out += "\n## Cost\n\n" + cost;
  out += heads_markdown(v);
  out += notes_markdown(r.source);
  return out;
}

}  // namespace

// The diff section follows the run's own sections; a Report of a diff alone is its verdict.
std::string render_markdown(const ReportView& v) {
  const Report& r = *v.report;
  if (diff_only(r)) return render_diff_markdown(*r.diff);
  std::string out = sections_markdown(v);
  return r.diff ? out + "\n" + render_diff_markdown(*r.diff) : out;
}

std::string render_markdown(const Report& report) { return render_markdown(make_report_view(report)); }

namespace {
// Several Reports: sections separated by a rule.
std::string markdown_of(const FormatInput& in) {
  std::string out;
  for (size_t i = 0; i < in.views.size(); ++i) out += (i ? "\n---\n\n" : "") + render_markdown(in.views[i]);
  return out;
}
}  // namespace

extern const OutputFormat kMarkdownFormat{"markdown", ".md", "--md", "write the Report as Markdown",
                                          markdown_of, nullptr};

}  // namespace attnprof
