// attnprof_allocator_bench TRACE [EVENTS]: how long the caching-allocator simulation takes on
// about EVENTS (default 1,000,000) allocation events, as a ratio to the time ingest takes on
// the same trace in the same run, with the load average. The events are the trace's own pass
// repeated (warm-up passes of simulate_pass), so block sizes and reuse are real ones.
// Prints figures; asserts nothing (bench/allocator_bench.py drives it).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/ingest.h"
#include "attnprof/memory_sim.h"
#include "attnprof/text_format.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: attnprof_allocator_bench TRACE [EVENTS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long long wanted = argc > 2 ? std::atoll(argv[2]) : 1000000;
  constexpr int kRepeats = 5;

  std::vector<double> ingest;
  attnprof::Result<attnprof::Trace> trace = attnprof::load_trace(path);
  for (int i = 0; i < kRepeats && trace; ++i) {
    const auto start = Clock::now();
    trace = attnprof::load_trace(path);
    ingest.push_back(seconds_since(start));
  }
  if (!trace) {
    std::fprintf(stderr, "%s\n", trace.error().message.c_str());
    return 2;
  }
  const attnprof::Report report = attnprof::analyze_trace(*trace);
  auto seq = attnprof::allocation_sequence(*trace, report);
  if (!seq) {
    std::fprintf(stderr, "%s\n", seq.error().message.c_str());
    return 2;
  }
  const auto per_pass = static_cast<long long>(seq->steps.size());
  attnprof::SimulationOptions options;
  options.warmup_passes = static_cast<int>(std::max(0LL, (wanted + per_pass - 1) / per_pass - 1));
  const long long events = per_pass * (options.warmup_passes + 1);

  std::vector<double> simulate;
  int64_t peak = 0;
  for (int i = 0; i < kRepeats; ++i) {
    const auto start = Clock::now();
    peak = attnprof::simulate_pass(*seq, options).peak_reserved;
    simulate.push_back(seconds_since(start));
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = load[1] = load[2] = -1;

  const double sim_s = median(simulate), ingest_s = median(ingest);
  fmt::print("trace                 {} ({} events, {} allocation events per pass)\n", path, trace->event_count,
             per_pass);
  fmt::print("ingest                {:.2f} ms (median of {})\n", ingest_s * 1e3, kRepeats);
  fmt::print("simulate              {} allocation events in {:.3f} s = {:.0f} ns/event (median of {}; peak reserved "
             "{})\n",
             events, sim_s, sim_s / static_cast<double>(events) * 1e9, kRepeats, attnprof::bytes_text(static_cast<double>(peak)));
  fmt::print("ratio                 simulating {} events = {:.1f}x this trace's ingest; per event {:.2f}x ingest per "
             "trace event\n",
             events, sim_s / ingest_s,
             (sim_s / static_cast<double>(events)) / (ingest_s / static_cast<double>(trace->event_count)));
  fmt::print("load average          {:.2f} {:.2f} {:.2f} (1, 5, 15 min)\n", load[0], load[1], load[2]);
  return 0;
}
