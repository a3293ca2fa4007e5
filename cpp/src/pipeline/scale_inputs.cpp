// `attnprof scale`: load and analyse each trace of a sweep, then fit (cpp/src/analysis,
// scaling.h). The loading lives here so the fits stay pure functions of analysed runs.
#include "attnprof/analyze.h"
#include "attnprof/allocator_sim.h"
#include "attnprof/scaling.h"

namespace attnprof {

Result<Report> scale_traces(const std::vector<std::string>& paths, const std::string& memory_cap,
                            const std::string& gpu, const std::string& alloc_conf) {
  if (paths.empty()) return make_error(ErrorCode::kInvalidArgument, "scale needs at least one trace");
  auto config = parse_allocator_config(alloc_conf);
  if (!config) return config.error();
  Report combined;
  std::vector<ScalingRun> runs;
  for (const auto& path : paths) {
    auto trace = load_trace(path, ingest_options_of({}));
    if (!trace) return trace.error();
    Report report = analyze_loaded_trace(*trace);
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
  ScalingSection scaling = build_scaling(runs, *budget, *config);
  scaling.allocator_config = alloc_conf;
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
