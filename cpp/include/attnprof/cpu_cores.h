// What this process can have of the machine's CPUs, as the OS counts it: the cores it may run
// on, its own CPU time, and the cores the machine left idle over a span. Ingest sizes its
// parsing workers from these (cpp/src/ingest/worker_budget.h), the pipeline its threads after
// ingest (FreeCoresProbe, analyze.h). Idle time, not the load average: the scheduler shares
// the cores between sessions (autogroup), so a thread more on a busy machine gets no more CPU.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

namespace attnprof {

// The cores this process may run on (taskset, a container's cpuset), else the machine's.
size_t usable_cores();

// CPU seconds this process has used, all its threads together.
double process_cpu_seconds();

// The machine's idle CPU time (/proc/stat: idle + iowait of all cores) since construction,
// as cores left idle on average.
class IdleProbe {
 public:
  IdleProbe();
  double elapsed_seconds() const;
  // nullopt where /proc/stat cannot be read.
  std::optional<double> idle_cores() const;

 private:
  std::chrono::steady_clock::time_point start_;
  std::optional<double> idle_start_s_;
};

}  // namespace attnprof
