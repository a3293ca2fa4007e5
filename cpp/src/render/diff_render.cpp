// The diff section of a Report (attnprof diff's verdicts, a later run's comparison with the
// first) as the text and Markdown reports show it: each pair's verdict, its gated metrics,
// backend changes, ranks, per-layer table and causes. The tables are built once (plain cells,
// also `diff --csv`) and table_markdown escapes their cells; every other string that came from
// a trace or from git is escaped for Markdown here; the text report escapes its whole output
// for the terminal (render_text).
#include "render/diff_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "attnprof/layer_ranges.h"
#include "attnprof/table.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// The verdict's fused shares are percentages (fused_time_pct), the formatter takes a fraction.
std::string share_text(double pct) { return percent_text(pct / 100); }

enum class Change { kRelative, kPoints };

// "1.20 ms -> 4.80 ms (+300.0%)", "100.0% -> 0.0% (-100.0 pp)", "-" when unknown.
// A side with unknown samples (device time not recorded) is "unknown", never a number.
template <typename F>
std::string side_text(int64_t samples, int64_t unknown, double value, F value_text) {
  return unknown > 0 ? "unknown" : samples > 0 ? value_text(value) : "(none)";
}

template <typename F>
std::string before_after(const MetricDelta& d, F value_text, Change change) {
  if (d.before_samples + d.before_unknown == 0 && d.after_samples + d.after_unknown == 0) return "-";
  if (!d.known)
    return side_text(d.before_samples, d.before_unknown, d.before, value_text) + " -> " +
           side_text(d.after_samples, d.after_unknown, d.after, value_text);
  const std::string b = value_text(d.before), a = value_text(d.after);
  if (b == a) return b;
  std::string delta = change == Change::kPoints ? fmt::format("{:+.1f} pp", d.after - d.before)
                                                : fmt::format("{:+.1f}%", 100 * d.relative());
  return fmt::format("{} -> {} ({})", b, a, delta);
}

std::string gate_text(const MetricDelta& d) {
  if (!d.gated) return "";
  if (d.before_unknown > 0 || d.after_unknown > 0) return "not compared (device time unknown)";
  if (d.regression) return "REGRESSION";
  if (d.worsening > d.limit && d.worsening <= d.noise) return "within noise";
  return "ok";
}

std::string verdict_word(bool regression) { return regression ? "REGRESSION" : "no regression"; }

std::string backend_text(const LayerDelta& l) {
  const std::string b = l.backend_before.empty() ? "(none)" : l.backend_before;
  const std::string a = l.backend_after.empty() ? "(none)" : l.backend_after;
  return b == a ? b : b + " -> " + a;
}

std::string pair_name(const DiffVerdict& v) { return v.name.empty() ? "attention" : v.name; }

std::string short_hash(const std::string& h) { return h.empty() ? "(none)" : h.substr(0, 12); }

std::string commit_text(const std::string& hash, bool dirty) {
  return short_hash(hash) + (dirty ? " (dirty)" : "");
}

// --- fleets: rank by rank ----------------------------------------------------------------------

// Ranks worth a line: those the gate names or whose backend changed, worst first, at most `max`.
std::vector<const RankDelta*> notable_ranks(const RanksDelta& k, size_t max) {
  std::vector<const RankDelta*> out;
  for (const RankDelta& r : k.ranks) {
    const bool changed = std::any_of(r.layers.begin(), r.layers.end(), [](const RankLayerDelta& l) { return l.backend_changed(); });
    if (r.time_us.regression || changed) out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(), [](const RankDelta* a, const RankDelta* b) {
    return a->time_us.relative() > b->time_us.relative();
  });
  if (out.size() > max) out.resize(max);
  return out;
}

std::string rank_count_text(const RanksDelta& k) {
  std::string out = fmt::format("{} -> {} ranks analysed", k.ranks_before, k.ranks_after);
  if (k.failed_before || k.failed_after) out += fmt::format(" (failed {} -> {})", k.failed_before, k.failed_after);
  return out;
}

std::string worst_layer_text(const RankDelta& r) {
  for (const RankLayerDelta& l : r.layers)
    if (l.layer == r.worst_layer)
      return fmt::format("layer {} {} -> {}", l.layer, time_text(l.before_us), time_text(l.after_us));
  return "-";
}

std::string straggler_text(const Straggler& s) {
  std::string out = fmt::format("rank {} {} at {} the median", s.rank,
                                s.layer < 0 ? std::string("overall") : fmt::format("in layer {}", s.layer), ratio_text(s.over_median));
  return s.worst_layer >= 0 ? out + fmt::format(" (most in layer {})", s.worst_layer) : out;
}

std::string ranks_only_text(const std::vector<int64_t>& ranks, const char* side) {
  return ranks.empty() ? "" : fmt::format("{} only in the {}", format_index_ranges(ranks, "rank", "ranks"), side);
}

// Rows shown per fleet in the Markdown table; the JSON has every rank.
constexpr size_t kMaxRankRows = 20;

// Rank by rank: the ranks the gate names or whose backend changed (notable_ranks).
Table ranks_table(const DiffVerdict& v) {
  const RanksDelta& k = *v.ranks;
  Table t{.title = pair_name(v) + ": ranks",
          .header = {"Rank", "Attention time", "Gate", "Most grown layer", "Backend changes"}};
  for (const RankDelta* r : notable_ranks(k, kMaxRankRows)) {
    std::string changes;
    for (const RankBackendChange& c : k.backend_changes)
      if (c.rank == r->rank)
        changes += (changes.empty() ? "" : "; ") + fmt::format("{}: {} -> {}", format_layer_ranges(c.layers), c.before, c.after);
    t.rows.push_back({std::to_string(r->rank), before_after(r->time_us, time_text, Change::kRelative), gate_text(r->time_us),
                      worst_layer_text(*r), changes.empty() ? "-" : changes});
  }
  return t;
}

void markdown_ranks(std::string& out, const DiffVerdict& v) {
  const RanksDelta& k = *v.ranks;
  const std::string gate = gate_text(k.median_us);
  out += fmt::format("**Ranks**: {}; fleet median attention time {}{}\n\n", rank_count_text(k),
                     before_after(k.median_us, time_text, Change::kRelative), gate.empty() ? "" : " (" + gate + ")");
  if (const Table ranks = ranks_table(v); !ranks.rows.empty()) out += table_markdown(ranks) + "\n";
  for (const Straggler& s : k.new_stragglers) out += "- New straggler: " + straggler_text(s) + "\n";
  for (const auto& [ranks, side] : {std::pair{&k.only_baseline, "baseline"}, std::pair{&k.only_candidate, "candidate"}})
    if (!ranks->empty()) out += "- " + ranks_only_text(*ranks, side) + "\n";
  if (!k.new_stragglers.empty() || !k.only_baseline.empty() || !k.only_candidate.empty()) out += "\n";
}

void text_ranks(std::string& out, const RanksDelta& k) {
  const std::string gate = gate_text(k.median_us);
  out += fmt::format("  ranks: {}; fleet median {}{}\n", rank_count_text(k),
                     before_after(k.median_us, time_text, Change::kRelative), gate.empty() ? "" : "  [" + gate + "]");
  for (const RankDelta* r : notable_ranks(k, 10))
    out += fmt::format("    rank {}: {}  [{}], most grown: {}\n", r->rank, before_after(r->time_us, time_text, Change::kRelative),
                       gate_text(r->time_us), worst_layer_text(*r));
  for (const RankBackendChange& c : k.backend_changes)
    out += fmt::format("    rank {} {}: {} -> {}\n", c.rank, format_layer_ranges(c.layers), c.before, c.after);
  for (const Straggler& s : k.new_stragglers) out += "    new straggler: " + straggler_text(s) + "\n";
  for (const auto& [ranks, side] : {std::pair{&k.only_baseline, "baseline"}, std::pair{&k.only_candidate, "candidate"}})
    if (!ranks->empty()) out += "    " + ranks_only_text(*ranks, side) + "\n";
}

// The metrics of one pair and their gates (achieved FLOP/s is shown, never gated: no gate text).
Table metrics_table(const DiffVerdict& v) {
  const auto row = [](const char* metric, const std::string& value, const std::string& gate) {
    return std::vector<std::string>{metric, value, gate};
  };
  return Table{
      .title = pair_name(v) + ": metrics",
      .header = {"Metric", "Baseline -> Candidate", "Gate"},
      .rows = {row("Fused share (time)", before_after(v.fused_time_pct, share_text, Change::kPoints), gate_text(v.fused_time_pct)),
               row("Fused share (calls)", before_after(v.fused_calls_pct, share_text, Change::kPoints), gate_text(v.fused_calls_pct)),
               row("Attention device time", before_after(v.attention_time_us, time_text, Change::kRelative),
                   gate_text(v.attention_time_us)),
               row("Achieved FLOP/s", before_after(v.tflops, flops_text, Change::kRelative), gate_text(v.tflops)),
               row("Peak memory", before_after(v.peak_bytes, bytes_text, Change::kRelative), gate_text(v.peak_bytes))}};
}

void markdown_metrics(std::string& out, const DiffVerdict& v, const DiffThresholds& t) {
  out += table_markdown(metrics_table(v)) + "\n";
  out += fmt::format("Limits: fused share -{:g} pp, time +{:g}%, memory +{:g}%; a change within the "
                     "spread of the runs/steps is not a regression.\n\n",
                     t.max_fused_drop_pp, 100 * t.max_time_increase, 100 * t.max_memory_increase);
}

void markdown_backend_changes(std::string& out, const DiffVerdict& v) {
  if (v.backend_changes.empty()) return;
  out += "**Backend changes**\n\n";
  for (const auto& c : v.backend_changes) {
    out += fmt::format("- {}: {} -> {}", format_layer_ranges(c.layers), markdown_escape(c.before), markdown_escape(c.after));
    if (!c.explanation.empty()) out += " (" + markdown_escape(c.explanation) + ")";
    out += "\n";
  }
  out += "\n";
}

Table layers_table(const DiffVerdict& v) {
  Table t{.title = pair_name(v) + ": per layer",
          .header = {"Layer", "Module", "Backend", "Fused (time)", "Fused (calls)", "Device time", "FLOP/s", "Peak memory"}};
  for (const LayerDelta& l : v.layers)
    t.rows.push_back({l.layer < 0 ? "?" : std::to_string(l.layer), l.module, backend_text(l),
                      before_after(l.fused_time_pct, share_text, Change::kPoints),
                      before_after(l.fused_calls_pct, share_text, Change::kPoints),
                      before_after(l.time_us, time_text, Change::kRelative), before_after(l.tflops, flops_text, Change::kRelative),
                      before_after(l.peak_bytes, bytes_text, Change::kRelative)});
  return t;
}

void markdown_layers(std::string& out, const DiffVerdict& v) {
  out += "**Per layer**\n\n" + table_markdown(layers_table(v)) + "\n";
}

// The commits on each side, the model config hash, and the commits in between where git has them.
void markdown_code_change(std::string& out, const CodeChange& code) {
  out += fmt::format("- Code: {} -> {}", commit_text(code.before_commit, code.before_dirty),
                     commit_text(code.after_commit, code.after_dirty));
  if (code.config_changed())
    out += fmt::format("; model config hash {} -> {}", markdown_escape(code.config_hash_before), markdown_escape(code.config_hash_after));
  out += "\n";
  if (code.history_available) {
    out += fmt::format("  - {} commit(s) in between{}:\n", code.commits.size(),
                       code.filtered_by_files ? " touching " + markdown_escape(fmt::format("{}", fmt::join(code.files, ", "))) : "");
    for (const auto& commit : code.commits) out += fmt::format("    - `{}` {}\n", short_hash(commit.hash), markdown_escape(commit.subject));
  }
  if (!code.note.empty()) out += "  - " + markdown_escape(code.note) + "\n";
}

void markdown_causes(std::string& out, const CauseSummary& c) {
  const bool code_changed = c.code && (c.code->commit_changed() || c.code->config_changed() ||
                                       c.code->before_dirty || c.code->after_dirty);
  if (c.inputs.empty() && c.environment.empty() && !code_changed) return;
  out += "**What changed**\n\n";
  for (const auto& s : c.inputs) out += "- Inputs: " + markdown_escape(s) + "\n";
  for (const auto& s : c.environment) out += "- Environment: " + markdown_escape(s) + "\n";
  if (code_changed) markdown_code_change(out, *c.code);
  out += "\n";
}

void markdown_pair(std::string& out, const DiffVerdict& v, const DiffThresholds& t) {
  out += fmt::format("### {}: {}\n\n", markdown_escape(pair_name(v)), verdict_word(v.regression));
  out += fmt::format("Baseline {} ({} run(s), {} calls) vs candidate {} ({} run(s), {} calls).\n\n",
                     markdown_code(v.baseline), v.baseline_runs, v.calls_before, markdown_code(v.candidate), v.candidate_runs,
                     v.calls_after);
  for (const auto& r : v.reasons) out += "- **Regression:** " + r + "\n";  // numbers only, no input text
  if (!v.reasons.empty()) out += "\n";
  markdown_metrics(out, v, t);
  markdown_backend_changes(out, v);
  if (v.ranks) markdown_ranks(out, v);
  markdown_layers(out, v);
  markdown_causes(out, v.causes);
  for (const auto& n : v.notes) out += "_Note: " + markdown_escape(n) + "_\n";
  if (!v.notes.empty()) out += "\n";
}

// The metrics table as lines: "  fused share (time)       100.0%  [ok]" (the metric in lower case).
void text_metrics(std::string& out, const DiffVerdict& v) {
  for (const std::vector<std::string>& row : metrics_table(v).rows) {
    std::string metric = row[0];
    metric[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(metric[0])));
    out += fmt::format("  {:<24} {}{}\n", metric, row[1], row[2].empty() ? "" : "  [" + row[2] + "]");
  }
}

void text_pair(std::string& out, const DiffVerdict& v) {
  out += fmt::format("{}: {}\n", pair_name(v), verdict_word(v.regression));
  out += fmt::format("  baseline  {} ({} run(s), {} calls)\n  candidate {} ({} run(s), {} calls)\n",
                     v.baseline, v.baseline_runs, v.calls_before, v.candidate, v.candidate_runs, v.calls_after);
  for (const auto& r : v.reasons) out += "  regression: " + r + "\n";
  text_metrics(out, v);
  for (const auto& c : v.backend_changes) {
    out += fmt::format("  {}: {} -> {}", format_layer_ranges(c.layers), c.before, c.after);
    if (!c.explanation.empty()) out += " (" + c.explanation + ")";
    out += "\n";
  }
  if (v.ranks) text_ranks(out, *v.ranks);
  for (const auto& s : v.causes.inputs) out += "  inputs: " + s + "\n";
  for (const auto& s : v.causes.environment) out += "  environment: " + s + "\n";
  if (v.causes.code && v.causes.code->commit_changed()) {
    const CodeChange& code = *v.causes.code;
    out += fmt::format("  code: {} -> {}\n", commit_text(code.before_commit, code.before_dirty),
                       commit_text(code.after_commit, code.after_dirty));
    for (const auto& commit : code.commits) out += fmt::format("    {} {}\n", short_hash(commit.hash), commit.subject);
    if (!code.note.empty()) out += "    (" + code.note + ")\n";
  }
  for (const auto& n : v.notes) out += "  note: " + n + "\n";
}

}  // namespace

std::string render_diff_markdown(const DiffSection& diff) {
  std::string out = fmt::format("## attnprof diff: {}\n\n", verdict_word(diff.regression()));
  for (const auto& v : diff.pairs) markdown_pair(out, v, diff.thresholds);
  if (!diff.unmatched.empty()) {
    out += "Unmatched (present on one side only):\n";
    for (const auto& u : diff.unmatched) out += "- " + markdown_code(u) + "\n";
  }
  return out;
}

std::string render_diff_text(const DiffSection& diff) {
  std::string out;
  for (const auto& v : diff.pairs) text_pair(out, v);
  for (const auto& u : diff.unmatched) out += "unmatched: " + u + "\n";
  out += fmt::format("verdict: {}\n", verdict_word(diff.regression()));
  return out;
}

std::vector<Table> diff_tables(const DiffSection& diff) {
  std::vector<Table> tables;
  for (const auto& v : diff.pairs) {
    tables.push_back(metrics_table(v));
    if (v.ranks) tables.push_back(ranks_table(v));
    tables.push_back(layers_table(v));
  }
  return tables;
}

bool diff_only(const Report& report) { return report.diff && report.calls.empty() && report.source.files.empty(); }

}  // namespace attnprof
