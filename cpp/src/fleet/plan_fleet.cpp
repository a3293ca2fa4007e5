// Which rank each summary is, which stage it belongs to, and whose Report is each stage's body.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "attnprof/fleet.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

std::string file_name(const std::string& path) { return fs::path(path).filename().string(); }

// The rank each file's name spells: "rank N" as written, else SGLang's TP-N offset by PP-M
// times the TP ranks seen (a pipeline stage holds tp_size ranks).
std::vector<int64_t> name_ranks(const std::vector<RankSummary>& ranks) {
  std::vector<NameRank> names;
  int64_t tp_size = 0;
  for (const RankSummary& r : ranks) {
    names.push_back(rank_of_file_name(file_name(r.file)));
    tp_size = std::max(tp_size, names.back().tp + 1);
  }
  std::vector<int64_t> out;
  for (const NameRank& n : names) out.push_back(n.rank >= 0 ? n.rank : n.tp >= 0 ? n.pp * tp_size + n.tp : -1);
  return out;
}

// Two summaries that claim the same rank (>= 0), or nullopt when every claimed rank is unique.
std::optional<std::pair<size_t, size_t>> shared_rank(const std::vector<RankSummary>& ranks) {
  std::vector<std::pair<int64_t, size_t>> claimed;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].rank >= 0) claimed.emplace_back(ranks[i].rank, i);
  std::sort(claimed.begin(), claimed.end());
  for (size_t i = 1; i < claimed.size(); ++i)
    if (claimed[i].first == claimed[i - 1].first) return std::pair{claimed[i - 1].second, claimed[i].second};
  return std::nullopt;
}

// Each file's rank: distributedInfo.rank (the name's rank where a trace has none), unless two
// traces claim the same one (single-process runs all say rank 0) -- then the file names' ranks.
// Files with neither get the next free numbers, in file-name order. Two files with the same
// rank by name too are two runs of one rank, which one ranks section cannot hold.
Status assign_ranks(std::vector<RankSummary>& ranks, const std::string& label) {
  const std::vector<int64_t> by_name = name_ranks(ranks);
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].rank = ranks[i].trace_rank >= 0 ? ranks[i].trace_rank : by_name[i];
  if (shared_rank(ranks)) {
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i].rank = by_name[i];
    if (const auto same = shared_rank(ranks))
      return make_error(ErrorCode::kUnsupported,
                        fmt::format("{}: {} and {} are both rank {}: a directory holds one profiling run per rank "
                                    "and stage (vLLM writes a file per start/stop); move each run into its own "
                                    "directory or analyze the files one by one",
                                    label, file_name(ranks[same->first].file), file_name(ranks[same->second].file),
                                    ranks[same->first].rank));
  }
  int64_t next_rank = 0;
  for (const RankSummary& r : ranks) next_rank = std::max(next_rank, r.rank + 1);
  for (RankSummary& r : ranks)
    if (r.rank < 0) r.rank = next_rank++;
  return Ok{};
}

// The stages in the order a request runs them; files without a stage first.
int stage_order(const std::string& stage) { return stage.empty() ? 0 : stage == "prefill" ? 1 : 2; }

// The slowest rank with a measured attention time when at least two are measured (ties: the
// lowest rank), else the first rank.
const RankSummary& body_rank(const std::vector<RankSummary>& ranks) {
  const RankSummary* slowest = nullptr;
  size_t measured = 0;
  for (const RankSummary& r : ranks) {
    if (r.attention_time_unknown) continue;
    ++measured;
    if (!slowest || r.attention_device_time_us > slowest->attention_device_time_us) slowest = &r;
  }
  return measured > 1 ? *slowest : ranks.front();
}

Result<FleetStage> plan_stage(std::string stage, std::vector<RankSummary> members, const std::string& label) {
  FleetStage out;
  out.stage = std::move(stage);
  for (RankSummary& r : members) (r.error.empty() ? out.ranks : out.failed).push_back(std::move(r));
  auto by_file = [](const RankSummary& a, const RankSummary& b) { return a.file < b.file; };
  std::sort(out.failed.begin(), out.failed.end(), by_file);
  if (out.ranks.empty())
    return make_error(ErrorCode::kEmptyInput,
                      fmt::format("{}: every rank failed; first: {}", label, out.failed.front().error));
  // Numbering is by file name, so that it is the same for any completion order.
  std::sort(out.ranks.begin(), out.ranks.end(), by_file);
  if (Status ranked = assign_ranks(out.ranks, label); !ranked) return ranked.error();
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  out.body_file = body_rank(out.ranks).file;
  return out;
}

}  // namespace

Result<std::vector<FleetStage>> plan_fleet(std::vector<RankSummary> summaries, const std::string& label) {
  if (summaries.empty()) return make_error(ErrorCode::kEmptyInput, fmt::format("{}: no rank traces", label));
  std::vector<std::pair<std::string, std::vector<RankSummary>>> stages;
  for (RankSummary& r : summaries) {
    auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& s) { return s.first == r.stage; });
    if (it == stages.end()) it = stages.insert(stages.end(), {r.stage, {}});
    it->second.push_back(std::move(r));
  }
  std::sort(stages.begin(), stages.end(),
            [](const auto& a, const auto& b) { return stage_order(a.first) < stage_order(b.first); });
  std::vector<FleetStage> out;
  for (auto& [stage, members] : stages) {
    Result<FleetStage> planned = plan_stage(stage, std::move(members), label);
    if (!planned) return planned.error();
    out.push_back(std::move(*planned));
  }
  return out;
}

}  // namespace attnprof
