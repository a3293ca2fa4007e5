// The merge: stragglers, disagreements and groups from rank summaries, and the stage's Report.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>

#include "attnprof/fleet.h"
#include "fleet/median.h"
#include "attnprof/vocabulary.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

using fleet::median;

// A rank straggles when its time is beyond median x (1 + max(3 robust sigmas, 5%)): three
// sigmas (sigma = 1.4826 MAD, the normal-consistent scale) keep noise out on large fleets, the
// 5% floor keeps identical ranks from naming each other over microseconds (docs/fleet.md).
constexpr double kSigmas = 3.0;
constexpr double kMadToSigma = 1.4826;
constexpr double kMinExcess = 0.05;
// A report lists at most this many per-layer stragglers and disagreements (the worst / first):
// one rank that differs in every layer must not make the Report O(ranks x layers x facets).
constexpr size_t kMaxLayerStragglers = 100;
constexpr size_t kMaxDisagreements = 200;

// The over-median ratio beyond which a time straggles among `times`; 0 with fewer than 3
// times (no robust spread) or a zero median.
double straggler_threshold(const std::vector<double>& times) {
  if (times.size() < 3) return 0;
  const double mid = median(times);
  if (mid <= 0) return 0;
  std::vector<double> deviations;
  for (double t : times) deviations.push_back(std::abs(t - mid));
  const double sigma = kMadToSigma * median(std::move(deviations));
  return 1.0 + std::max(kSigmas * sigma / mid, kMinExcess);
}

double layer_time(const RankSummary& r, size_t layer) {
  return layer < r.layer_time_us.size() ? r.layer_time_us[layer] : 0.0;
}

size_t layer_count(const std::vector<RankSummary>& ranks) {
  size_t n = 0;
  for (const RankSummary& r : ranks) n = std::max(n, r.layer_time_us.size());
  return n;
}

std::vector<const RankSummary*> measured(const std::vector<RankSummary>& ranks) {
  std::vector<const RankSummary*> out;
  for (const RankSummary& r : ranks)
    if (!r.attention_time_unknown) out.push_back(&r);
  return out;
}

std::vector<double> layer_medians(const std::vector<const RankSummary*>& ranks, size_t layers) {
  std::vector<double> out;
  for (size_t layer = 0; layer < layers; ++layer) {
    std::vector<double> times;
    for (const RankSummary* r : ranks) times.push_back(layer_time(*r, layer));
    out.push_back(median(std::move(times)));
  }
  return out;
}

// The layer where the rank's time is furthest above that layer's median; -1 if none is above.
int64_t worst_layer(const RankSummary& r, const std::vector<double>& medians) {
  int64_t best = -1;
  double best_gap = 0;
  for (size_t layer = 0; layer < medians.size(); ++layer) {
    const double gap = layer_time(r, layer) - medians[layer];
    if (gap > best_gap) best_gap = gap, best = static_cast<int64_t>(layer);
  }
  return best;
}

void add_overall_stragglers(RanksSection& section, const std::vector<const RankSummary*>& ranks,
                            const std::vector<double>& medians) {
  std::vector<double> times;
  for (const RankSummary* r : ranks) times.push_back(r->attention_device_time_us);
  section.median_attention_us = median(times);
  section.straggler_threshold = straggler_threshold(times);
  if (section.straggler_threshold <= 0) return;
  for (const RankSummary* r : ranks) {
    const double over = r->attention_device_time_us / section.median_attention_us;
    if (over > section.straggler_threshold)
      section.stragglers.push_back({r->rank, -1, r->attention_device_time_us, section.median_attention_us, over,
                                    worst_layer(*r, medians)});
  }
}

void add_layer_stragglers(RanksSection& section, const std::vector<const RankSummary*>& ranks,
                          const std::vector<double>& medians) {
  std::vector<Straggler> found;
  for (size_t layer = 0; layer < medians.size(); ++layer) {
    std::vector<double> times;
    for (const RankSummary* r : ranks) times.push_back(layer_time(*r, layer));
    const double threshold = straggler_threshold(times);
    if (threshold <= 0) continue;
    for (const RankSummary* r : ranks) {
      const double over = layer_time(*r, layer) / medians[layer];
      if (over > threshold)
        found.push_back({r->rank, static_cast<int64_t>(layer), layer_time(*r, layer), medians[layer], over, -1});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Straggler& a, const Straggler& b) { return a.over_median > b.over_median; });
  if (found.size() > kMaxLayerStragglers) found.resize(kMaxLayerStragglers);
  section.stragglers.insert(section.stragglers.end(), found.begin(), found.end());
}

void sort_overall_stragglers(RanksSection& section) {
  const auto overall_end = std::stable_partition(section.stragglers.begin(), section.stragglers.end(),
                                                 [](const Straggler& s) { return s.layer < 0; });
  std::stable_sort(section.stragglers.begin(), overall_end,
                   [](const Straggler& a, const Straggler& b) { return a.over_median > b.over_median; });
}

// --- disagreements ---------------------------------------------------------------------------

using Facet = std::string RankLayer::*;
struct FacetField {
  const char* name;
  Facet field;
};
constexpr FacetField kFacets[] = {{"backend", &RankLayer::backend},
                                  {"kernel", &RankLayer::kernel},
                                  {"shape", &RankLayer::shape},
                                  {"mask", &RankLayer::mask},
                                  {"dtype", &RankLayer::dtype}};

const RankLayer* layer_of(const RankSummary& r, int64_t index) {
  auto it = std::lower_bound(r.layers.begin(), r.layers.end(), index,
                             [](const RankLayer& l, int64_t i) { return l.index < i; });
  return it != r.layers.end() && it->index == index ? &*it : nullptr;
}

// The value most ranks have (ties: the smallest), when it is a strict majority of the ranks
// that know the facet; nullopt when none is.
std::optional<std::pair<std::string, int64_t>> majority_value(const std::vector<const RankLayer*>& rows, Facet facet) {
  std::map<std::string, int64_t> counts;
  int64_t known = 0;
  for (const RankLayer* row : rows)
    if (!(row->*facet).empty()) ++counts[row->*facet], ++known;
  std::optional<std::pair<std::string, int64_t>> best;
  for (const auto& [value, n] : counts)
    if (!best || n > best->second) best = {value, n};
  if (!best || best->second * 2 <= known) return std::nullopt;
  return best;
}

// Why `row` differs: the rule that rejected the majority's backend on this rank, then every
// other facet in which this rank's layer differs from the majority's.
std::string disagreement_cause(const RankLayer& row, const std::vector<const RankLayer*>& rows,
                               const std::string& majority_backend, const char* facet) {
  std::vector<std::string> parts;
  if (row.backend != majority_backend)
    for (const RankRejection& r : row.rejections)
      if (r.backend == majority_backend) parts.push_back(fmt::format("{} rejected: {} [{}]", r.backend, r.message, r.rule));
  for (const FacetField& other : kFacets) {
    if (std::string_view(other.name) == facet || std::string_view(other.name) == "backend") continue;
    // Another backend runs another kernel: saying so adds nothing.
    if (std::string_view(other.name) == "kernel" && row.backend != majority_backend) continue;
    const auto majority = majority_value(rows, other.field);
    if (majority && !(row.*other.field).empty() && row.*other.field != majority->first)
      parts.push_back(fmt::format("its {} is {} where most ranks have {}", other.name, row.*other.field, majority->first));
  }
  std::string cause;
  for (const std::string& p : parts) cause += (cause.empty() ? "" : "; ") + p;
  return cause;
}

void add_layer_disagreements(RanksSection& section, int64_t index) {
  std::vector<const RankLayer*> rows;
  std::vector<int64_t> rank_of_row;
  for (const RankSummary& r : section.ranks)
    if (const RankLayer* row = layer_of(r, index)) rows.push_back(row), rank_of_row.push_back(r.rank);
  if (rows.size() < 3) return;  // two ranks that differ have no majority to differ from
  const auto backend = majority_value(rows, &RankLayer::backend);
  for (const FacetField& facet : kFacets) {
    const auto majority = majority_value(rows, facet.field);
    if (!majority) continue;
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string& value = rows[i]->*facet.field;
      if (value.empty() || value == majority->first) continue;
      if (facet.field == &RankLayer::kernel && backend && rows[i]->backend != backend->first) continue;
      section.disagreements.push_back({index, facet.name, majority->first, majority->second, rank_of_row[i], value,
                                       disagreement_cause(*rows[i], rows, backend ? backend->first : "", facet.name)});
    }
  }
}

void add_disagreements(RanksSection& section) {
  std::vector<int64_t> indices;
  for (const RankSummary& r : section.ranks)
    for (const RankLayer& l : r.layers) indices.push_back(l.index);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  for (int64_t index : indices) {
    add_layer_disagreements(section, index);
    if (section.disagreements.size() >= kMaxDisagreements) break;
  }
  if (section.disagreements.size() > kMaxDisagreements) section.disagreements.resize(kMaxDisagreements);
}

// --- groups ----------------------------------------------------------------------------------

void add_groups(RanksSection& section) {
  std::map<std::pair<std::string, std::string>, RankGroup> groups;
  for (const RankSummary& r : section.ranks)
    for (const RankGroupRef& g : r.groups) {
      if (g.size < 2) continue;  // a group of one rank has no slowest member
      RankGroup& group = groups[{g.name, g.desc}];
      group.name = g.name, group.desc = g.desc;
      group.ranks.push_back(r.rank);
    }
  for (auto& [key, group] : groups) {
    std::sort(group.ranks.begin(), group.ranks.end());
    std::vector<double> times;
    const RankSummary* slowest = nullptr;
    for (int64_t rank : group.ranks) {
      auto it = std::find_if(section.ranks.begin(), section.ranks.end(), [&](const RankSummary& r) { return r.rank == rank; });
      if (it == section.ranks.end() || it->attention_time_unknown) continue;
      times.push_back(it->attention_device_time_us);
      if (!slowest || it->attention_device_time_us > slowest->attention_device_time_us) slowest = &*it;
    }
    if (times.size() > 1 && median(times) > 0) {
      group.slowest_rank = slowest->rank;
      group.slowest_over_median = slowest->attention_device_time_us / median(times);
    }
    section.groups.push_back(std::move(group));
  }
}

// --- findings --------------------------------------------------------------------------------

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::optional<Finding> slowest_rank_finding(const RanksSection& section, const std::vector<double>& medians) {
  if (section.slowest_rank < 0) return std::nullopt;
  const auto& slowest = *std::find_if(section.ranks.begin(), section.ranks.end(),
                                      [&](const RankSummary& r) { return r.rank == section.slowest_rank; });
  Finding f;
  f.rule = finding::kRanksSlowest;
  // A rank 10% slower than the median holds every collective back by that much.
  f.severity = section.slowest_over_median >= 1.10 ? "medium" : "info";
  f.title = fmt::format("rank {} spends {} the median attention time", slowest.rank, ratio_text(section.slowest_over_median));
  if (const int64_t layer = worst_layer(slowest, medians); layer >= 0) {
    f.title += fmt::format("; layer {} is where it differs most", layer);
    f.layers.push_back(layer);
  }
  f.detail = fmt::format(
      "Across {} ranks, rank {} ({}) spends {} in attention on the device; the median rank spends {}. "
      "In data/tensor parallel training every rank waits for the slowest at the next collective: compare its shapes "
      "(sequence length, batch) and backend with the other ranks.",
      section.ranks.size(), slowest.rank, slowest.file, time_text(slowest.attention_device_time_us),
      time_text(section.median_attention_us));
  return f;
}

std::optional<Finding> stragglers_finding(const RanksSection& section) {
  std::vector<const Straggler*> overall;
  for (const Straggler& s : section.stragglers)
    if (s.layer < 0) overall.push_back(&s);
  if (overall.empty()) return std::nullopt;
  Finding f;
  f.rule = finding::kRanksStragglers;
  f.severity = "medium";
  f.title = fmt::format("{} of {} ranks straggle (beyond {} the median attention time)", overall.size(),
                        section.ranks.size(), ratio_text(section.straggler_threshold));
  std::string list;
  for (size_t i = 0; i < overall.size() && i < 5; ++i) {
    const Straggler& s = *overall[i];
    list += fmt::format("{}rank {} {}", list.empty() ? "" : ", ", s.rank, ratio_text(s.over_median));
    if (s.worst_layer >= 0) list += fmt::format(" (most in layer {})", s.worst_layer);
    if (s.worst_layer >= 0 && std::find(f.layers.begin(), f.layers.end(), s.worst_layer) == f.layers.end())
      f.layers.push_back(s.worst_layer);
  }
  f.detail = fmt::format("Threshold: median x (1 + max(3 robust sigmas, 5%)) over {} measured ranks. {}. The ranks "
                         "section lists per-layer stragglers too; compare the named layer's shapes and kernels "
                         "with the median rank's.",
                         section.ranks.size(), list);
  return f;
}

std::optional<Finding> disagreements_finding(const RanksSection& section) {
  if (section.disagreements.empty()) return std::nullopt;
  std::vector<int64_t> ranks;
  bool backend = false;
  for (const Disagreement& d : section.disagreements) {
    ranks.push_back(d.rank);
    backend = backend || d.facet == "backend";
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const Disagreement& first = section.disagreements.front();
  Finding f;
  f.rule = finding::kRanksDisagree;
  f.severity = backend ? "high" : "medium";
  f.title = fmt::format("{} rank{} ran something else than most ranks: rank {} layer {} {} {} (most ranks: {})",
                        ranks.size(), ranks.size() == 1 ? "" : "s", first.rank, first.layer, first.facet, first.value,
                        first.majority);
  f.layers.push_back(first.layer);
  f.detail = first.cause.empty() ? "No rule explains it from the trace: compare that rank's inputs with the others'."
                                 : "Why: " + first.cause + ".";
  f.detail += fmt::format(" {} difference{} in all, listed in the ranks section.", section.disagreements.size(),
                          section.disagreements.size() == 1 ? "" : "s");
  return f;
}

std::optional<Finding> failed_finding(const RanksSection& section) {
  if (section.failed.empty()) return std::nullopt;
  Finding f;
  f.rule = finding::kRanksFailed;
  f.severity = "medium";
  f.title = fmt::format("{} of {} rank traces could not be analysed", section.failed.size(),
                        section.failed.size() + section.ranks.size());
  for (size_t i = 0; i < section.failed.size() && i < 5; ++i)
    f.detail += fmt::format("{}{}: {}", i ? "; " : "", file_name(section.failed[i].file), section.failed[i].error);
  f.detail += ". The other ranks are merged without them.";
  return f;
}

void set_slowest(RanksSection& section, const std::vector<const RankSummary*>& ranks) {
  if (ranks.size() < 2 || section.median_attention_us <= 0) return;
  const RankSummary* slowest = ranks.front();
  for (const RankSummary* r : ranks)
    if (r->attention_device_time_us > slowest->attention_device_time_us) slowest = r;
  section.slowest_rank = slowest->rank;
  section.slowest_over_median = slowest->attention_device_time_us / section.median_attention_us;
}

}  // namespace

std::string rank_report_stem(std::string_view file) {
  std::string_view name = file.substr(file.find_last_of('/') == std::string_view::npos ? 0 : file.find_last_of('/') + 1);
  if (const size_t json = name.find(".json"); json != std::string_view::npos && json > 0) name = name.substr(0, json);
  for (std::string_view suffix : {std::string_view(".pt.trace"), std::string_view(".trace")})
    if (name.size() > suffix.size() && name.ends_with(suffix)) return std::string(name.substr(0, name.size() - suffix.size()));
  return std::string(name);
}

Report fleet_report(Report body, FleetStage stage) {
  if (!stage.reports_dir.empty()) {
    std::string dir = stage.reports_dir;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    for (RankSummary& r : stage.ranks) r.report_html = dir + "/" + rank_report_stem(r.file) + ".html";
  }
  RanksSection section;
  section.ranks = std::move(stage.ranks);
  section.failed = std::move(stage.failed);
  const std::vector<const RankSummary*> timed = measured(section.ranks);
  const std::vector<double> medians = layer_medians(timed, layer_count(section.ranks));
  add_overall_stragglers(section, timed, medians);
  add_layer_stragglers(section, timed, medians);
  sort_overall_stragglers(section);
  section.layer_median_us = medians;
  set_slowest(section, timed);
  add_disagreements(section);
  add_groups(section);

  body.source.files.clear();
  for (const RankSummary& r : section.ranks) body.source.files.push_back(r.file);
  for (const RankSummary& r : section.failed) body.source.files.push_back(r.file);
  std::vector<Finding> findings;
  for (auto f : {failed_finding(section), disagreements_finding(section), stragglers_finding(section),
                 slowest_rank_finding(section, medians)})
    if (f) findings.push_back(std::move(*f));
  body.findings.insert(body.findings.begin(), findings.begin(), findings.end());
  body.ranks = std::move(section);
  return body;
}

size_t rank_task_memory_bytes(size_t file_bytes, bool gzip) {
  // Measured (docs/performance.md, "Memory"): peak RSS about 0.24x an uncompressed trace at
  // 1-20 GB; Kineto JSON compresses about 10x. 0.35 leaves headroom; 512 MiB is a worker
  // process with the engine and Python loaded.
  constexpr double kPeakPerInputByte = 0.35;
  constexpr double kGzipRatio = 10.0;
  constexpr size_t kWorkerBytes = size_t{512} << 20;
  const double input = static_cast<double>(file_bytes) * (gzip ? kGzipRatio : 1.0);
  return kWorkerBytes + static_cast<size_t>(input * kPeakPerInputByte);
}

}  // namespace attnprof
