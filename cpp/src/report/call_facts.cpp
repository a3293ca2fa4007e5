// call_facts.h: the one spelling of a call's shape, explanation and backend class.
#include "attnprof/text_format.h"
#include "attnprof/call_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace attnprof {

std::string expected_gain_text(const Explanation& e) {
  if (e.expected_speedup <= 0) return "";
  return fmt::format("{} faster{} ({})", estimated_ratio_text(e.expected_speedup),
                     e.expected_memory_ratio > 0
                         ? fmt::format(", {} less activation memory", estimated_ratio_text(e.expected_memory_ratio))
                         : "",
                     e.gain_basis);
}
namespace {

bool names_one_of(const std::string& backend, std::span<const std::string> backends) {
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

std::string failed_rule_line(const std::string& backend, const RuleCheck& r) {
  std::string line = backend + " not eligible: " + r.rule;
  if (!r.value.empty()) line += " (" + r.value + ")";
  if (!r.message.empty()) line += " - " + r.message;
  if (!r.fix.empty()) line += " -> fix: " + r.fix;
  return line;
}

std::string note_line(const Explanation& e) { return "note: " + e.consistency_note; }

std::string fix_line(const Explanation& e) {
  std::string line = "fix: " + e.fix;
  if (e.expected_speedup > 0) line += fmt::format(" ({} faster", estimated_ratio_text(e.expected_speedup));
  if (e.expected_speedup > 0) line += e.gain_basis.empty() ? ")" : ", " + e.gain_basis + ")";
  return line;
}

// Severity order when one cell, layer or module mixes calls: the slowest kind is what to show.
int class_rank(std::string_view cls) {
  if (cls == backend_class::kEager) return 2;
  if (cls == backend_class::kFallback) return 1;
  return 0;
}

}  // namespace

// long: one optional part per Shape field, in the order they are printed
std::string shape_text(const Shape& s) {
  if (s.Sq == 0 && s.D == 0) return s.dtype;
  std::string out;
  if (s.B) out += fmt::format("B{} ", s.B);
  if (s.Hq) out += s.Hkv && s.Hkv != s.Hq ? fmt::format("H{}/{} ", s.Hq, s.Hkv) : fmt::format("H{} ", s.Hq);
  if (s.tokens) {  // packed sequences: Sq/Skv are the longest ones
    out += fmt::format("T{} ", s.tokens);
    auto known = [](int64_t v) { return v ? std::to_string(v) : std::string("?"); };
    if (s.Sq || s.Skv) out += fmt::format("max S{}x{} ", known(s.Sq), known(s.Skv));
  } else if (s.Sq) {
    out += s.Skv ? fmt::format("S{}x{} ", s.Sq, s.Skv) : fmt::format("T{} ", s.Sq);
  }
  if (s.D) out += fmt::format("D{} ", s.D);
  if (s.Dv && s.Dv != s.D) out += fmt::format("Dv{} ", s.Dv);  // MLA-style value width
  out += s.dtype;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> explanation_lines(const Call& call) {
  std::vector<std::string> lines;
  if (!call.explanation) return lines;
  const Explanation& e = *call.explanation;
  if (!e.predicted_backend.empty()) lines.push_back("rules predict: " + e.predicted_backend);
  if (!e.consistent && !e.consistency_note.empty()) lines.push_back(note_line(e));
  for (const BackendVerdict& v : e.backends)
    for (const RuleCheck& r : v.failed) lines.push_back(failed_rule_line(v.backend, r));
  if (!e.fix.empty()) lines.push_back(fix_line(e));
  for (const std::string& a : e.assumptions) lines.push_back("assumed: " + a);
  return lines;
}

std::vector<std::string> rejection_lines(const Call& call, std::span<const std::string> backends) {
  std::vector<std::string> lines;
  if (!call.explanation) return lines;
  const Explanation& e = *call.explanation;
  for (const BackendVerdict& v : e.backends) {
    if (v.eligible || !names_one_of(v.backend, backends)) continue;
    for (const RuleCheck& r : v.failed) lines.push_back(failed_rule_line(v.backend, r));
  }
  if (!lines.empty()) return lines;
  if (!e.consistency_note.empty()) lines.push_back(note_line(e));
  if (!e.fix.empty()) lines.push_back(fix_line(e));
  return lines;
}

const char* backend_class_of(const Call& call) {
  if (call.fused) return backend_class::kFused;
  if (call.backend == backend::kEager) return backend_class::kEager;
  return backend_class::kFallback;
}

std::string worse_backend_class(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return class_rank(b) > class_rank(a) ? b : a;
}

const Call* first_call_of(const std::vector<Call>& calls, const Layer& layer) {
  if (layer.call_ids.empty()) return nullptr;
  const int64_t id = layer.call_ids.front();
  if (id < 0 || static_cast<size_t>(id) >= calls.size()) return nullptr;
  return &calls[static_cast<size_t>(id)];
}

std::vector<WindowVerdictGroup> group_window_verdicts(const std::vector<WindowEffectiveness>& verdicts) {
  std::vector<WindowVerdictGroup> groups;
  for (const WindowEffectiveness& w : verdicts) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const WindowVerdictGroup& g) { return g.first->verdict == w.verdict; });
    if (it == groups.end()) it = groups.insert(groups.end(), WindowVerdictGroup{&w, {}});
    it->layers.push_back(w.layer);
  }
  return groups;
}

std::unordered_set<int64_t> kernel_correlations(const Report& report) {
  std::unordered_set<int64_t> wanted;
  for (const Call& c : report.calls)
    for (const KernelRef& k : c.kernels)
      if (k.correlation >= 0) wanted.insert(k.correlation);
  return wanted;
}

}  // namespace attnprof
