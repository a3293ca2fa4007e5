// Multi-rank analysis. Each worker loads and analyses one trace at a time, keeps only the
// Report (small) and drops the Trace (large), so memory is bounded by the worker count.
#include "attnprof/ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <optional>
#include <thread>

#include "attnprof/attention.h"
#include "attnprof/ingest.h"
#include "pipeline/rank_progress.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

struct RankResult {
  int64_t rank = -1;
  int64_t trace_rank = -1;  // distributedInfo.rank, -1 when the trace has none
  int64_t name_rank = -1;   // the rank its file name spells (rank_of_file_name), -1 when none
  std::string file;
  std::optional<Report> report;
  std::optional<Error> error;
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower_case(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The number right after `key` (lower case) in `lower`, skipping '_' / '-' between them; -1 if
// none. With `whole_word`, key must start the name or follow a separator ("-tp-3", not "stp-3").
int64_t number_after(std::string_view lower, std::string_view key, bool whole_word) {
  for (size_t at = lower.find(key); at != std::string::npos; at = lower.find(key, at + 1)) {
    if (whole_word && at > 0 && std::isalnum(static_cast<unsigned char>(lower[at - 1]))) continue;
    size_t i = at + key.size();
    while (i < lower.size() && (lower[i] == '_' || lower[i] == '-')) ++i;
    if (i >= lower.size() || !is_digit(lower[i])) continue;
    int64_t n = 0;
    for (; i < lower.size() && is_digit(lower[i]); ++i) n = n * 10 + (lower[i] - '0');
    return n;
  }
  return -1;
}

// accelerate's Accelerator.profile() exports "profile_<process index>.json" (PROFILE_PATTERN_NAME).
bool is_accelerate_trace_name(std::string_view stem) {
  constexpr std::string_view kPrefix = "profile_";
  if (!stem.starts_with(kPrefix) || stem.size() == kPrefix.size()) return false;
  return std::all_of(stem.begin() + kPrefix.size(), stem.end(), is_digit);
}

}  // namespace

NameRank rank_of_file_name(std::string_view file_name) {
  const std::string lower = lower_case(file_name);
  NameRank r;
  r.rank = number_after(lower, "rank", false);
  r.tp = number_after(lower, "tp", true);
  r.pp = std::max<int64_t>(0, number_after(lower, "pp", true));
  return r;
}

namespace {

RankResult analyze_rank_file(const std::string& path, const AnalyzeOptions& options, IngestOptions ingest) {
  RankResult result;
  result.file = path;
  Result<Trace> trace = load_trace(path, ingest);
  if (!trace) {
    result.error = trace.error();
    return result;
  }
  if (trace->meta.distributed && trace->meta.distributed->rank >= 0) result.trace_rank = trace->meta.distributed->rank;
  result.report = analyze_loaded_trace(*trace, options);
  return result;
}

// Size of each file, for the progress total; 0 when it cannot be read (load_trace reports why).
std::vector<size_t> file_sizes(const std::vector<std::string>& files) {
  std::vector<size_t> sizes;
  for (const std::string& f : files) {
    std::error_code ec;
    const uintmax_t n = fs::file_size(f, ec);
    sizes.push_back(ec ? 0 : static_cast<size_t>(n));
  }
  return sizes;
}

std::vector<RankResult> analyze_in_parallel(const std::vector<std::string>& files, AnalyzeOptions options,
                                            const DirectoryProgressFn& on_progress) {
  options.progress = nullptr;  // per-file progress would interleave; workers report to one aggregate
  ranks::RankProgress progress(file_sizes(files), on_progress);
  std::vector<RankResult> results(files.size());
  std::atomic<size_t> next{0};
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, files.size());
  // The cores left over when there are fewer files than cores parse chunks of each file.
  const size_t threads_per_file = options.ingest_threads > 0 ? options.ingest_threads
                                                             : std::max<size_t>(1, std::thread::hardware_concurrency() / workers);
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      IngestOptions ingest;
      ingest.threads = threads_per_file;
      ingest.reads = analysis_reads();
      if (on_progress) ingest.progress = [&progress, i](size_t consumed, size_t) { progress.bytes_read(i, consumed); };
      results[i] = analyze_rank_file(files[i], options, std::move(ingest));
      progress.file_done(i);
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return results;
}

// The rank each file's name spells: "rank N" as written, else SGLang's TP-N offset by PP-M
// times the TP ranks seen (a pipeline stage holds tp_size ranks).
void fill_name_ranks(std::vector<RankResult>& results) {
  std::vector<NameRank> names;
  int64_t tp_size = 0;
  for (const RankResult& r : results) {
    names.push_back(rank_of_file_name(fs::path(r.file).filename().string()));
    tp_size = std::max(tp_size, names.back().tp + 1);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const NameRank& n = names[i];
    results[i].name_rank = n.rank >= 0 ? n.rank : n.tp >= 0 ? n.pp * tp_size + n.tp : -1;
  }
}

// Two files that claim the same rank (>= 0), or nullopt when every claimed rank is unique.
std::optional<std::pair<size_t, size_t>> shared_rank(const std::vector<RankResult>& results) {
  for (size_t i = 0; i < results.size(); ++i)
    for (size_t j = i + 1; j < results.size(); ++j)
      if (results[i].rank >= 0 && results[i].rank == results[j].rank) return std::pair{i, j};
  return std::nullopt;
}

// Each file's rank: distributedInfo.rank (the name's rank where a trace has none), unless two
// traces claim the same one (single-process runs all say rank 0) -- then the file names' ranks.
// Files with neither get the next free numbers. Two files with the same rank by name too are
// two runs of one rank, which one ranks section cannot hold: an error that names both.
Status assign_ranks(std::vector<RankResult>& results, const std::string& dir) {
  fill_name_ranks(results);
  for (RankResult& r : results) r.rank = r.trace_rank >= 0 ? r.trace_rank : r.name_rank;
  if (shared_rank(results)) {
    for (RankResult& r : results) r.rank = r.name_rank;
    if (const auto same = shared_rank(results))
      return make_error(ErrorCode::kUnsupported,
                        fmt::format("{}: {} and {} are both rank {}: a directory holds one profiling run per rank "
                                    "and stage (vLLM writes a file per start/stop); move each run into its own "
                                    "directory or analyze the files one by one",
                                    dir, fs::path(results[same->first].file).filename().string(),
                                    fs::path(results[same->second].file).filename().string(), results[same->first].rank));
  }
  int64_t next_rank = 0;
  for (const RankResult& r : results) next_rank = std::max(next_rank, r.rank + 1);
  for (RankResult& r : results)
    if (r.rank < 0) r.rank = next_rank++;
  return Ok{};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

RankSummary summarize_rank(const RankResult& r) {
  RankSummary s;
  s.rank = r.rank;
  s.file = r.file;
  s.attention_device_time_us = r.report->summary.attention_device_time_us;
  s.fused_time_fraction = r.report->summary.fused_time_fraction;
  for (const Layer& layer : r.report->layers) {
    if (layer.index < 0) continue;
    if (s.layer_time_us.size() <= static_cast<size_t>(layer.index)) s.layer_time_us.resize(layer.index + 1, 0.0);
    s.layer_time_us[layer.index] += layer.device_time_us;
  }
  return s;
}

// Layer index where the slowest rank's time is furthest above the median of all ranks; -1 if none.
int64_t most_different_layer(const RanksSection& section, const RankSummary& slowest) {
  int64_t best = -1;
  double best_gap = 0;
  for (size_t layer = 0; layer < slowest.layer_time_us.size(); ++layer) {
    std::vector<double> times;
    for (const RankSummary& r : section.ranks) times.push_back(layer < r.layer_time_us.size() ? r.layer_time_us[layer] : 0.0);
    const double gap = slowest.layer_time_us[layer] - median(times);
    if (gap > best_gap) best_gap = gap, best = static_cast<int64_t>(layer);
  }
  return best;
}

Finding slowest_rank_finding(const RanksSection& section, const RankSummary& slowest) {
  Finding f;
  f.rule = finding::kRanksSlowest;
  // A rank 10% slower than the median holds every collective back by that much.
  f.severity = section.slowest_over_median >= 1.10 ? "medium" : "info";
  const int64_t layer = most_different_layer(section, slowest);
  f.title = fmt::format("rank {} spends {:.2f}x the median attention time", slowest.rank, section.slowest_over_median);
  if (layer >= 0) {
    f.title += fmt::format("; layer {} is where it differs most", layer);
    f.layers.push_back(layer);
  }
  f.detail = fmt::format(
      "Across {} ranks, rank {} ({}) spends {:.1f} us in attention on the device; the median rank spends {:.1f} us. "
      "In data/tensor parallel training every rank waits for the slowest at the next collective: compare its shapes "
      "(sequence length, batch) and backend with the other ranks.",
      section.ranks.size(), slowest.rank, slowest.file, slowest.attention_device_time_us,
      slowest.attention_device_time_us / (section.slowest_over_median > 0 ? section.slowest_over_median : 1.0));
  return f;
}

}  // namespace

bool is_trace_file_name(std::string_view name) {
  if (!ends_with(name, ".json") && !ends_with(name, ".json.gz")) return false;
  const size_t json = name.find(".json");
  if (name.find(".json", json + 1) != std::string_view::npos) return false;
  return name.find("trace") != std::string_view::npos || is_accelerate_trace_name(name.substr(0, json));
}

std::vector<std::string> find_trace_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && is_trace_file_name(entry.path().filename().string()))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// The stages of a directory in the order a request runs them; files without a stage first.
int stage_order(const std::string& stage) { return stage.empty() ? 0 : stage == "prefill" ? 1 : 2; }

// One stage's files (every rank of it) -> one Report: the slowest rank's, with a ranks section.
Result<Report> stage_report(std::vector<RankResult> results, const std::string& dir, const std::string& stage) {
  if (Status ranked = assign_ranks(results, dir); !ranked) return ranked.error();
  std::stable_sort(results.begin(), results.end(), [](const RankResult& a, const RankResult& b) { return a.rank < b.rank; });

  // Ranks with calls of unknown device time (graph captures) have no attention time to
  // compare: they are listed but never named the slowest, and with fewer than two measured
  // ranks there is no slowest rank (-1).
  RanksSection section;
  std::vector<double> times;
  std::optional<size_t> slowest;
  for (size_t i = 0; i < results.size(); ++i) {
    section.ranks.push_back(summarize_rank(results[i]));
    if (results[i].report->summary.unknown_time_call_count > 0) continue;
    times.push_back(section.ranks.back().attention_device_time_us);
    if (!slowest || times.back() > section.ranks[*slowest].attention_device_time_us) slowest = i;
  }
  const bool comparable = slowest && times.size() > 1;
  if (comparable) {
    section.slowest_rank = section.ranks[*slowest].rank;
    const double mid = median(times);
    section.slowest_over_median = mid > 0 ? section.ranks[*slowest].attention_device_time_us / mid : 0;
  }

  // Main body: the slowest rank's Report, the one worth reading (the first rank's when none is
  // measured); every rank's file is listed.
  Report report = std::move(*results[comparable ? *slowest : 0].report);
  report.source.files.clear();
  for (const RankSummary& r : section.ranks) report.source.files.push_back(r.file);
  if (comparable) report.findings.insert(report.findings.begin(), slowest_rank_finding(section, section.ranks[*slowest]));
  report.ranks = std::move(section);
  if (!stage.empty()) {
    // The profiler recorded this stage alone: every call of the file is of that phase.
    for (Call& c : report.calls)
      if (c.phase.empty() || c.phase_inferred) c.phase = stage, c.phase_inferred = false;
    for (Step& s : report.steps)
      if (s.phase.empty() || s.phase_inferred) s.phase = stage, s.phase_inferred = false;
    report.summary.phases = summarize_phases(report.calls, report.steps);
    report.source.assumptions.push_back(
        fmt::format("stage {}: from the file names (SGLang profile_by_stage writes one trace per stage and rank)", stage));
  }
  return report;
}

}  // namespace

std::string stage_of_file_name(std::string_view file_name) {
  std::string stem = lower_case(file_name.substr(0, file_name.find(".json")));
  if (ends_with(stem, ".trace")) stem.resize(stem.size() - std::string_view(".trace").size());
  const size_t dash = stem.rfind('-');
  if (dash == std::string::npos) return "";
  std::string_view last = std::string_view(stem).substr(dash + 1);
  // ForwardMode.EXTEND is str() of the enum in older releases, EXTEND its .name in newer ones.
  constexpr std::string_view kEnum = "forwardmode.";
  if (last.starts_with(kEnum)) last.remove_prefix(kEnum.size());
  if (last == "prefill" || last == "extend") return "prefill";
  if (last == "decode") return "decode";
  return "";
}

Result<std::vector<Report>> analyze_directory_stages(const std::string& dir, const AnalyzeOptions& options,
                                                     const DirectoryProgressFn& progress) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(ErrorCode::kFileNotFound, fmt::format("{}: no such directory", dir));
  const std::vector<std::string> files = find_trace_files(dir);
  if (files.empty())
    return make_error(ErrorCode::kEmptyInput,
                      fmt::format("{}: no trace files (*.pt.trace.json[.gz], *trace*.json[.gz]) in this directory", dir));

  std::vector<RankResult> results = analyze_in_parallel(files, options, progress);
  for (const RankResult& r : results)
    if (r.error) return *r.error;

  std::vector<std::pair<std::string, std::vector<RankResult>>> stages;
  for (RankResult& r : results) {
    const std::string stage = stage_of_file_name(fs::path(r.file).filename().string());
    auto it = std::find_if(stages.begin(), stages.end(), [&](const auto& s) { return s.first == stage; });
    if (it == stages.end()) {
      stages.emplace_back(stage, std::vector<RankResult>{});
      it = std::prev(stages.end());
    }
    it->second.push_back(std::move(r));
  }
  std::stable_sort(stages.begin(), stages.end(),
                   [](const auto& a, const auto& b) { return stage_order(a.first) < stage_order(b.first); });
  std::vector<Report> reports;
  for (auto& [stage, stage_results] : stages) {
    Result<Report> report = stage_report(std::move(stage_results), dir, stage);
    if (!report) return report.error();
    reports.push_back(std::move(*report));
  }
  return reports;
}

Result<Report> analyze_directory(const std::string& dir, const AnalyzeOptions& options,
                                 const DirectoryProgressFn& progress) {
  Result<std::vector<Report>> stages = analyze_directory_stages(dir, options, progress);
  if (!stages) return stages.error();
  if (stages->size() > 1)
    return make_error(ErrorCode::kUnsupported,
                      fmt::format("{}: holds {} profiling stages (one Report each): use analyze_directory_stages",
                                  dir, stages->size()));
  return std::move(stages->front());
}

}  // namespace attnprof
