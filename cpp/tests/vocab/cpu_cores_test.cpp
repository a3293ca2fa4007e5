// What this process can have of the machine's CPUs (cpu_cores.h), as read on this machine:
// the figures are the OS's, so the tests pin their bounds, not values.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "attnprof/cpu_cores.h"

namespace attnprof {
namespace {

TEST(CpuCores, TheUsableCoresAreAtLeastOneAndAtMostTheMachines) {
  EXPECT_GE(usable_cores(), 1u);
  EXPECT_LE(usable_cores(), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(CpuCores, ProcessCpuTimeGrowsWhileThisThreadWorks) {
  const double before = process_cpu_seconds();
  volatile double sink = 0;
  while (process_cpu_seconds() - before < 0.02) sink = sink + 1;
  EXPECT_GE(process_cpu_seconds() - before, 0.02);
}

TEST(CpuCores, TheIdleProbeMeasuresAtMostTheCoresOfTheMachine) {
  const IdleProbe probe;
  while (probe.elapsed_seconds() < 0.1) {
  }
  const std::optional<double> idle = probe.idle_cores();
  ASSERT_TRUE(idle.has_value());  // Linux: /proc/stat
  EXPECT_GE(*idle, 0.0);
  // Ticks are 10 ms: over 0.1 s each core may be off by a tick or two.
  EXPECT_LE(*idle, static_cast<double>(std::max(1u, std::thread::hardware_concurrency())) * 1.5);
}

}  // namespace
}  // namespace attnprof
