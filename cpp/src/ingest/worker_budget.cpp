#include "ingest/worker_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>

#include <sched.h>
#include <unistd.h>

namespace attnprof::ingest {

namespace {

// The cores this process may run on (taskset, a container's cpuset), else the machine's.
size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<size_t>(std::max(CPU_COUNT(&set), 1));
  return std::max<size_t>(std::thread::hardware_concurrency(), 1);
}

// Idle + iowait seconds of all cores since boot, from the first line of /proc/stat
// ("cpu  user nice system idle iowait ...", in clock ticks); nullopt without it.
std::optional<double> machine_idle_seconds() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return std::nullopt;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0;
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait);
  std::fclose(f);
  const long ticks = sysconf(_SC_CLK_TCK);
  if (n != 5 || ticks <= 0) return std::nullopt;
  return static_cast<double>(idle + iowait) / static_cast<double>(ticks);
}

}  // namespace

WorkerBudget current_worker_budget(size_t input_bytes, size_t chunk_bytes, bool inflating) {
  WorkerBudget budget;
  budget.cores = usable_cores();
  budget.chunks = inflating ? SIZE_MAX : std::max<size_t>(1, (input_bytes + chunk_bytes - 1) / std::max<size_t>(chunk_bytes, 1));
  return budget;
}

namespace {
constexpr size_t kMaxWorkers = 8;
constexpr size_t kFewestParallel = 2;
constexpr double kIdleWorthAWorker = 0.5;  // cores
size_t most_workers(const WorkerBudget& budget) { return std::min({budget.cores, budget.chunks, kMaxWorkers}); }
}  // namespace

bool may_parse_in_parallel(size_t requested, const WorkerBudget& budget) {
  return requested == 0 && most_workers(budget) >= kFewestParallel;
}

size_t ingest_worker_threads(size_t requested, const WorkerBudget& budget) {
  if (requested > 0) return requested == 1 ? 0 : requested;
  if (!may_parse_in_parallel(requested, budget) || budget.idle_cores < kIdleWorthAWorker) return 0;
  const auto idle = static_cast<size_t>(std::floor(budget.idle_cores + 0.5));
  return std::clamp(idle + 1, kFewestParallel, most_workers(budget));
}

IdleProbe::IdleProbe() : start_(std::chrono::steady_clock::now()), idle_start_s_(machine_idle_seconds()) {}

double IdleProbe::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::optional<double> IdleProbe::idle_cores() const {
  const std::optional<double> now = machine_idle_seconds();
  const double elapsed = elapsed_seconds();
  if (!now || !idle_start_s_ || elapsed <= 0) return std::nullopt;
  return std::max(0.0, (*now - *idle_start_s_) / elapsed);
}

}  // namespace attnprof::ingest
