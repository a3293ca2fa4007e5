#include "ingest/worker_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <thread>

#include <sched.h>
#include <utility>

namespace attnprof::ingest {

namespace {

// (1-minute load average, runnable tasks now) from /proc/loadavg ("0.52 0.58 0.59 3/456 789");
// nullopt where there is no such file.
std::optional<std::pair<double, double>> read_loadavg() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return std::nullopt;
  double one_minute = 0;
  long runnable = 0, tasks = 0;
  const int n = std::fscanf(f, "%lf %*f %*f %ld/%ld", &one_minute, &runnable, &tasks);
  std::fclose(f);
  if (n != 3) return std::nullopt;
  return std::pair<double, double>{one_minute, static_cast<double>(runnable)};
}

// The cores this process may run on (taskset, a container's cpuset), else the machine's.
size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<size_t>(std::max(CPU_COUNT(&set), 1));
  return std::max<size_t>(std::thread::hardware_concurrency(), 1);
}

}  // namespace

WorkerBudget current_worker_budget(size_t input_bytes, size_t chunk_bytes, bool inflating) {
  WorkerBudget budget;
  budget.cores = usable_cores();
  if (const auto load = read_loadavg())
    // Runnable now counts this thread, and the inflater when it has started already.
    budget.busy_cores = std::max(0.0, std::min(load->first, load->second - 1 - (inflating ? 1 : 0)));
  budget.inflating = inflating;
  // Compressed bytes say little about the JSON behind them: assume enough chunks.
  budget.chunks = inflating ? SIZE_MAX : std::max<size_t>(1, (input_bytes + chunk_bytes - 1) / std::max<size_t>(chunk_bytes, 1));
  return budget;
}

size_t ingest_worker_threads(size_t requested, const WorkerBudget& budget) {
  if (requested > 0) return requested == 1 ? 0 : requested;
  constexpr size_t kMaxWorkers = 8;
  constexpr size_t kFewestParallel = 2;
  const size_t most = std::min({budget.cores, budget.chunks, kMaxWorkers});
  if (most < kFewestParallel) return 0;
  const double free_cores = static_cast<double>(budget.cores) - budget.busy_cores - (budget.inflating ? 1.0 : 0.0);
  const auto whole_free = static_cast<size_t>(std::max(0.0, std::floor(free_cores + 0.5)));
  return std::clamp(whole_free, kFewestParallel, most);
}

}  // namespace attnprof::ingest
