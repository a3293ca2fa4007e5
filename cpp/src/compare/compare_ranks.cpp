// Two fleet Reports rank by rank (docs/diff.md, "Ranks"): each rank's attention time against
// the same rank's, its layers' times and backends, the fleet median, and the stragglers the
// candidate has that the baseline did not. Pure: it reads the two ranks sections only.
#include "compare/compare_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// The gate names at most this many ranks and counts the rest: one slow node of a large fleet
// must not turn the verdict into a thousand lines.
constexpr size_t kMaxRankReasons = 10;

std::optional<double> rank_time(const RankSummary& r) {
  if (r.attention_time_unknown) return std::nullopt;
  return r.attention_device_time_us;
}

// The fleet's median is over its ranks of known time: unknown when none has one.
std::optional<double> fleet_median(const RanksSection& k) {
  const bool any = std::any_of(k.ranks.begin(), k.ranks.end(), [](const RankSummary& r) { return !r.attention_time_unknown; });
  return any ? std::optional<double>(k.median_attention_us) : std::nullopt;
}

std::optional<double> slowest_ratio(const RanksSection& k) {
  return k.slowest_rank >= 0 ? std::optional<double>(k.slowest_over_median) : std::nullopt;
}

// RankSummary::layers is sorted by index.
const RankLayer* layer_of(const RankSummary& r, int64_t index) {
  auto it = std::lower_bound(r.layers.begin(), r.layers.end(), index,
                             [](const RankLayer& l, int64_t i) { return l.index < i; });
  return it != r.layers.end() && it->index == index ? &*it : nullptr;
}

double layer_time(const RankSummary& r, int64_t index) {
  return index >= 0 && static_cast<size_t>(index) < r.layer_time_us.size() ? r.layer_time_us[index] : 0.0;
}

std::vector<RankLayerDelta> layer_deltas(const RankSummary& before, const RankSummary& after) {
  std::set<int64_t> indices;
  for (const RankLayer& l : before.layers) indices.insert(l.index);
  for (const RankLayer& l : after.layers) indices.insert(l.index);
  std::vector<RankLayerDelta> out;
  for (int64_t index : indices) {
    const RankLayer* b = layer_of(before, index);
    const RankLayer* a = layer_of(after, index);
    out.push_back({index, b != nullptr, a != nullptr, layer_time(before, index), layer_time(after, index),
                   b ? b->backend : "", a ? a->backend : ""});
  }
  return out;
}

// The layer whose time grew most, -1 when none grew.
int64_t worst_layer(const std::vector<RankLayerDelta>& layers) {
  int64_t worst = -1;
  double growth = 0;
  for (const RankLayerDelta& l : layers)
    if (l.after_us - l.before_us > growth) growth = l.after_us - l.before_us, worst = l.layer;
  return worst;
}

RankDelta rank_delta(const RankSummary& before, const RankSummary& after, const DiffThresholds& t) {
  RankDelta d;
  d.rank = after.rank;
  d.file_before = before.file;
  d.file_after = after.file;
  d.time_us = growth_delta(rank_time(before), rank_time(after), t.max_time_increase, /*gated=*/true);
  d.layers = layer_deltas(before, after);
  d.worst_layer = worst_layer(d.layers);
  return d;
}

void add_backend_changes(RanksDelta& out, const RankDelta& rank) {
  for (const RankLayerDelta& l : rank.layers) {
    if (!l.backend_changed()) continue;
    RankBackendChange* last = out.backend_changes.empty() ? nullptr : &out.backend_changes.back();
    if (last && last->rank == rank.rank && last->before == l.backend_before && last->after == l.backend_after &&
        last->layers.back() + 1 == l.layer)
      last->layers.push_back(l.layer);
    else
      out.backend_changes.push_back({rank.rank, {l.layer}, l.backend_before, l.backend_after});
  }
}

std::vector<Straggler> new_stragglers(const RanksSection& before, const RanksSection& after) {
  std::set<std::pair<int64_t, int64_t>> known;
  for (const Straggler& s : before.stragglers) known.insert({s.rank, s.layer});
  std::vector<Straggler> out;
  for (const Straggler& s : after.stragglers)
    if (!known.count({s.rank, s.layer})) out.push_back(s);
  return out;
}

const RankLayerDelta* layer_delta(const RankDelta& r, int64_t layer) {
  for (const RankLayerDelta& l : r.layers)
    if (l.layer == layer) return &l;
  return nullptr;
}

// "rank 5 attention device time 1.40 ms -> 2.10 ms (+50.0%, limit +10.0%), most in layer 3
// (650.0 us -> 1.35 ms; backend flash -> math)".
std::string rank_reason(const RankDelta& r, const std::string& limit) {
  const MetricDelta& d = r.time_us;
  std::string line = fmt::format("rank {} attention device time {} -> {} ({:+.1f}%, {})", r.rank, time_text(d.before),
                                 time_text(d.after), 100 * d.relative(), limit);
  if (const RankLayerDelta* l = layer_delta(r, r.worst_layer)) {
    line += fmt::format(", most in layer {} ({} -> {}", l->layer, time_text(l->before_us), time_text(l->after_us));
    if (l->backend_changed()) line += fmt::format("; backend {} -> {}", l->backend_before, l->backend_after);
    line += ")";
  }
  return line;
}

}  // namespace

RanksDelta compare_ranks(const RanksSection& baseline, const RanksSection& candidate, const DiffThresholds& t) {
  RanksDelta out;
  out.ranks_before = static_cast<int64_t>(baseline.ranks.size());
  out.ranks_after = static_cast<int64_t>(candidate.ranks.size());
  out.failed_before = static_cast<int64_t>(baseline.failed.size());
  out.failed_after = static_cast<int64_t>(candidate.failed.size());
  out.median_us = growth_delta(fleet_median(baseline), fleet_median(candidate), t.max_time_increase, /*gated=*/true);
  out.slowest_over_median =
      growth_delta(slowest_ratio(baseline), slowest_ratio(candidate), t.max_time_increase, /*gated=*/false);
  std::map<int64_t, const RankSummary*> before, after;
  for (const RankSummary& r : baseline.ranks) before[r.rank] = &r;
  for (const RankSummary& r : candidate.ranks) after[r.rank] = &r;
  for (const auto& [rank, a] : after) {
    auto b = before.find(rank);
    if (b == before.end()) {
      out.only_candidate.push_back(rank);
      continue;
    }
    out.ranks.push_back(rank_delta(*b->second, *a, t));
    add_backend_changes(out, out.ranks.back());
  }
  for (const auto& [rank, b] : before)
    if (!after.count(rank)) out.only_baseline.push_back(rank);
  out.new_stragglers = new_stragglers(baseline, candidate);
  return out;
}

void add_rank_reasons(std::vector<std::string>& reasons, const RanksDelta& k, const DiffThresholds& t) {
  const std::string limit = "limit +" + percent_text(t.max_time_increase);
  if (k.median_us.regression)
    reasons.push_back(fmt::format("fleet median attention device time {} -> {} ({:+.1f}%, {})",
                                  time_text(k.median_us.before), time_text(k.median_us.after),
                                  100 * k.median_us.relative(), limit));
  std::vector<const RankDelta*> regressed;
  for (const RankDelta& r : k.ranks)
    if (r.time_us.regression) regressed.push_back(&r);
  std::stable_sort(regressed.begin(), regressed.end(), [](const RankDelta* a, const RankDelta* b) {
    return a->time_us.relative() > b->time_us.relative();
  });
  for (size_t i = 0; i < regressed.size() && i < kMaxRankReasons; ++i) reasons.push_back(rank_reason(*regressed[i], limit));
  if (regressed.size() > kMaxRankReasons)
    reasons.push_back(fmt::format("{} more ranks beyond the limit (listed in the ranks comparison)",
                                  regressed.size() - kMaxRankReasons));
}

std::optional<std::string> body_rank_note(const RanksSection& baseline, const RanksSection& candidate) {
  // The body is the slowest measured rank's Report, else the first analysed rank's (cpp/src/fleet).
  auto body_rank = [](const RanksSection& k) -> int64_t {
    return k.slowest_rank >= 0 ? k.slowest_rank : k.ranks.empty() ? -1 : k.ranks.front().rank;
  };
  const int64_t b = body_rank(baseline), a = body_rank(candidate);
  if (b == a || b < 0 || a < 0) return std::nullopt;
  return fmt::format("each fleet Report's calls are its slowest rank's: the per-call and per-layer comparison sets "
                     "rank {} (baseline) against rank {} (candidate); the ranks comparison matches each rank with itself",
                     b, a);
}

}  // namespace attnprof
