// The aggregated progress of `attnprof analyze DIR`: several workers report their own file's
// bytes; the sink sees one serialised stream of totals that never decrease and end complete.
#include "pipeline/rank_progress.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace attnprof::ranks {
namespace {

// Checks every call against the one before it; the sink runs under RankProgress's lock, so
// recording without a lock of our own is itself part of what the concurrent test checks.
struct Recorder {
  std::vector<DirectoryProgress> calls;
  DirectoryProgressFn sink() {
    return [this](const DirectoryProgress& p) { calls.push_back(p); };
  }
  void expect_monotonic_and_complete(size_t files, size_t bytes) const {
    ASSERT_FALSE(calls.empty());
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].files_total, files);
      EXPECT_EQ(calls[i].bytes_total, bytes);
      EXPECT_LE(calls[i].files_done, files);
      EXPECT_LE(calls[i].bytes_done, bytes);
      if (i == 0) continue;
      EXPECT_GE(calls[i].files_done, calls[i - 1].files_done) << "call " << i;
      EXPECT_GE(calls[i].bytes_done, calls[i - 1].bytes_done) << "call " << i;
    }
    EXPECT_EQ(calls.back().files_done, files);
    EXPECT_EQ(calls.back().bytes_done, bytes);
  }
};

TEST(RankProgress, SumsBytesOverFilesAndEndsWithAllFilesDone) {
  Recorder rec;
  RankProgress progress({1000, 3000}, rec.sink());
  progress.bytes_read(0, 400);
  progress.bytes_read(1, 1000);
  EXPECT_EQ(progress.snapshot().bytes_done, 1400u);  // 400 + 1000
  progress.file_done(0);                              // the rest of file 0 counts as read
  EXPECT_EQ(progress.snapshot().bytes_done, 2000u);   // 1000 + 1000
  EXPECT_EQ(progress.snapshot().files_done, 1u);
  progress.bytes_read(1, 3000);
  progress.file_done(1);
  rec.expect_monotonic_and_complete(2, 4000);
}

TEST(RankProgress, CountsOfOneFileNeverGoBackwardsOrPastItsSize) {
  Recorder rec;
  RankProgress progress({1000, 1000}, rec.sink());
  progress.bytes_read(0, 600);
  progress.bytes_read(0, 500);   // an older value arriving late changes nothing
  progress.bytes_read(1, 5000);  // a source reporting more than the file holds is capped
  EXPECT_EQ(progress.snapshot().bytes_done, 1600u);  // 600 + 1000
  progress.file_done(0);
  progress.file_done(1);
  rec.expect_monotonic_and_complete(2, 2000);
}

TEST(RankProgress, FileThatFailsBeforeReadingStillCompletesTheTotals) {
  Recorder rec;
  RankProgress progress({100, 200, 300}, rec.sink());
  progress.file_done(1);  // e.g. a corrupt gzip: no byte reported, but the file is finished
  progress.bytes_read(0, 100);
  progress.file_done(0);
  progress.file_done(2);
  rec.expect_monotonic_and_complete(3, 600);
}

TEST(RankProgress, ManySmallReadsAreThrottledToAboutOneCallPerMille) {
  Recorder rec;
  const size_t size = 10'000'000;
  RankProgress progress({size}, rec.sink());
  for (size_t read = 100; read <= size; read += 100) progress.bytes_read(0, read);  // 100,000 reports
  progress.file_done(0);
  rec.expect_monotonic_and_complete(1, size);
  // One call per 10,000 bytes (0.1% of 10 MB) at most, plus the file's end.
  EXPECT_LE(rec.calls.size(), 1001u);
  EXPECT_GE(rec.calls.size(), 900u);
}

TEST(RankProgress, ConcurrentWorkersGiveOneMonotonicStream) {
  Recorder rec;
  const size_t files = 8, size = 1 << 20;
  RankProgress progress(std::vector<size_t>(files, size), rec.sink());
  std::vector<std::thread> workers;
  for (size_t w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      for (size_t f = w; f < files; f += 4) {
        for (size_t read = 4096; read <= size; read += 4096) progress.bytes_read(f, read);
        progress.file_done(f);
      }
    });
  for (std::thread& t : workers) t.join();
  rec.expect_monotonic_and_complete(files, files * size);
  std::vector<bool> seen(files + 1, false);  // every file end reaches the sink, none is throttled away
  for (const DirectoryProgress& p : rec.calls) seen[p.files_done] = true;
  for (size_t done = 1; done <= files; ++done) EXPECT_TRUE(seen[done]) << done << " files done was never reported";
}

TEST(RankProgress, WithoutSinkOnlyKeepsTotals) {
  RankProgress progress({10, 20}, {});
  progress.bytes_read(0, 10);
  progress.file_done(0);
  EXPECT_EQ(progress.snapshot().files_done, 1u);
  EXPECT_EQ(progress.snapshot().bytes_done, 10u);
  EXPECT_EQ(progress.snapshot().bytes_total, 30u);
}

}  // namespace
}  // namespace attnprof::ranks
