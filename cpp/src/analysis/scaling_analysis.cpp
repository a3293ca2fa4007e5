// Sweeps over sequence length and backend: fits, OOM thresholds, backend advice
// (issue 5 items 3, 4, 6); docs/cost.md.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "attnprof/call_facts.h"
#include "attnprof/hw.h"
#include "attnprof/scaling.h"

namespace attnprof {
namespace {

// Two backends whose times differ by less than this are a tie (run-to-run noise of the H200
// fixtures: the same cuDNN kernel measured 1106 vs 1118 us, 1.1%; docs/cost.md).
constexpr double kMinNoise = 0.05;

// The advice groups runs by what the text report prints for their shape; a masked call is
// another problem, so its mask kind joins the key.
std::string shape_key(const Call& call) {
  std::string key = shape_text(call.shape);
  if (call.mask.present) key += " mask=" + call.mask.kind;
  return key;
}

std::string file_stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool looks_forced(const std::string& path, const Report& report) {
  if (file_stem(path).find(kForcedBackendMarker) != std::string::npos) return true;
  for (const auto& call : report.calls)
    if (call.capture && !call.capture->pytorch_choice.empty() && call.capture->pytorch_choice != call.backend)
      return true;
  return false;
}

// Memory on the device that PyTorch's caching allocator does not hand out: the CUDA context
// (driver state, module images). With lazy module loading (default since CUDA 11.7) it is
// about 300-400 MB (pytorch/pytorch#107667, #109888), above 1000 MB with every kernel loaded
// eagerly before that; 512 MiB errs on the side of the lazy figures' upper end (docs/cost.md,
// "OOM threshold"). A memory cap (set_per_process_memory_fraction) does not count it.
constexpr int64_t kCudaContextBytes = int64_t{512} << 20;

// The replays' worst disagreement with the recorded Total Reserved, relative to its peak.
double replay_error(const std::vector<AllocatorReplay>& replays, const std::vector<std::string>& files) {
  double worst = 0;
  for (const auto& r : replays)
    if (std::find(files.begin(), files.end(), r.file) != files.end() && r.recorded_peak_reserved_bytes > 0)
      worst = std::max(worst, static_cast<double>(r.largest_difference_bytes) /
                                  static_cast<double>(r.recorded_peak_reserved_bytes));
  return worst;
}

// Peak reserved of the longest run predicted from the shorter ones (needs three lengths).
void holdout_check(const std::vector<AllocationSequence>& sequences, const AllocatorConfig& config,
                   ScalingSeries& series) {
  if (sequences.size() < 3) return;
  const AllocationSequence& longest = sequences.back();
  auto model = fit_allocation_sequences(std::span(sequences).first(sequences.size() - 1));
  if (!model) return;
  SimulationOptions options;
  options.config = config;
  options.warmup_passes = 2;  // the recorded pass came after warm-up passes
  const PassSimulation sim = simulate_pass(synthesize_sequence(*model, longest.length), options);
  int64_t recorded = -1;
  for (const auto& step : longest.steps) recorded = std::max(recorded, step.recorded_reserved);
  if (!sim.fits || recorded <= 0) return;
  series.holdout_length = longest.length;
  series.holdout_predicted_reserved_bytes = sim.peak_reserved;
  series.holdout_recorded_reserved_bytes = recorded;
}

// Worst relative error of the steady-state peak reserved memory of each run predicted from
// the others (needs three lengths): how far a run of this process strayed from the model,
// which a run under the cap may do as well. The shortest run stays in every fit: its pass
// creates the fewest segments, so it is what pins the S-independent free cache (without it
// the pass segments of the next length, which cudaMalloc hands out again at the same
// addresses, pass for free cache: the fit becomes another model instead of being tested).
double leave_one_out_error(const std::vector<AllocationSequence>& sequences, const std::vector<int64_t>& fitted,
                           const AllocatorConfig& config) {
  double worst = 0;
  if (fitted.size() < 3) return worst;
  SimulationOptions options;
  options.config = config;
  options.warmup_passes = 2;
  for (size_t i = 0; i < sequences.size(); ++i) {
    if (sequences[i].length == fitted.front() ||
        std::find(fitted.begin(), fitted.end(), sequences[i].length) == fitted.end())
      continue;
    std::vector<AllocationSequence> others;
    for (size_t j = 0; j < sequences.size(); ++j)
      if (j != i) others.push_back(sequences[j]);
    auto model = fit_allocation_sequences(others);
    if (!model) continue;
    const PassSimulation sim = simulate_pass(synthesize_sequence(*model, sequences[i].length), options);
    int64_t recorded = -1;
    for (const auto& step : sequences[i].steps) recorded = std::max(recorded, step.recorded_reserved);
    if (sim.fits && recorded > 0)
      worst = std::max(worst, std::abs(static_cast<double>(sim.peak_reserved) / static_cast<double>(recorded) - 1));
  }
  return worst;
}

void simulated_threshold(const std::vector<AllocationSequence>& sequences, const ScalingSection& section,
                         const AllocatorConfig& config, ScalingSeries& series) {
  auto model = fit_allocation_sequences(sequences);
  if (!model) {
    series.oom_note = model.error().message;
    return;
  }
  series.exact_size_share = model->exact_share;
  holdout_check(sequences, config, series);
  double band = std::max(replay_error(section.replays, series.files), leave_one_out_error(sequences, model->lengths, config));
  if (series.holdout_recorded_reserved_bytes > 0)
    band = std::max(band, std::abs(static_cast<double>(series.holdout_predicted_reserved_bytes) /
                                       static_cast<double>(series.holdout_recorded_reserved_bytes) - 1));
  series.oom_error_band = band;
  SimulationOptions options;
  options.config = config;
  options.limit_bytes = section.allocator_limit_bytes;
  const OomSearch search = search_first_oom(*model, options);
  series.oom_method = "caching-allocator simulation";
  series.oom_threshold_tokens = search.tokens;
  if (search.tokens < 0) {
    series.oom_note = "no length up to 16M tokens runs out of memory in the simulation";
    return;
  }
  series.failing_allocation = search.failing;
  if (search.failing.reserved_bytes > 0)
    series.fragmentation = 1 - static_cast<double>(search.failing.allocated_bytes) /
                                   static_cast<double>(search.failing.reserved_bytes);
  // The band as lengths: the threshold if reserved memory were `band` more or less.
  const double limit = static_cast<double>(section.allocator_limit_bytes);
  options.limit_bytes = static_cast<int64_t>(limit / (1 + band));
  series.oom_threshold_low_tokens = search_first_oom(*model, options).tokens;
  options.limit_bytes = static_cast<int64_t>(limit / std::max(1e-9, 1 - band));
  series.oom_threshold_high_tokens = search_first_oom(*model, options).tokens;
}

}  // namespace

AllocatorLimit allocator_limit(const MemoryBudget& budget) {
  if (budget.bytes <= 0) return {};
  if (budget.caps_allocator)
    return {budget.bytes, "a cap on the caching allocator (set_per_process_memory_fraction): counts reserved "
                          "memory only"};
  return {std::max<int64_t>(0, budget.bytes - kCudaContextBytes),
          "device memory less 512 MiB for the CUDA context (estimate, pytorch/pytorch#107667, #109888); the "
          "cuBLAS workspace comes from the caching allocator (already in the trace); NCCL buffers of multi-GPU jobs "
          "are not subtracted (give a memory cap net of them)"};
}

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
    return MemoryBudget{*bytes, "memory cap " + memory_cap, /*caps_allocator=*/true};
  }
  if (!gpu.empty()) {
    const GpuSpec* spec = find_gpu_spec(gpu);
    if (spec == nullptr || spec->memory_bytes == 0)
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("unknown GPU '{}' (known: {})", gpu, gpu_spec_names(/*with_memory_only=*/true)));
    return MemoryBudget{spec->memory_bytes, fmt::format("GPU {} ({})", gpu, spec->name)};
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
  if (auto seq = allocation_sequence(trace, report)) {
    run.allocations = std::move(*seq);
    run.allocations->length = run.length;
  } else {
    run.allocations_note = seq.error().message;
  }
  return run;
}

ScalingSection build_scaling(const std::vector<ScalingRun>& runs, const MemoryBudget& budget,
                             const AllocatorConfig& config) {
  ScalingSection section;
  section.memory_budget_bytes = budget.bytes;
  section.budget_source = budget.source;
  const AllocatorLimit limit = allocator_limit(budget);
  section.allocator_limit_bytes = limit.bytes;
  section.non_pytorch_memory = limit.explanation;
  std::map<std::string, std::vector<const ScalingRun*>> by_backend;
  for (const auto& run : runs) {
    by_backend[run.backend].push_back(&run);
    section.baseline_bytes = std::max(section.baseline_bytes, run.memory.baseline_bytes);
    if (run.allocations) section.replays.push_back(replay_check(*run.allocations, config));
  }
  for (auto& [backend_name, series_runs] : by_backend) {
    std::sort(series_runs.begin(), series_runs.end(),
              [](const ScalingRun* a, const ScalingRun* b) { return a->length < b->length; });
    ScalingSeries series;
    series.backend = backend_name;
    std::vector<double> lengths, times, mem_lengths, peaks;
    std::vector<AllocationSequence> sequences;
    int64_t baseline = 0;
    std::string no_sequence;
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
      if (run->allocations) sequences.push_back(*run->allocations);
      else no_sequence = run->allocations_note;
    }
    if (std::set<double>(lengths.begin(), lengths.end()).size() < 2) continue;  // nothing to fit
    series.time_fit = fit_growth(lengths, times);
    if (!peaks.empty()) series.memory_fit = fit_growth(mem_lengths, peaks);
    if (budget.bytes > 0 && !sequences.empty()) {
      simulated_threshold(sequences, section, config, series);
    } else if (budget.bytes > 0 && !peaks.empty()) {
      // CPU runs: the CPU allocator returns freed memory to the system, so what is allocated
      // is what counts against the budget.
      series.oom_method = "allocated-bytes fit";
      series.oom_note = no_sequence;
      series.oom_threshold_tokens = largest_length_within(series.memory_fit, static_cast<double>(baseline),
                                                          static_cast<double>(budget.bytes));
    }
    section.series.push_back(std::move(series));
  }
  return section;
}

std::string pin_backend_code(std::string_view backend_name) {
  if (const BackendWord* w = backend_word(backend_name); w && w->pinnable)
    return fmt::format("from torch.nn.attention import sdpa_kernel, SDPBackend\n"
                       "with sdpa_kernel(SDPBackend.{}):\n    model(**inputs)",
                       w->sdp_backend);
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

}  // namespace attnprof
