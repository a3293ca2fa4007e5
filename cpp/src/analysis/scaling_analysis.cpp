// Sweeps over sequence length and backend: fits, OOM thresholds, backend advice
// (issue 5 items 3, 4, 6); docs/cost.md.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "attnprof/analyze.h"
#include "attnprof/hw.h"
#include "attnprof/ingest.h"
#include "attnprof/scaling.h"

namespace attnprof {
namespace {

// Two backends whose times differ by less than this are a tie (run-to-run noise of the H200
// fixtures: the same cuDNN kernel measured 1106 vs 1118 us, 1.1%; docs/cost.md).
constexpr double kMinNoise = 0.05;

std::string shape_key(const Call& call) {
  const Shape& s = call.shape;
  std::string key = fmt::format("B={} Hq={} Hkv={} S={} D={} {}", s.B, s.Hq, s.Hkv, s.Sq, s.D, s.dtype);
  if (call.mask.present) key += " mask=" + call.mask.kind;  // a masked call is another problem
  return key;
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool looks_forced(const std::string& path, const Report& report) {
  if (file_stem(path).find("_force_") != std::string::npos) return true;
  for (const auto& call : report.calls)
    if (call.capture && !call.capture->pytorch_choice.empty() && call.capture->pytorch_choice != call.backend)
      return true;
  return false;
}

double overhead_of(const ScalingRun& run) {
  if (run.memory.peak_reserved_bytes <= 0 || run.memory.peak_allocated_bytes <= 0) return 1.0;
  return static_cast<double>(run.memory.peak_reserved_bytes) / static_cast<double>(run.memory.peak_allocated_bytes);
}

}  // namespace

Result<int64_t> parse_byte_size(std::string_view text) {
  std::string t;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double number = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), number);
  const std::string unit(end, static_cast<const char*>(t.data() + t.size()));
  static const std::map<std::string, double> kUnits = {
      {"", 1},          {"b", 1},         {"kb", 1e3},          {"mb", 1e6},          {"gb", 1e9},
      {"tb", 1e12},     {"kib", 1024.0},  {"mib", 1048576.0},   {"gib", 1073741824.0}, {"tib", 1099511627776.0},
      {"k", 1024.0},    {"m", 1048576.0}, {"g", 1073741824.0},  {"t", 1099511627776.0}};
  const auto unit_it = kUnits.find(unit);
  if (ec != std::errc() || end == t.data() || unit_it == kUnits.end() || !(number > 0))
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("'{}' is not a memory size (examples: 24GiB, 80GB, 8000000000)", text));
  // from_chars reads "inf" and 1e300: only sizes below 2^63 bytes convert to int64_t.
  const double bytes = number * unit_it->second;
  if (!(bytes < 9223372036854775808.0))
    return make_error(ErrorCode::kInvalidArgument, fmt::format("'{}' is more bytes than fit in 64 bits", text));
  return static_cast<int64_t>(bytes);
}

Result<MemoryBudget> choose_memory_budget(const std::string& memory_cap, const std::string& gpu,
                                          const SourceInfo& traced_device) {
  if (!memory_cap.empty()) {
    auto bytes = parse_byte_size(memory_cap);
    if (!bytes) return bytes.error();
    return MemoryBudget{*bytes, "--memory-cap " + memory_cap};
  }
  if (!gpu.empty()) {
    const GpuSpec* spec = find_gpu_spec(gpu);
    if (spec == nullptr || spec->memory_bytes == 0)
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("unknown GPU '{}' (known: A100-40GB, A100-80GB, H100-SXM, H100-PCIe, H200, "
                                    "B200, L4, L40S, RTX4090, MI300X, MI325X, MI350X, MI355X)", gpu));
    return MemoryBudget{spec->memory_bytes, fmt::format("--gpu {} ({})", gpu, spec->name)};
  }
  if (traced_device.device_memory_bytes > 0)
    return MemoryBudget{traced_device.device_memory_bytes, fmt::format("deviceProperties ({})", traced_device.device_name)};
  return MemoryBudget{};
}

Result<ScalingRun> scaling_run(const Report& report, const Trace& trace) {
  ScalingRun run;
  run.file = trace.path;
  std::map<std::string, double> time_by_backend;
  const Call* first = nullptr;
  for (const auto& call : report.calls) {
    if (call.direction == "backward") continue;
    if (first == nullptr) first = &call;
    time_by_backend[call.backend] += call.device_time_us;
    run.length = std::max(run.length, call.shape.Sq);
  }
  if (first == nullptr)
    return make_error(ErrorCode::kUnsupported, fmt::format("{}: no attention call found, nothing to scale", trace.path));
  run.backend = std::max_element(time_by_backend.begin(), time_by_backend.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->first;
  run.forced = looks_forced(trace.path, report);
  run.shape = shape_key(*first);
  run.attention_time_us = report.summary.attention_device_time_us;
  run.memory = pass_memory(trace);
  return run;
}

ScalingSection build_scaling(const std::vector<ScalingRun>& runs, const MemoryBudget& budget) {
  ScalingSection section;
  section.memory_budget_bytes = budget.bytes;
  section.budget_source = budget.source;
  std::map<std::string, std::vector<const ScalingRun*>> by_backend;
  for (const auto& run : runs) {
    by_backend[run.backend].push_back(&run);
    section.baseline_bytes = std::max(section.baseline_bytes, run.memory.baseline_bytes);
    section.allocator_overhead = std::max(section.allocator_overhead, overhead_of(run));
  }
  for (auto& [backend_name, series_runs] : by_backend) {
    std::sort(series_runs.begin(), series_runs.end(),
              [](const ScalingRun* a, const ScalingRun* b) { return a->length < b->length; });
    ScalingSeries series;
    series.backend = backend_name;
    std::vector<double> lengths, times, mem_lengths, peaks;
    int64_t baseline = 0;
    for (const ScalingRun* run : series_runs) {
      series.files.push_back(run->file);
      series.lengths.push_back(run->length);
      series.time_us.push_back(run->attention_time_us);
      series.peak_bytes.push_back(run->memory.peak_activation_bytes);
      lengths.push_back(static_cast<double>(run->length));
      times.push_back(run->attention_time_us);
      if (run->memory.known()) {
        mem_lengths.push_back(static_cast<double>(run->length));
        peaks.push_back(static_cast<double>(run->memory.peak_activation_bytes));
        baseline = std::max(baseline, run->memory.baseline_bytes);
      }
    }
    if (std::set<double>(lengths.begin(), lengths.end()).size() < 2) continue;  // nothing to fit
    series.time_fit = fit_growth(lengths, times);
    if (!peaks.empty()) {
      series.memory_fit = fit_growth(mem_lengths, peaks);
      if (budget.bytes > 0) {
        const double b = static_cast<double>(budget.bytes), base = static_cast<double>(baseline);
        series.oom_threshold_tokens = largest_length_within(series.memory_fit, base, b);
        series.oom_threshold_tokens_reserved =
            largest_length_within(series.memory_fit, base, b / section.allocator_overhead);
      }
    }
    section.series.push_back(std::move(series));
  }
  return section;
}

std::string pin_backend_code(std::string_view backend_name) {
  static const std::map<std::string_view, std::string_view> kEnum = {
      {backend::kFlash, "FLASH_ATTENTION"}, {backend::kEfficient, "EFFICIENT_ATTENTION"},
      {backend::kCudnn, "CUDNN_ATTENTION"}, {backend::kMath, "MATH"}};
  if (const auto it = kEnum.find(backend_name); it != kEnum.end())
    return fmt::format("from torch.nn.attention import sdpa_kernel, SDPBackend\n"
                       "with sdpa_kernel(SDPBackend.{}):\n    model(**inputs)",
                       it->second);
  if (backend_name == backend::kEager) return "model.set_attn_implementation(\"eager\")";
  return "";
}

AdviceSection build_advice(const std::vector<ScalingRun>& runs) {
  AdviceSection section;
  // Only SDPA dispatches are PyTorch's choice; eager attention is the model's own code path.
  std::map<std::string, std::vector<const ScalingRun*>> by_shape;
  for (const auto& run : runs)
    if (run.backend != backend::kEager) by_shape[run.shape].push_back(&run);
  for (const auto& [shape, shape_runs] : by_shape) {
    std::map<std::string, std::vector<double>> times;  // backend -> every measured time
    std::string heuristic;
    for (const ScalingRun* run : shape_runs) {
      times[run->backend].push_back(run->attention_time_us);
      if (!run->forced) heuristic = run->backend;
    }
    if (times.size() < 2) continue;
    // Noise: the largest relative spread between runs of one backend, at least kMinNoise.
    double noise = kMinNoise;
    AdviceRow row;
    row.shape = shape;
    for (const auto& [name, values] : times) {
      const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
      if (*lo > 0) noise = std::max(noise, *hi / *lo - 1);
      row.times_us.emplace_back(name, *lo);
    }
    std::sort(row.times_us.begin(), row.times_us.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    row.fastest_backend = row.times_us.front().first;
    row.heuristic_backend = heuristic;
    if (!heuristic.empty()) {
      const double picked = *std::min_element(times[heuristic].begin(), times[heuristic].end());
      row.gain = row.times_us.front().second > 0 ? picked / row.times_us.front().second : 0;
      if (heuristic != row.fastest_backend && row.gain > 1 + noise) row.code = pin_backend_code(row.fastest_backend);
    }
    section.rows.push_back(std::move(row));
  }
  return section;
}

Result<Report> scale_traces(const std::vector<std::string>& paths, const std::string& memory_cap,
                            const std::string& gpu) {
  if (paths.empty()) return make_error(ErrorCode::kInvalidArgument, "scale needs at least one trace");
  Report combined;
  std::vector<ScalingRun> runs;
  for (const auto& path : paths) {
    auto trace = load_trace(path);
    if (!trace) return trace.error();
    Report report = analyze_trace(*trace);
    auto run = scaling_run(report, *trace);
    if (!run) return run.error();
    if (runs.empty()) {
      combined.tool_version = report.tool_version;
      combined.source = report.source;
      combined.source.files.clear();
    }
    combined.source.files.push_back(path);
    runs.push_back(std::move(*run));
  }
  auto budget = choose_memory_budget(memory_cap, gpu, combined.source);
  if (!budget) return budget.error();
  ScalingSection scaling = build_scaling(runs, *budget);
  if (!scaling.series.empty()) combined.scaling = std::move(scaling);
  AdviceSection advice = build_advice(runs);
  if (!advice.rows.empty()) combined.advice = std::move(advice);
  if (!combined.scaling && !combined.advice)
    return make_error(ErrorCode::kInvalidArgument,
                      "nothing to compare: give traces of one backend at two or more sequence lengths, "
                      "or of several backends at one shape");
  return combined;
}

}  // namespace attnprof
