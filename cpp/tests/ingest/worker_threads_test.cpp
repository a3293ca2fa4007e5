// How many threads parse chunks when the user leaves it to ingest (IngestOptions::threads = 0):
// one per free core but at least two where two cores and two chunks exist (the reading thread
// parses beside them while it waits), never more workers than chunks, and none (parse on the
// reading thread, straight into the Trace) with one core or one chunk.
#include <gtest/gtest.h>

#include <cstdint>

#include "ingest/worker_budget.h"

namespace attnprof::ingest {
namespace {

WorkerBudget budget(size_t cores, double busy, size_t chunks, bool inflating = false) {
  WorkerBudget b;
  b.cores = cores;
  b.busy_cores = busy;
  b.chunks = chunks;
  b.inflating = inflating;
  return b;
}

TEST(IngestWorkerThreads, AQuietTwoCoreMachineParsesABigTraceOnTwoWorkers) {
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0.1, 32)), 2u);
}

TEST(IngestWorkerThreads, ALoadedMachineKeepsTwoWorkers) {
  // At a load of 2.5 on two cores one thread lost 1.2x wall time to two workers
  // (docs/performance.md): other processes share the cores, they do not take them.
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 1.6, 32)), 2u);
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 9.5, 32)), 2u);
  // The load only says how many beyond two are worth starting.
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 12.0, 32)), 4u);
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 30.0, 32)), 2u);
}

TEST(IngestWorkerThreads, OneUsableCoreParsesOnTheReadingThread) {
  EXPECT_EQ(ingest_worker_threads(0, budget(1, 0, 32)), 0u);
}

TEST(IngestWorkerThreads, NoMoreWorkersThanChunks) {
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 0, 1)), 0u);  // a fixture of a few MB: one chunk
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 0, 3)), 3u);
  EXPECT_EQ(ingest_worker_threads(0, budget(64, 0, 1000)), 8u);
}

TEST(IngestWorkerThreads, AGzipInflaterKeepsACoreForItselfBeyondTheFirstTwoWorkers) {
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0, SIZE_MAX, true)), 2u);
  EXPECT_EQ(ingest_worker_threads(0, budget(4, 0, SIZE_MAX, true)), 3u);
}

TEST(IngestWorkerThreads, AnExplicitCountIsKept) {
  EXPECT_EQ(ingest_worker_threads(1, budget(2, 0, 32)), 0u);
  EXPECT_EQ(ingest_worker_threads(4, budget(2, 9.5, 1)), 4u);
}

TEST(IngestWorkerThreads, TheBudgetOfThisMachineCountsChunksFromTheInputSize) {
  const WorkerBudget b = current_worker_budget(size_t{100} << 20, size_t{32} << 20, false);
  EXPECT_GE(b.cores, 1u);
  EXPECT_GE(b.busy_cores, 0.0);
  EXPECT_EQ(b.chunks, 4u);
  EXPECT_EQ(current_worker_budget(10, size_t{32} << 20, false).chunks, 1u);
  EXPECT_EQ(current_worker_budget(10, size_t{32} << 20, true).chunks, SIZE_MAX);
}

}  // namespace
}  // namespace attnprof::ingest
