// How many workers parse chunks beside the reading thread. Left to ingest (IngestOptions::threads
// = 0): none unless cores stayed idle while the reading thread parsed alone (more threads of a
// busy machine get no more CPU, only the merge's work), then one per idle core, never more
// parsing threads than cores or chunks, and none with one core or one chunk. Asked for N: the
// reading thread and N - 1 workers.
#include <gtest/gtest.h>

#include <cstdint>

#include "ingest/worker_budget.h"

namespace attnprof::ingest {
namespace {

WorkerBudget budget(size_t cores, double idle, size_t chunks) {
  WorkerBudget b;
  b.cores = cores;
  b.idle_cores = idle;
  b.chunks = chunks;
  return b;
}

TEST(IngestWorkerThreads, AQuietTwoCoreMachineParsesABigTraceOnTheReadingThreadAndOneWorker) {
  // The reading thread holds one core; the other stayed idle.
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0.9, 32)), 1u);
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0.5, 32)), 1u);
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 1.8, 32)), 1u);  // never a third thread on two cores
}

TEST(IngestWorkerThreads, ABusyMachineParsesOnTheReadingThread) {
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0.0, 32)), 0u);
  EXPECT_EQ(ingest_worker_threads(0, budget(2, 0.3, 32)), 0u);
  EXPECT_EQ(ingest_worker_threads(16, budget(2, 0.0, 32)), 15u);  // unless asked
}

TEST(IngestWorkerThreads, IdleCoresOfABigMachineEachGetAWorker) {
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 3.2, 32)), 3u);
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 15.0, 32)), 8u);  // at most 8
  EXPECT_EQ(ingest_worker_threads(0, budget(4, 3.9, 32)), 3u);    // the reading thread holds the fourth core
}

TEST(IngestWorkerThreads, OneCoreOrOneChunkParsesOnTheReadingThread) {
  EXPECT_EQ(ingest_worker_threads(0, budget(1, 1.0, 32)), 0u);
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 15.0, 1)), 0u);  // a fixture of a few MB
  EXPECT_EQ(ingest_worker_threads(0, budget(16, 15.0, 3)), 2u);  // the reading thread parses the third
  EXPECT_FALSE(may_parse_in_parallel(0, budget(1, 0, 32)));
  EXPECT_FALSE(may_parse_in_parallel(0, budget(16, 0, 1)));
  EXPECT_TRUE(may_parse_in_parallel(0, budget(2, 0, 2)));
  EXPECT_FALSE(may_parse_in_parallel(0, budget(0, 0, 0)));  // an empty budget does not wrap around
  EXPECT_FALSE(may_parse_in_parallel(1, budget(2, 0, 32)));  // asked for: nothing to measure
}

TEST(IngestWorkerThreads, AnExplicitCountIsKeptWithTheReadingThreadAsOneOfThem) {
  EXPECT_EQ(ingest_worker_threads(1, budget(2, 1.0, 32)), 0u);
  EXPECT_EQ(ingest_worker_threads(2, budget(2, 1.0, 32)), 1u);
  EXPECT_EQ(ingest_worker_threads(4, budget(2, 0, 1)), 3u);
}

TEST(IngestWorkerThreads, TheBudgetOfThisMachineCountsChunksFromTheInputSize) {
  const WorkerBudget b = current_worker_budget(size_t{100} << 20, size_t{32} << 20, false);
  EXPECT_GE(b.cores, 1u);
  EXPECT_EQ(b.chunks, 4u);
  EXPECT_EQ(current_worker_budget(10, size_t{32} << 20, false).chunks, 1u);
  EXPECT_EQ(current_worker_budget(10, size_t{32} << 20, true).chunks, SIZE_MAX);
}

}  // namespace
}  // namespace attnprof::ingest
