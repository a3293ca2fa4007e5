// Never silent: when no attention call was recognised, what in the trace still resembles
// attention, and why each was not taken (docs/backends.md, "When no call is recognised").
// Two kinds of evidence:
//   - structure: a softmax-like op between two matrix products among a thread's outermost
//     ops (what the eager matcher walks), within kWindow ops on each side;
//   - vocabulary: op, kernel, nn.Module or annotation names with attention words in them
//     (has_attention_vocabulary) that no catalog knows.
// A log-softmax (a loss), a backward node and a softmax without products on both sides (a
// router, a classifier) are neither: they give no finding, and "no attention found" stands.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "attnprof/attention.h"
#include "attnprof/vocabulary.h"
#include "extraction.h"

namespace attnprof {
namespace {

constexpr size_t kWindow = 12;     // outermost ops looked at on each side of a softmax
constexpr size_t kMaxExamples = 3;  // names quoted per candidate kind

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(const std::string& text, std::string_view word) { return text.find(word) != std::string::npos; }

bool is_backward_name(const std::string& n) {
  return contains(n, "backward") || n.starts_with(lower(kAutogradNodePrefix));
}

bool softmax_like(std::string_view name) {
  const std::string n = lower(name);
  return contains(n, "softmax") && !contains(n, "log_softmax") && !contains(n, "logsoftmax") && !is_backward_name(n);
}

bool product_like(std::string_view name) {
  if (const AtenOpWord* w = aten_op_word(name); w && (w->roles & kRoleMatmul)) return true;
  const std::string n = lower(name);
  if (is_backward_name(n)) return false;
  return contains(n, "matmul") || contains(n, "bmm") || contains(n, "gemm") || contains(n, "einsum");
}

// Attention vocabulary (has_attention_vocabulary, the kernel catalog's whole-word list) in a
// name no catalog knows as something else: an op or kernel the catalogs leave unrecognised
// (a KV-cache write such as reshape_and_cache_flash is known, not a candidate), or a module
// frame (nn.Module: MultiHeadedAttention_0) or annotation.
bool attention_vocabulary(const Slice& s, std::string_view name) {
  if (is_backward_name(lower(name))) return false;
  switch (s.cat) {
    case Category::kCpuOp: return is_unrecognised_attention_op(name);
    case Category::kKernel: return is_unrecognised(classify_kernel(name));
    case Category::kPythonFunction:
    case Category::kUserAnnotation:
    case Category::kGpuUserAnnotation: return has_attention_vocabulary(name);
    default: return false;
  }
}

bool has_role(std::string_view name, unsigned role) {
  const AtenOpWord* w = aten_op_word(name);
  return w && (w->roles & role);
}

// Why the eager matcher did not take the softmax at ops[sm] between the products at ops[before]
// and ops[after] (the first reason that holds, in the order the matcher checks).
std::string why_not_taken(const Trace& trace, const std::vector<uint32_t>& ops, size_t before, size_t sm, size_t after) {
  const auto name = [&](size_t i) { return trace.name_of(trace.slices[ops[i]]); };
  if (!has_role(name(sm), kRoleSoftmax))
    return fmt::format("{} is not an ATen softmax (aten::softmax, _softmax, _safe_softmax, _masked_softmax)", name(sm));
  for (const size_t p : {before, after})
    if (!has_role(name(p), kRoleMatmul))
      return fmt::format("{} is not an ATen matrix product (matmul, bmm, baddbmm, einsum, mm)", name(p));
  std::vector<std::string> strangers;
  for (size_t i = before + 1; i < after; ++i) {
    if (i == sm) continue;
    const unsigned allowed = kRoleLayout | (i < sm ? kRoleScore : kRoleProb);
    if (!has_role(name(i), allowed)) strangers.emplace_back(name(i));
  }
  if (!strangers.empty()) {
    strangers.resize(std::min(strangers.size(), kMaxExamples));
    return fmt::format("ops that are not scale, mask, dropout or view ops lie between: {}", fmt::join(strangers, ", "));
  }
  return "the recorded shapes do not chain [..,Sq,D] x [..,D,Skv] -> softmax over Skv -> [..,Sq,Skv] x [..,Skv,Dv], "
         "or a product's operand is a 2-D weight (a projection, e.g. onto a vocabulary)";
}

struct Tally {
  int64_t count = 0;
  std::string example;  // the first occurrence's reason, or the name itself
};

void structural_candidates(const ExtractionContext& ctx, std::map<std::string, Tally>& out) {
  const Trace& trace = ctx.trace;
  for (const std::vector<uint32_t>& ops : outermost_ops_per_thread(ctx)) {
    for (size_t sm = 0; sm < ops.size(); ++sm) {
      if (!softmax_like(trace.name_of(trace.slices[ops[sm]]))) continue;
      std::optional<size_t> before, after;
      for (size_t i = sm; i > 0 && sm - i < kWindow && !before;)
        if (product_like(trace.name_of(trace.slices[ops[--i]]))) before = i;
      for (size_t i = sm + 1; i < ops.size() && i - sm <= kWindow && !after; ++i)
        if (product_like(trace.name_of(trace.slices[ops[i]]))) after = i;
      if (!before || !after) continue;
      const std::string key = fmt::format("{} -> {} -> {}", trace.name_of(trace.slices[ops[*before]]),
                                          trace.name_of(trace.slices[ops[sm]]), trace.name_of(trace.slices[ops[*after]]));
      Tally& t = out[key];
      if (t.count++ == 0) t.example = why_not_taken(trace, ops, *before, sm, *after);
    }
  }
}

void vocabulary_candidates(const Trace& trace, std::map<std::string, Tally>& out) {
  // Per (name, category): 2 unchecked, else the answer (a trace repeats few names).
  constexpr size_t kCategories = static_cast<size_t>(Category::kOther) + 1;
  std::vector<uint8_t> verdict(trace.strings.size() * kCategories, 2);
  for (const Slice& s : trace.slices) {
    const size_t at = static_cast<size_t>(s.name) * kCategories + static_cast<size_t>(s.cat);
    if (at >= verdict.size()) continue;
    if (verdict[at] == 2) verdict[at] = attention_vocabulary(s, trace.name_of(s)) ? 1 : 0;
    if (!verdict[at]) continue;
    Tally& t = out[std::string(trace.name_of(s))];
    if (t.count++ == 0) t.example = category_name(s.cat);
  }
}

std::string listed(const std::map<std::string, Tally>& tallies, bool with_reason) {
  std::vector<std::pair<std::string, const Tally*>> rows;
  for (const auto& [name, t] : tallies) rows.emplace_back(name, &t);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second->count > b.second->count; });
  std::string out;
  for (size_t i = 0; i < rows.size() && i < kMaxExamples; ++i)
    out += fmt::format("{}{} ({}x{}{})", out.empty() ? "" : "; ", rows[i].first, rows[i].second->count,
                       with_reason ? ": " : ", ", rows[i].second->example);
  if (rows.size() > kMaxExamples) out += fmt::format("; and {} more", rows.size() - kMaxExamples);
  return out;
}

int64_t total(const std::map<std::string, Tally>& tallies) {
  int64_t n = 0;
  for (const auto& [name, t] : tallies) n += t.count;
  return n;
}

}  // namespace

std::optional<Finding> attention_candidates(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls) {
  if (!calls.empty()) return std::nullopt;
  const ExtractionContext ctx(trace, index);
  std::map<std::string, Tally> patterns, names;
  structural_candidates(ctx, patterns);
  vocabulary_candidates(trace, names);
  if (patterns.empty() && names.empty()) return std::nullopt;
  Finding f;
  f.severity = "info";
  f.rule = finding::kAttentionCandidates;
  f.title = fmt::format("no attention call recognised, but {} candidate{} resemble attention", total(patterns) + total(names),
                        total(patterns) + total(names) == 1 ? "" : "s");
  std::string detail;
  if (!patterns.empty())
    detail += fmt::format("Softmax between two matrix products, not taken as eager attention: {}. ", listed(patterns, true));
  if (!names.empty())
    detail += fmt::format("Names with attention vocabulary (no attention op of the catalog, no attention kernel, no "
                          "matmul -> softmax -> matmul pattern inside): {}. ", listed(names, false));
  detail += "If these are attention, the op or kernel names are missing from the catalogs (docs/backends.md): "
            "please report them.";
  f.detail = std::move(detail);
  return f;
}

}  // namespace attnprof
