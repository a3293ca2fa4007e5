// The caching-allocator model, one rule per test, on hand-made allocation sequences whose
// outcome follows from c10/cuda/CUDACachingAllocator.cpp (docs/cost.md).
#include <gtest/gtest.h>

#include "attnprof/allocator_sim.h"

namespace attnprof {
namespace {

constexpr int64_t MiB = 1024 * 1024;
constexpr int64_t KiB = 1024;

TEST(AllocatorSim, RoundsEveryRequestUpTo512Bytes) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 1));
  ASSERT_TRUE(sim.malloc(2, 513));
  EXPECT_EQ(sim.allocated_bytes(), 512 + 1024);
}

TEST(AllocatorSim, SmallRequestsSharePackedTwoMiBSegments) {
  CachingAllocatorSim sim;
  for (uint64_t h = 0; h < 4; ++h) ASSERT_TRUE(sim.malloc(h, 512 * KiB));
  EXPECT_EQ(sim.reserved_bytes(), 2 * MiB);
  ASSERT_TRUE(sim.malloc(4, 512 * KiB));
  EXPECT_EQ(sim.reserved_bytes(), 4 * MiB);
  EXPECT_EQ(sim.segment_count(), 2);
}

TEST(AllocatorSim, RequestsBetweenOneAndTenMiBSplitATwentyMiBSegment) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 2 * MiB));
  EXPECT_EQ(sim.reserved_bytes(), 20 * MiB);
  ASSERT_TRUE(sim.malloc(2, 9 * MiB));
  ASSERT_TRUE(sim.malloc(3, 9 * MiB));  // 2 + 9 + 9 = 20: fills the segment exactly
  EXPECT_EQ(sim.reserved_bytes(), 20 * MiB);
  ASSERT_TRUE(sim.malloc(4, 2 * MiB));
  EXPECT_EQ(sim.reserved_bytes(), 40 * MiB);
}

TEST(AllocatorSim, LargeRequestsGetTheirOwnSegmentRoundedToTwoMiB) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 10 * MiB + 1));
  EXPECT_EQ(sim.reserved_bytes(), 12 * MiB);
}

TEST(AllocatorSim, LargeRemainderOfAtMostOneMiBStaysInTheBlock) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 11 * MiB));  // segment 12 MiB, remainder 1 MiB: not split
  EXPECT_EQ(sim.allocated_bytes(), 12 * MiB);
  sim.free(1);
  ASSERT_TRUE(sim.malloc(2, 10 * MiB));  // remainder 2 MiB > 1 MiB: split
  EXPECT_EQ(sim.allocated_bytes(), 10 * MiB);
}

TEST(AllocatorSim, SmallRemainderOfAtLeast512BytesIsSplit) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, MiB));        // small pool: a 2 MiB segment, 1 MiB remainder split off
  ASSERT_TRUE(sim.malloc(2, MiB - 512));  // leaves 512 B, still split off
  EXPECT_EQ(sim.allocated_bytes(), 2 * MiB - 512);
  ASSERT_TRUE(sim.malloc(3, 512));  // the 512 B remainder serves it
  EXPECT_EQ(sim.reserved_bytes(), 2 * MiB);
}

TEST(AllocatorSim, BestFitTakesTheSmallestCachedBlockThatHoldsTheRequest) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 40 * MiB));
  ASSERT_TRUE(sim.malloc(2, 12 * MiB));
  sim.free(1);
  sim.free(2);
  ASSERT_TRUE(sim.malloc(3, 11 * MiB + 512 * KiB));  // the 12 MiB block, not the 40
  ASSERT_TRUE(sim.malloc(4, 38 * MiB));              // so the 40 MiB one is still there
  EXPECT_EQ(sim.reserved_bytes(), 52 * MiB);
}

TEST(AllocatorSim, FreedNeighboursMergeIntoOneBlock) {
  CachingAllocatorSim sim;
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_TRUE(sim.malloc(h, 5 * MiB));  // one 20 MiB segment
  sim.free(1);
  sim.free(2);
  ASSERT_TRUE(sim.malloc(4, 9 * MiB));  // fits only in the merged 10 MiB
  EXPECT_EQ(sim.reserved_bytes(), 20 * MiB);
}

TEST(AllocatorSim, BeforeOomItReleasesCachedSegmentsAndRetries) {
  CachingAllocatorSim sim({}, 64 * MiB);
  ASSERT_TRUE(sim.malloc(1, 40 * MiB));
  sim.free(1);  // cached, still reserved
  EXPECT_EQ(sim.reserved_bytes(), 40 * MiB);
  ASSERT_TRUE(sim.malloc(2, 50 * MiB));
  EXPECT_EQ(sim.reserved_bytes(), 50 * MiB);
}

TEST(AllocatorSim, LiveBlocksAndSplitSegmentsCannotBeReleased) {
  CachingAllocatorSim sim({}, 64 * MiB);
  ASSERT_TRUE(sim.malloc(1, 2 * MiB));   // 20 MiB segment, split
  ASSERT_TRUE(sim.malloc(2, 40 * MiB));
  EXPECT_FALSE(sim.malloc(3, 30 * MiB));  // 60 MiB reserved, 18 MiB of it free but pinned
  EXPECT_EQ(sim.reserved_bytes(), 60 * MiB);
  EXPECT_EQ(sim.allocated_bytes(), 42 * MiB);
}

TEST(AllocatorSim, OversizeBlocksServeOnlyRequestsWithinTheRoundingLimit) {
  AllocatorConfig config;
  config.max_split_size = 40 * MiB;
  CachingAllocatorSim sim(config);
  ASSERT_TRUE(sim.malloc(1, 100 * MiB));
  sim.free(1);
  ASSERT_TRUE(sim.malloc(2, 10 * MiB));  // below max_split_size: never an oversize block
  ASSERT_TRUE(sim.malloc(3, 50 * MiB));  // 100 >= 50 + 20: too big to hand out
  EXPECT_EQ(sim.reserved_bytes(), 160 * MiB);
  ASSERT_TRUE(sim.malloc(4, 90 * MiB));  // 100 < 90 + 20: taken whole, not split
  EXPECT_EQ(sim.reserved_bytes(), 160 * MiB);
  EXPECT_EQ(sim.allocated_bytes(), 10 * MiB + 50 * MiB + 100 * MiB);
}

TEST(AllocatorSim, ExpandableSegmentsGrowOneSegmentInTwentyMiBPages) {
  AllocatorConfig config;
  config.expandable_segments = true;
  CachingAllocatorSim sim(config);
  ASSERT_TRUE(sim.malloc(1, 30 * MiB));
  EXPECT_EQ(sim.reserved_bytes(), 40 * MiB);
  ASSERT_TRUE(sim.malloc(2, 30 * MiB));  // 10 MiB free at the end + one more 20 MiB page
  EXPECT_EQ(sim.reserved_bytes(), 60 * MiB);
  EXPECT_EQ(sim.segment_count(), 1);
  sim.free(1);
  sim.free(2);
  sim.empty_cache();
  EXPECT_EQ(sim.reserved_bytes(), 0);
}

TEST(AllocatorSim, ExpandableSegmentsReuseTheTailWhereFixedSegmentsWouldNot) {
  AllocatorConfig expandable;
  expandable.expandable_segments = true;
  CachingAllocatorSim grow(expandable), fixed;
  for (auto* sim : {&grow, &fixed}) {
    ASSERT_TRUE(sim->malloc(1, 100 * MiB));
    sim->free(1);
    ASSERT_TRUE(sim->malloc(2, 110 * MiB));  // the free 100 MiB is extended, not abandoned
  }
  EXPECT_EQ(grow.reserved_bytes(), 120 * MiB);
  EXPECT_EQ(fixed.reserved_bytes(), 210 * MiB);
}

TEST(AllocatorSim, GarbageCollectionFreesOldCachedBlocksAboveTheThreshold) {
  AllocatorConfig config;
  config.garbage_collection_threshold = 0.5;
  CachingAllocatorSim gc(config, 100 * MiB), plain({}, 100 * MiB);
  for (auto* sim : {&gc, &plain}) {
    ASSERT_TRUE(sim->malloc(1, 30 * MiB));
    ASSERT_TRUE(sim->malloc(2, 30 * MiB));
    sim->free(1);
    sim->free(2);
    ASSERT_TRUE(sim->malloc(3, 40 * MiB));
  }
  EXPECT_EQ(gc.reserved_bytes(), 40 * MiB);
  EXPECT_EQ(plain.reserved_bytes(), 100 * MiB);
}

// CUDA-graph private pools (Note [Interaction with CUDA graph capture]): a capture allocates
// from a pool of its own, blocks freed during or after it go back to that pool.
TEST(AllocatorSim, ACapturesPrivatePoolSharesNoFreeBlockWithTheDefaultPool) {
  CachingAllocatorSim sim;
  ASSERT_TRUE(sim.malloc(1, 40 * MiB));
  sim.free(1);  // a cached 40 MiB block of the default pool
  sim.begin_allocate_to_pool(1);
  ASSERT_TRUE(sim.malloc(2, 30 * MiB));  // the default pool's block is not the capture's
  EXPECT_EQ(sim.reserved_bytes(), 70 * MiB);
  EXPECT_EQ(sim.pool_of(2), 1);
  sim.free(2);
  ASSERT_TRUE(sim.malloc(3, 30 * MiB));  // freed during the capture: reused by it
  sim.end_allocate_to_pool();
  sim.free(3);
  ASSERT_TRUE(sim.malloc(4, 30 * MiB));  // outside the capture: the default pool's 40 MiB block
  EXPECT_EQ(sim.pool_of(4), 0);
  EXPECT_EQ(sim.reserved_bytes(), 70 * MiB);
  sim.free(4);
  sim.begin_allocate_to_pool(1);
  ASSERT_TRUE(sim.malloc(5, 30 * MiB));  // a later capture into the same pool finds its block
  sim.end_allocate_to_pool();
  EXPECT_EQ(sim.reserved_bytes(), 70 * MiB);
}

TEST(AllocatorSim, EmptyCacheKeepsALiveGraphsPoolUntilThePoolIsReleased) {
  CachingAllocatorSim sim;
  sim.begin_allocate_to_pool(1);
  ASSERT_TRUE(sim.malloc(1, 30 * MiB));
  sim.end_allocate_to_pool();
  sim.free(1);
  sim.empty_cache();
  EXPECT_EQ(sim.reserved_bytes(), 30 * MiB);  // the graph may replay into it
  sim.release_pool(1);
  sim.empty_cache();
  EXPECT_EQ(sim.reserved_bytes(), 0);
}

TEST(AllocatorSim, DuringACaptureOomIsRaisedWithoutReleasingTheCache) {
  CachingAllocatorSim sim({}, 64 * MiB);
  ASSERT_TRUE(sim.malloc(1, 40 * MiB));
  sim.free(1);
  sim.begin_allocate_to_pool(1);
  EXPECT_FALSE(sim.malloc(2, 30 * MiB));  // 40 cached + 30 > 64, and no release while capturing
  sim.end_allocate_to_pool();
  ASSERT_TRUE(sim.malloc(3, 50 * MiB));  // outside a capture the cached 40 MiB is released first
  EXPECT_EQ(sim.reserved_bytes(), 50 * MiB);
}

TEST(AllocatorSim, RoundupPowerTwoDivisionsRoundToTheNextDivision) {
  AllocatorConfig config;
  std::fill(config.roundup_power2_divisions.begin(), config.roundup_power2_divisions.end(), 4);
  EXPECT_EQ(allocator_round_size(config, 1300 * MiB), 1536 * MiB);  // 1 GiB + 2 * 256 MiB
  EXPECT_EQ(allocator_round_size(config, 600 * KiB), 640 * KiB);    // 512 KiB + 128 KiB
  EXPECT_EQ(allocator_round_size(config, 1024 * MiB), 1024 * MiB);  // a power of two stays
  EXPECT_EQ(allocator_round_size({}, 600 * KiB), 600 * KiB);
}

TEST(AllocatorConfigParse, ReadsEveryOptionThatChangesPlacement) {
  auto c = parse_allocator_config(
      "expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6,"
      "roundup_power2_divisions:[256:1,512:2,>:4],release_lock_on_cudamalloc:False");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->expandable_segments);
  EXPECT_EQ(c->max_split_size, 128 * MiB);
  EXPECT_DOUBLE_EQ(c->garbage_collection_threshold, 0.6);
  // 256 MiB is interval 8 (and fills 0..7), 512 MiB interval 9, ">" from 9 on.
  EXPECT_EQ(c->roundup_power2_divisions[0], 1);
  EXPECT_EQ(c->roundup_power2_divisions[8], 1);
  EXPECT_EQ(c->roundup_power2_divisions[9], 4);
  EXPECT_EQ(c->roundup_power2_divisions[15], 4);
  auto single = parse_allocator_config("roundup_power2_divisions:8");
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->roundup_power2_divisions[3], 8);
  EXPECT_TRUE(parse_allocator_config("").ok());
}

TEST(AllocatorConfigParse, RejectsBadValuesWithAMessageNamingTheOption) {
  for (const char* text : {"expandable_segments:yes", "max_split_size_mb:10", "garbage_collection_threshold:1.5",
                           "roundup_power2_divisions:3", "roundup_power2_divisions:[256:1", "no_such_option:1",
                           "max_split_size_mb", "expandable_segments:True;", "backend:cudaMallocAsync",
                           "roundup_power2_divisions:[300:2]"}) {
    auto c = parse_allocator_config(text);
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_NE(c.error().message.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace attnprof
