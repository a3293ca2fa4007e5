#include "attnprof/cpu_cores.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#include <sched.h>
#include <unistd.h>

namespace attnprof {

size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return static_cast<size_t>(std::max(CPU_COUNT(&set), 1));
  return std::max<size_t>(std::thread::hardware_concurrency(), 1);
}

double process_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

namespace {

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

}  // namespace attnprof
