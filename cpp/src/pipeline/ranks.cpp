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

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// accelerate's Accelerator.profile() exports "profile_<process index>.json" (PROFILE_PATTERN_NAME).
bool is_accelerate_trace_name(std::string_view stem) {
  constexpr std::string_view kPrefix = "profile_";
  if (!stem.starts_with(kPrefix) || stem.size() == kPrefix.size()) return false;
  return std::all_of(stem.begin() + kPrefix.size(), stem.end(), is_digit);
}

}  // namespace

namespace {

// The process groups of distributedInfo.pg_config that hold the trace's rank.
std::vector<RankGroupRef> groups_of_rank(const DistributedInfo& info) {
  std::vector<RankGroupRef> groups;
  for (const ProcessGroupInfo& g : info.groups)
    if (std::find(g.ranks.begin(), g.ranks.end(), info.rank) != g.ranks.end())
      groups.push_back({g.name, g.desc, g.size > 0 ? g.size : static_cast<int64_t>(g.ranks.size())});
  return groups;
}

RankOrigin origin_of(const std::string& path, const Trace& trace) {
  RankOrigin origin;
  origin.file = path;
  if (const auto& d = trace.meta.distributed) {
    if (d->rank >= 0) origin.trace_rank = d->rank;
    origin.world_size = d->world_size;
    origin.groups = groups_of_rank(*d);
  }
  return origin;
}

// A trace the profiler recorded for one stage alone: every call of the file is of that phase.
void apply_file_stage(Report& report, const std::string& stage) {
  if (stage.empty()) return;
  for (Call& c : report.calls)
    if (c.phase.empty() || c.phase_inferred) c.phase = stage, c.phase_inferred = false;
  for (Step& s : report.steps)
    if (s.phase.empty() || s.phase_inferred) s.phase = stage, s.phase_inferred = false;
  report.summary.phases = summarize_phases(report.calls, report.steps);
  report.source.assumptions.push_back(
      fmt::format("stage {}: from the file names (SGLang profile_by_stage writes one trace per stage and rank)", stage));
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

struct RankOutcome {
  RankSummary summary;
  std::optional<Report> report;  // kept for the body of the fleet Report
};

// Every file analysed, one worker per core, one trace in memory per worker.
std::vector<RankOutcome> analyze_in_parallel(const std::vector<std::string>& files, AnalyzeOptions options,
                                             const DirectoryProgressFn& on_progress) {
  options.progress = nullptr;  // per-file progress would interleave; workers report to one aggregate
  ranks::RankProgress progress(file_sizes(files), on_progress);
  std::vector<RankOutcome> results(files.size());
  std::atomic<size_t> next{0};
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, files.size());
  // The cores left over when there are fewer files than cores parse chunks of each file.
  const size_t threads_per_file = options.ingest_threads > 0 ? options.ingest_threads
                                                             : std::max<size_t>(1, std::thread::hardware_concurrency() / workers);
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      IngestOptions ingest;
      ingest.threads = threads_per_file;
      if (on_progress) ingest.progress = [&progress, i](size_t consumed, size_t) { progress.bytes_read(i, consumed); };
      Result<RankAnalysis> analysed = analyze_rank_trace(files[i], options, std::move(ingest));
      if (analysed) {
        results[i].summary = summarize_rank(analysed->report, analysed->origin);
        results[i].report = std::move(analysed->report);
      } else {
        results[i].summary = failed_rank(files[i], analysed.error().message);
      }
      progress.file_done(i);
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace

Result<RankAnalysis> analyze_rank_trace(const std::string& path, const AnalyzeOptions& options, IngestOptions ingest) {
  ingest.reads = analysis_reads();
  Result<Trace> trace = load_trace(path, ingest);
  if (!trace) return trace.error();
  RankAnalysis out{analyze_loaded_trace(*trace, options), origin_of(path, *trace)};
  apply_file_stage(out.report, stage_of_file_name(fs::path(path).filename().string()));
  return out;
}

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

Result<std::vector<Report>> analyze_files_stages(const std::vector<std::string>& files, const std::string& label,
                                                 const AnalyzeOptions& options, const DirectoryProgressFn& progress) {
  if (files.empty()) return make_error(ErrorCode::kEmptyInput, fmt::format("{}: no rank traces", label));
  std::vector<RankOutcome> outcomes = analyze_in_parallel(files, options, progress);
  std::vector<RankSummary> summaries;
  for (RankOutcome& o : outcomes) summaries.push_back(o.summary);
  Result<std::vector<FleetStage>> stages = plan_fleet(std::move(summaries), label);
  if (!stages) return stages.error();
  std::vector<Report> reports;
  for (FleetStage& stage : *stages) {
    auto body = std::find_if(outcomes.begin(), outcomes.end(), [&](const RankOutcome& o) { return o.summary.file == stage.body_file; });
    reports.push_back(fleet_report(std::move(*body->report), std::move(stage)));
  }
  return reports;
}

Result<std::vector<Report>> analyze_directory_stages(const std::string& dir, const AnalyzeOptions& options,
                                                     const DirectoryProgressFn& progress) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(ErrorCode::kFileNotFound, fmt::format("{}: no such directory", dir));
  const std::vector<std::string> files = find_trace_files(dir);
  if (files.empty())
    return make_error(ErrorCode::kEmptyInput,
                      fmt::format("{}: no trace files (*.pt.trace.json[.gz], *trace*.json[.gz]) in this directory", dir));
  return analyze_files_stages(files, dir, options, progress);
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
