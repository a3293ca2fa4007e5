// The multi-rank section as plain lines and rows, for the text and Markdown reports and the
// dashboard, so every format names a straggler or a disagreement the same way.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>

#include "attnprof/text_format.h"
#include "attnprof/layer_ranges.h"
#include "attnprof/render.h"

namespace attnprof {
namespace {

std::string slowest_text(const RanksSection& r) {
  if (r.slowest_rank < 0) return "no slowest rank (fewer than 2 ranks with a known attention time)";
  return fmt::format("slowest rank {} at {} the median", r.slowest_rank, ratio_text(r.slowest_over_median));
}

// The straggler threshold needs three measured ranks for a robust spread (cpp/src/fleet).
std::string threshold_text(const RanksSection& r) {
  if (r.straggler_threshold <= 0) return "no straggler threshold (fewer than 3 ranks with a known attention time)";
  size_t overall = 0;
  for (const Straggler& s : r.stragglers) overall += s.layer < 0 ? 1 : 0;
  return fmt::format("{} straggling beyond {}", overall, ratio_text(r.straggler_threshold));
}

// A RankLayer's value of one of the facets ranks are compared on (Disagreement::facet).
const std::string* facet_value(const RankLayer& layer, std::string_view facet) {
  if (facet == "backend") return &layer.backend;
  if (facet == "kernel") return &layer.kernel;
  if (facet == "shape") return &layer.shape;
  if (facet == "mask") return &layer.mask;
  if (facet == "dtype") return &layer.dtype;
  return nullptr;
}

// How many ranks know the facet in the layer: the "of N" of "7 of 8".
int64_t ranks_knowing(const RanksSection& r, int64_t layer, std::string_view facet) {
  int64_t n = 0;
  for (const RankSummary& rank : r.ranks) {
    // RankSummary::layers is sorted by index.
    auto it = std::lower_bound(rank.layers.begin(), rank.layers.end(), layer,
                               [](const RankLayer& l, int64_t i) { return l.index < i; });
    if (it == rank.layers.end() || it->index != layer) continue;
    const std::string* value = facet_value(*it, facet);
    n += value && !value->empty() ? 1 : 0;
  }
  return n;
}

// Kernel names shortened as the activation map shortens them; other facets as the Report spells them.
std::string facet_text(std::string_view facet, const std::string& value) {
  return facet == "kernel" ? short_kernel_name(value) : value;
}

std::string what_it_ran(std::string_view facet, const std::string& value) {
  const std::string v = facet_text(facet, value);
  if (facet == "backend") return "ran " + v;
  if (facet == "kernel") return "ran kernel " + v;
  if (facet == "dtype") return "ran in " + v;
  return fmt::format("had {} {}", facet, v);
}

// What a group of disagreements shares: everything but the layers (first pass) or the ranks.
struct DisagreementKey {
  std::string facet, majority, value, cause;
  int64_t majority_ranks = 0, known = 0;
  auto tie() const { return std::tie(facet, majority, value, cause, majority_ranks, known); }
};

struct DisagreementGroup {
  DisagreementKey key;
  std::vector<int64_t> layers;
  std::vector<int64_t> ranks;
};

// First pass: one group per rank and difference, with the layers it hit.
std::vector<DisagreementGroup> group_by_rank(const RanksSection& r) {
  std::vector<DisagreementGroup> groups;
  for (const Disagreement& d : r.disagreements) {
    DisagreementKey key{d.facet, d.majority, d.value, d.cause, d.majority_ranks, ranks_knowing(r, d.layer, d.facet)};
    auto it = std::find_if(groups.begin(), groups.end(), [&](const DisagreementGroup& g) {
      return g.ranks.front() == d.rank && g.key.tie() == key.tie();
    });
    if (it == groups.end()) groups.push_back({std::move(key), {d.layer}, {d.rank}});
    else it->layers.push_back(d.layer);
  }
  return groups;
}

// Second pass: ranks that differ the same way in the same layers share one line.
std::vector<DisagreementGroup> group_by_layers(std::vector<DisagreementGroup> by_rank) {
  std::vector<DisagreementGroup> groups;
  for (DisagreementGroup& g : by_rank) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const DisagreementGroup& other) {
      return other.layers == g.layers && other.key.tie() == g.key.tie();
    });
    if (it == groups.end()) groups.push_back(std::move(g));
    else it->ranks.push_back(g.ranks.front());
  }
  return groups;
}

std::string disagreement_line(const DisagreementGroup& g) {
  const DisagreementKey& k = g.key;
  std::string line = fmt::format("{}: {} {} (most ranks: {}, {} of {})", format_layer_ranges(g.layers),
                                 format_index_ranges(g.ranks, "rank", "ranks"), what_it_ran(k.facet, k.value),
                                 facet_text(k.facet, k.majority), k.majority_ranks, k.known);
  return k.cause.empty() ? line : line + ": " + k.cause;
}

}  // namespace

std::string ranks_line(const RanksSection& r) {
  std::string out = fmt::format("{} rank{} analysed", r.ranks.size(), r.ranks.size() == 1 ? "" : "s");
  if (!r.failed.empty()) out += fmt::format(", {} failed", r.failed.size());
  out += "; median attention device time " + (r.median_attention_us > 0 ? time_text(r.median_attention_us) : "unknown");
  return out + "; " + slowest_text(r) + "; " + threshold_text(r);
}

std::vector<std::string> straggler_columns() { return {"rank", "where", "time", "median", "x median", "worst layer"}; }

std::vector<std::vector<std::string>> straggler_rows(const RanksSection& r, size_t max_rows) {
  std::vector<std::vector<std::string>> rows;
  for (const Straggler& s : r.stragglers) {
    if (rows.size() == max_rows) break;
    rows.push_back({std::to_string(s.rank), s.layer < 0 ? "all layers" : fmt::format("layer {}", s.layer),
                    time_text(s.time_us), time_text(s.median_us), ratio_text(s.over_median),
                    s.worst_layer >= 0 ? std::to_string(s.worst_layer) : "-"});
  }
  return rows;
}

std::vector<std::string> disagreement_lines(const RanksSection& r) {
  std::vector<std::string> lines;
  for (const DisagreementGroup& g : group_by_layers(group_by_rank(r))) lines.push_back(disagreement_line(g));
  return lines;
}

std::vector<std::string> group_columns() { return {"group", "members", "slowest rank", "x group median"}; }

std::vector<std::vector<std::string>> group_rows(const RanksSection& r) {
  std::vector<std::vector<std::string>> rows;
  for (const RankGroup& g : r.groups) {
    const bool timed = g.slowest_rank >= 0;
    rows.push_back({g.desc.empty() ? g.name : fmt::format("{} ({})", g.desc, g.name),
                    format_index_ranges(g.ranks, "rank", "ranks"), timed ? std::to_string(g.slowest_rank) : "-",
                    timed ? ratio_text(g.slowest_over_median) : "-"});
  }
  return rows;
}

std::vector<std::vector<std::string>> failed_rank_rows(const RanksSection& r) {
  std::vector<std::vector<std::string>> rows;
  for (const RankSummary& f : r.failed) rows.push_back({f.file, f.error});
  return rows;
}

}  // namespace attnprof
