// diff_paths: what `attnprof diff` reads. Each side is a Report JSON or a trace (analysed on
// the fly), or a directory of them matched to the other side's by file stem.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "attnprof/diff.h"
#include "attnprof/io.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

// Reports are small; a larger file is a trace and is never read whole just to sniff it.
constexpr uintmax_t kMaxSniffBytes = uintmax_t{64} << 20;

bool ends_with(const std::string& s, std::string_view suffix) { return s.ends_with(suffix); }

// "llama.pt.trace.json.gz" -> "llama"; "llama.report.json" -> "llama".
std::string stem_of(const fs::path& p) {
  std::string name = p.filename().string();
  for (std::string_view suffix : {".gz", ".json", ".trace", ".pt", ".report"}) {
    if (ends_with(name, suffix)) name.resize(name.size() - suffix.size());
  }
  return name;
}

bool is_input_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

Result<std::map<std::string, std::string>> inputs_by_stem(const std::string& dir) {
  std::error_code ec;
  std::map<std::string, std::string> out;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && is_input_file(entry.path())) files.push_back(entry.path());
  }
  if (ec) return make_error(ErrorCode::kFileNotFound, "cannot list directory " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) out.emplace(stem_of(f), f.string());  // first in name order wins
  if (out.empty()) return make_error(ErrorCode::kEmptyInput, "no traces or Reports (*.json, *.json.gz) in " + dir);
  return out;
}

Result<DiffSide> load_side(const std::string& label, const std::vector<std::string>& paths,
                           const AnalyzeOptions& analyze) {
  DiffSide side;
  side.label = label;
  for (const auto& p : paths) {
    Result<std::vector<Report>> runs = load_runs(p, analyze);
    if (!runs) return runs.error();
    for (Report& r : *runs) side.runs.push_back(std::move(r));
  }
  return side;
}

std::vector<std::string> recorded_source_files(const DiffSide& a, const DiffSide& b) {
  std::vector<std::string> files;
  for (const DiffSide* side : {&a, &b}) {
    for (const Report& r : side->runs) {
      if (!r.source.code) continue;
      for (const auto& f : r.source.code->source_files)
        if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
    }
  }
  return files;
}

Result<DiffVerdict> diff_pair(const std::string& name, const std::vector<std::string>& base_paths,
                              const std::vector<std::string>& cand_paths, const DiffOptions& options) {
  Result<DiffSide> base = load_side(base_paths.front(), base_paths, options.analyze);
  if (!base) return base.error();
  Result<DiffSide> cand = load_side(cand_paths.front(), cand_paths, options.analyze);
  if (!cand) return cand.error();
  DiffVerdict v = compare_reports(*base, *cand, options.thresholds);
  v.name = name;
  if (v.causes.code)
    attach_git_history(*v.causes.code, recorded_source_files(*base, *cand), options.repo_dir);
  return v;
}

}  // namespace

// One Report, or an array of them (several runs).
Result<std::vector<Report>> reports_from_text(const std::string& path, const std::string& text) {
  std::vector<std::string> documents;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    auto array = parse_json_input(text, path, "array of Reports");
    if (!array) return array.error();
    if (!array->is_array() || array->empty())
      return make_error(ErrorCode::kMalformedJson, path + ": not a JSON array of Reports");
    for (const auto& element : *array) documents.push_back(element.dump());
  } else {
    documents.push_back(text);
  }
  std::vector<Report> reports;
  for (size_t i = 0; i < documents.size(); ++i) {
    Result<Report> report = report_from_json(documents[i]);
    const std::string where = documents.size() > 1 ? fmt::format("{}: run {}: ", path, i) : path + ": ";
    if (!report) return make_error(report.error().code, where + report.error().message);
    reports.push_back(std::move(report).value());
  }
  return reports;
}

Result<std::vector<Report>> load_runs(const std::string& path, const AnalyzeOptions& analyze) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return make_error(ErrorCode::kFileNotFound, "no such file: " + path);
  // torch.profiler names its files "*.pt.trace.json[.gz]": those go straight to ingest.
  const bool trace_name = fs::path(path).filename().string().find(".trace.json") != std::string::npos;
  if (!trace_name && fs::file_size(path, ec) <= kMaxSniffBytes) {
    Result<std::string> text = read_text_file(path);
    if (!text) return text.error();
    if (looks_like_report(*text)) return reports_from_text(path, *text);
  }
  Result<Report> report = analyze_file(path, analyze);
  if (!report) return report.error();
  return std::vector<Report>{std::move(report).value()};
}

Report diff_report(DiffSection section) {
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.diff = std::move(section);
  return report;
}

namespace {

// Two files, each with the extra runs of its side.
Status diff_files(const std::string& baseline, const std::string& candidate, const DiffOptions& options,
                  DiffSection& result) {
  std::vector<std::string> base_paths = {baseline}, cand_paths = {candidate};
  base_paths.insert(base_paths.end(), options.extra_baseline.begin(), options.extra_baseline.end());
  cand_paths.insert(cand_paths.end(), options.extra_candidate.begin(), options.extra_candidate.end());
  const std::string b = stem_of(baseline), c = stem_of(candidate);
  Result<DiffVerdict> v = diff_pair(b == c ? c : b + " vs " + c, base_paths, cand_paths, options);
  if (!v) return v.error();
  result.pairs.push_back(std::move(v).value());
  return Ok{};
}

// Two directories: the inputs of the same file name compared, the others listed as unmatched.
Status diff_directories(const std::string& baseline, const std::string& candidate, const DiffOptions& options,
                        DiffSection& result) {
  if (!options.extra_baseline.empty() || !options.extra_candidate.empty())
    return make_error(ErrorCode::kInvalidArgument, "extra runs can only be given when comparing two files");
  auto base_files = inputs_by_stem(baseline);
  if (!base_files) return base_files.error();
  auto cand_files = inputs_by_stem(candidate);
  if (!cand_files) return cand_files.error();
  for (const auto& [stem, path] : *base_files) {
    auto it = cand_files->find(stem);
    if (it == cand_files->end()) {
      result.unmatched.push_back(path);
      continue;
    }
    Result<DiffVerdict> v = diff_pair(stem, {path}, {it->second}, options);
    if (!v) return v.error();
    result.pairs.push_back(std::move(v).value());
  }
  for (const auto& [stem, path] : *cand_files)
    if (!base_files->count(stem)) result.unmatched.push_back(path);
  if (result.pairs.empty())
    return make_error(ErrorCode::kInvalidArgument,
                      "no file names in common between " + baseline + " and " + candidate);
  return Ok{};
}

}  // namespace

Result<DiffSection> diff_paths(const std::string& baseline, const std::string& candidate,
                               const DiffOptions& options) {
  std::error_code ec;
  for (const auto& p : {baseline, candidate}) {
    if (!fs::exists(p, ec)) return make_error(ErrorCode::kFileNotFound, "no such file or directory: " + p);
  }
  DiffSection result;
  result.thresholds = options.thresholds;
  result.noise_rule = kNoiseRule;
  const bool base_dir = fs::is_directory(baseline, ec), cand_dir = fs::is_directory(candidate, ec);
  if (base_dir != cand_dir)
    return make_error(ErrorCode::kInvalidArgument, "compare a file with a file or a directory with a directory (" +
                                                       baseline + ", " + candidate + ")");
  const Status st = base_dir ? diff_directories(baseline, candidate, options, result)
                             : diff_files(baseline, candidate, options, result);
  if (!st) return st.error();
  return result;
}

}  // namespace attnprof
