// The allocator model against real traces: replaying a trace's own allocation sequence gives
// the Total Reserved it recorded, and sequences fitted from shorter runs predict a longer
// run's peak reserved memory (H200 llama7b4l sweeps; docs/cost.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iterator>

#include "analysis/fixture_support.h"
#include "attnprof/memory_sim.h"

namespace attnprof {
namespace {

using testing::h200_trace;

constexpr int64_t MiB = 1024 * 1024;

AllocationSequence sequence_of(const std::string& path, int64_t length = 0) {
  auto trace = load_trace(path);
  EXPECT_TRUE(trace.ok()) << path;
  if (!trace.ok()) return {};
  const Report report = analyze_trace(*trace);
  auto seq = allocation_sequence(*trace, report);
  EXPECT_TRUE(seq.ok()) << path << ": " << (seq.ok() ? "" : seq.error().message);
  if (!seq.ok()) return {};
  seq->length = length;
  return *seq;
}

std::vector<std::string> traces_with_device_memory_events() {
  std::vector<std::string> paths;
  const std::string root = ATTNPROF_FIXTURES_DIR;
  for (const char* dir : {"/h200-torch2.11/traces", "/tracelens", "/tracelens-inference", "/hta"})
    for (const auto& entry : std::filesystem::directory_iterator(root + dir)) paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> with_events;
  for (const auto& path : paths) {
    auto trace = load_trace(path);
    if (!trace.ok()) continue;
    for (const auto& e : trace->memory)
      if (e.device_type != 0 && e.total_reserved >= 0) {
        with_events.push_back(path);
        break;
      }
  }
  return with_events;
}

bool recorded_reserved_is_constant(const AllocationSequence& seq) {
  for (const auto& step : seq.steps)
    if (step.recorded_reserved != seq.initial_reserved) return false;
  return true;
}

// Measured per fixture (docs/cost.md, "Replay check"). Seeded with the free cache the
// recording began with, laid out as its addresses show, and with the captures' allocations in
// their CUDA-graph private pool: every event of every fixture within 2 MiB, the 32 recordings
// whose Total Reserved is constant and the one whose reserved memory grows 13 times (vLLM
// piecewise capture, where the growths come at the recorded events with the recorded sizes).
// From an empty cache after two warm-up passes no event of any fixture is within 2 MiB (the
// free cache a recording inherits from model init and earlier passes is not in its events).
// Placement: large-pool allocations the simulator puts in the same seen free region, and at
// the same offset in it, as the allocator did.
struct ReplayPin {
  const char* trace;
  int64_t events, within_2mib, largest_mib, cold_largest_mib, placed, same_region, same_address;
};
constexpr ReplayPin kReplayPins[] = {
      {"bert_sdpa_fp16_b16_s512", 176, 176, 0, 26, 53, 6, 6},
      {"bert_sdpa_fp16_b16_s512_padmask", 230, 230, 0, 14, 57, 24, 22},
      {"gpt2_eager_fp16_b8_s1024", 284, 284, 0, 96, 105, 70, 50},
      {"gpt2_sdpa_fp16_b8_s1024", 224, 224, 0, 16, 72, 1, 1},
      {"llama7b4l_eager_bf16_b4_s1024", 462, 462, 0, 142, 175, 122, 62},
      {"llama7b4l_eager_bf16_b4_s2048", 462, 462, 0, 2078, 176, 108, 53},
      {"llama7b4l_eager_bf16_b4_s4096", 462, 462, 0, 130, 181, 175, 175},
      {"llama7b4l_eager_bf16_b4_s512", 462, 462, 0, 58, 174, 52, 35},
      {"llama7b4l_sdpa_bf16_b1_s2048_train", 1006, 1006, 0, 44, 381, 121, 120},
      {"llama7b4l_sdpa_bf16_b4_s1024", 386, 386, 0, 74, 134, 67, 24},
      {"llama7b4l_sdpa_bf16_b4_s1024_stack", 386, 386, 0, 74, 134, 67, 24},
      {"llama7b4l_sdpa_bf16_b4_s2048", 386, 386, 0, 250, 134, 107, 107},
      {"llama7b4l_sdpa_bf16_b4_s2048_force_cudnn_attention", 386, 386, 0, 250, 134, 107, 107},
      {"llama7b4l_sdpa_bf16_b4_s2048_force_efficient_attention", 362, 362, 0, 250, 134, 107, 107},
      {"llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention", 386, 386, 0, 250, 134, 107, 107},
      {"llama7b4l_sdpa_bf16_b4_s2048_force_math", 530, 530, 0, 78, 202, 142, 142},
      {"llama7b4l_sdpa_bf16_b4_s2048_padmask", 434, 434, 0, 286, 141, 71, 42},
      {"llama7b4l_sdpa_bf16_b4_s4096", 386, 386, 0, 126, 139, 139, 139},
      {"llama7b4l_sdpa_bf16_b4_s512", 386, 386, 0, 154, 134, 124, 93},
      {"llama7b4l_sdpa_fp32_b4_s2048", 320, 320, 0, 376, 116, 116, 116},
      {"llama_hd256_gqa_sdpa_bf16_b4_s2048", 386, 386, 0, 68, 139, 35, 34},
      {"llama_hd512_gqa_sdpa_bf16_b4_s2048", 370, 370, 0, 112, 145, 73, 71},
      {"llama_hd96_gqa_sdpa_bf16_b4_s2048", 386, 386, 0, 60, 134, 63, 43},
      {"llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask", 450, 450, 0, 72, 148, 95, 68},
      {"mistral_sw1024_sdpa_bf16_b2_s4096", 450, 450, 0, 164, 155, 40, 26},
      {"vit_sdpa_bf16_b16_384", 170, 170, 0, 28, 53, 14, 10},
      {"sglang_qwen3_8b_decode_graph_capture", 1014, 1014, 0, 318, 37, 37, 37},
      {"vllm_gptoss_decode_full_graph_capture", 1184, 1184, 0, 1894, 36, 36, 36},
      {"vllm_gptoss_piecewise_graph_capture", 1114, 1114, 0, 948, 0, 0, 0},
      {"h100_Qwen_Qwen1", 2250, 2250, 0, 98, 870, 187, 131},
      {"h100_facebook_timesformer-base-finetuned-k400__1016002", 1206, 1206, 0, 1784, 381, 348, 348},
      {"h100_gaunernst_bert-small-uncased__1016001", 218, 218, 0, 4, 1, 1, 1},
      {"mi300_gaunernst_bert-small-uncased__1016001", 234, 234, 0, 4, 27, 27, 27},
};

TEST(AllocatorReplay, ReplaysEveryFixtureWithMemoryEventsCloseToTheRecordedTotalReserved) {
  const auto paths = traces_with_device_memory_events();
  ASSERT_EQ(paths.size(), std::size(kReplayPins));
  int constant = 0;
  for (const auto& path : paths) {
    const std::string name = std::filesystem::path(path).filename().string();
    const auto pin = std::find_if(std::begin(kReplayPins), std::end(kReplayPins),
                                  [&](const ReplayPin& p) { return name.rfind(std::string(p.trace) + ".", 0) == 0; });
    ASSERT_NE(pin, std::end(kReplayPins)) << name;
    const AllocationSequence seq = sequence_of(path);
    const AllocatorReplay r = replay_check(seq, {});
    const AllocatorReplay cold = replay_check(seq, {}, ReplayStart::kEmptyCache);
    const PlacementCheck placed = placement_check(seq, {});
    std::printf("| %s | %lld | %.1f%% | %.1f MiB | %.1f | %.1f | %.1f%% | %.1f MiB | %lld | %lld | %lld |\n", pin->trace,
                static_cast<long long>(r.events), 100 * r.within_2mib_share,
                static_cast<double>(r.largest_difference_bytes) / MiB,
                static_cast<double>(r.recorded_peak_reserved_bytes) / MiB,
                static_cast<double>(r.simulated_peak_reserved_bytes) / MiB, 100 * cold.within_2mib_share,
                static_cast<double>(cold.largest_difference_bytes) / MiB, static_cast<long long>(placed.allocations),
                static_cast<long long>(placed.same_region), static_cast<long long>(placed.same_address));
    EXPECT_EQ(r.events, pin->events) << name;
    EXPECT_EQ(std::llround(r.within_2mib_share * static_cast<double>(r.events)), pin->within_2mib) << name;
    EXPECT_EQ(r.largest_difference_bytes / MiB, pin->largest_mib) << name;
    EXPECT_EQ(cold.largest_difference_bytes / MiB, pin->cold_largest_mib) << name;
    EXPECT_EQ(cold.within_2mib_share, 0.0) << name;
    EXPECT_EQ(placed.allocations, pin->placed) << name;
    EXPECT_EQ(placed.same_region, pin->same_region) << name;
    EXPECT_EQ(placed.same_address, pin->same_address) << name;
    EXPECT_FALSE(r.cannot_know.empty());
    constant += recorded_reserved_is_constant(seq) ? 1 : 0;
  }
  EXPECT_EQ(constant, 32);
}

// The seeded free cache is a starting state, not an answer: a pass that needs more than it
// holds grows the reserved memory by the allocator's segment rules.
TEST(AllocatorReplay, APassLargerThanTheSeededFreeCacheReservesNewSegments) {
  AllocationSequence seq;
  seq.opaque_bytes = 40 * MiB;
  seq.initial_reserved = 40 * MiB + 24 * MiB;  // 24 MiB free cached before the pass
  seq.steps = {{.bytes = 16 * MiB}, {.bytes = 16 * MiB}, {.frees = 0}, {.frees = 1}};
  SimulationOptions options;
  options.initial_reserved = seq.initial_reserved;
  const PassSimulation sim = simulate_pass(seq, options, /*record_reserved=*/true);
  ASSERT_EQ(sim.reserved_after.size(), 4u);
  EXPECT_EQ(sim.reserved_after[0], 64 * MiB);  // the first 16 MiB comes out of the seeded block
  EXPECT_EQ(sim.reserved_after[1], 80 * MiB);  // 8 MiB left there: the second needs a 16 MiB segment
  EXPECT_EQ(sim.peak_reserved, 80 * MiB);
}

// Every large-pool allocation lies in one free block of one segment: allocations whose address
// ranges overlap share a block, ranges that only touch may be two segments side by side.
// Ranges in a segment the recording created (from the address of the allocation that grew
// Total Reserved, as long as the growth) or in a block allocated before the recording (live at
// its start) say nothing about the free cache it began with.
TEST(AllocatorReplay, FreeRegionsAreOverlappingAllocationRangesOfTheRecordedFreeCache) {
  constexpr int64_t base = int64_t{1} << 40;
  const int64_t reserved = 4096 * MiB, grown = reserved + 20 * MiB;
  Trace trace;
  trace.path = "hand-made";
  int64_t ts = 0, allocated = 1024 * MiB;
  const auto event = [&](int64_t offset, int64_t bytes, int64_t total_reserved) {
    allocated += bytes;
    trace.memory.push_back({.ts_ns = ++ts, .addr = base + offset, .bytes = bytes, .total_allocated = allocated,
                            .total_reserved = total_reserved, .device_type = 1, .device_id = 0});
  };
  event(0, 64 * MiB, reserved);         // A: [0, 64)
  event(0, -64 * MiB, reserved);
  event(16 * MiB, 48 * MiB, reserved);  // overlaps A: one block [0, 64)
  event(64 * MiB, 32 * MiB, reserved);  // touches it: [64, 96), its own region
  event(100 * MiB, 1024, reserved);     // small pool: not a large-pool region
  event(512 * MiB, 5 * MiB, grown);     // grew reserved memory: a new 20 MiB segment
  event(517 * MiB, 12 * MiB, grown);    // in the rest of that segment
  event(2048 * MiB, -20 * MiB, grown);  // frees a block from before the recording
  event(2048 * MiB, 16 * MiB, grown);   // reuses its memory
  auto seq = allocation_sequence(trace, Report{});
  ASSERT_TRUE(seq.ok()) << seq.error().message;
  ASSERT_EQ(seq->free_regions.size(), 2u);
  EXPECT_EQ(seq->free_regions[0].addr, static_cast<uint64_t>(base));
  EXPECT_EQ(seq->free_regions[0].bytes, 64 * MiB);
  EXPECT_EQ(seq->free_regions[1].addr, static_cast<uint64_t>(base + 64 * MiB));
  EXPECT_EQ(seq->free_regions[1].bytes, 32 * MiB);
  EXPECT_TRUE(seq->untouched_cache_unusable);  // the 5 MiB request found no free block
  EXPECT_FALSE(seq->small_pool_grew);
  ASSERT_EQ(seq->carried.size(), 1u);
  EXPECT_EQ(seq->carried[0], 20 * MiB);
}

// Graph capture: the events a thread records between its stream-capture begin and end calls
// are the capture's private pool's; captures whose blocks overlap in address share one pool,
// a capture whose blocks overlap no other's has its own; other threads stay in the default pool.
TEST(AllocatorReplay, EventsInsideAGraphCaptureAllocateFromItsPrivatePool) {
  constexpr int64_t base = int64_t{1} << 40;
  constexpr int64_t capturing = 7, other = 8;
  Trace trace;
  trace.path = "hand-made";
  const auto call = [&](std::string_view name, int64_t ts) {
    trace.slices.push_back({.name = trace.strings.intern(name), .thread = trace.threads.intern(0, capturing),
                            .cat = Category::kRuntime, .ts_ns = ts, .dur_ns = 5});
  };
  call("cudaStreamBeginCapture", 100);
  call("cudaStreamEndCapture", 200);
  call("hipStreamBeginCapture", 300);  // the ROCm spelling
  call("hipStreamEndCapture", 400);
  call("cuStreamBeginCapture_v2", 500);  // the driver's
  call("cuStreamEndCapture", 600);
  call("cudaStreamBeginCapture", 800);  // a capture with another one nested in it
  call("cudaStreamBeginCapture", 850);
  call("cudaStreamEndCapture", 870);
  call("cudaStreamEndCapture", 1000);
  int64_t allocated = 1024 * MiB;
  const auto event = [&](int64_t ts, int64_t tid, int64_t offset, int64_t bytes) {
    allocated += bytes;
    trace.memory.push_back({.ts_ns = ts, .addr = base + offset, .bytes = bytes, .total_allocated = allocated,
                            .total_reserved = 4096 * MiB, .thread = trace.threads.intern(0, tid), .device_type = 1,
                            .device_id = 0});
  };
  event(50, capturing, 0, 64 * MiB);           // before any capture: default pool
  event(150, capturing, 100 * MiB, 32 * MiB);  // capture 1
  event(160, other, 200 * MiB, 32 * MiB);      // another thread during capture 1: default pool
  event(190, capturing, 100 * MiB, -32 * MiB);
  event(350, capturing, 110 * MiB, 16 * MiB);  // capture 2 reuses capture 1's memory: same pool
  event(550, capturing, 300 * MiB, 16 * MiB);  // capture 3 overlaps neither: a pool of its own
  event(700, capturing, 400 * MiB, 16 * MiB);  // between the captures: default pool
  event(860, capturing, 500 * MiB, 16 * MiB);  // the nested capture
  event(900, capturing, 600 * MiB, 16 * MiB);  // the outer one, after the nested one ended
  auto seq = allocation_sequence(trace, Report{});
  ASSERT_TRUE(seq.ok()) << seq.error().message;
  std::vector<int32_t> pools;
  for (const auto& step : seq->steps)
    if (!step.is_free()) pools.push_back(step.pool);
  EXPECT_EQ(pools, (std::vector<int32_t>{0, 1, 0, 1, 2, 0, 3, 4}));
  EXPECT_EQ(seq->private_small_pool_grew.size(), 4u);
  std::vector<std::pair<int32_t, int64_t>> regions;  // (pool, MiB)
  for (const auto& r : seq->free_regions) regions.emplace_back(r.pool, r.bytes / MiB);
  std::sort(regions.begin(), regions.end());
  // Capture 2's 16 MiB lies inside capture 1's 32 MiB block: one region of pool 1.
  EXPECT_EQ(regions,
            (std::vector<std::pair<int32_t, int64_t>>{{0, 16}, {0, 32}, {0, 64}, {1, 32}, {2, 16}, {3, 16}, {4, 16}}));
}

// vLLM's piecewise capture records 25 graphs (one per piece of the compiled model) into one
// shared private pool: the captures' blocks overlap, so they are one pool. The 12 growths
// inside the captures are that pool's new segments; the 13th, a 5.6 MiB request after the last
// capture, is the default pool's, whose free cache could not serve it. With the captures'
// allocations put in the default pool instead (the model before private pools), the pools'
// free blocks serve that request and the replay misses its 20 MiB segment.
TEST(AllocatorReplay, TheVllmPiecewiseCapturesShareOnePrivatePoolApartFromTheDefaultPool) {
  const AllocationSequence seq = sequence_of(std::string(ATTNPROF_FIXTURES_DIR) +
                                             "/tracelens-inference/vllm_gptoss_piecewise_graph_capture.pt.trace.json.gz");
  ASSERT_EQ(seq.private_small_pool_grew.size(), 1u);
  EXPECT_TRUE(seq.private_small_pool_grew[0]);  // a 0.5 MiB request of the second capture grew it by 2 MiB
  std::vector<int64_t> default_pool_bytes;
  for (const auto& step : seq.steps)
    if (!step.is_free() && step.pool == 0) default_pool_bytes.push_back(step.bytes);
  EXPECT_EQ(default_pool_bytes, (std::vector<int64_t>{512, 512, 8192, 5898240}));
  EXPECT_TRUE(seq.untouched_cache_unusable);
  EXPECT_EQ(replay_check(seq, {}).largest_difference_bytes, 0);

  AllocationSequence one_pool = seq;
  for (auto& step : one_pool.steps) step.pool = 0;
  for (auto& region : one_pool.free_regions) region.pool = 0;
  one_pool.private_small_pool_grew.clear();
  one_pool.small_pool_grew = true;  // its growths are then all the default pool's
  const AllocatorReplay merged = replay_check(one_pool, {});
  EXPECT_EQ(merged.largest_difference_bytes, 20 * MiB);
  EXPECT_EQ(std::llround(merged.within_2mib_share * static_cast<double>(merged.events)), 1111);
}

TEST(AllocatorReplay, CpuTracesSayTheirAllocatorIsNotTheCachingAllocator) {
  auto trace = load_trace(std::string(ATTNPROF_FIXTURES_DIR) + "/hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  ASSERT_TRUE(trace.ok());
  auto seq = allocation_sequence(*trace, analyze_trace(*trace));
  ASSERT_FALSE(seq.ok());
  EXPECT_NE(seq.error().message.find("caching allocator"), std::string::npos);
}

double holdout_error(const std::string& attn, std::vector<int64_t> fitted = {512, 1024, 2048}, int64_t target_length = 4096) {
  std::vector<AllocationSequence> shorter;
  for (int64_t s : fitted)
    shorter.push_back(sequence_of(h200_trace(fmt::format("llama7b4l_{}_bf16_b4_s{}", attn, s)), s));
  auto model = fit_allocation_sequences(shorter);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  if (!model.ok()) return 1;
  const AllocationSequence target =
      sequence_of(h200_trace(fmt::format("llama7b4l_{}_bf16_b4_s{}", attn, target_length)), target_length);
  int64_t recorded = 0;
  for (const auto& step : target.steps) recorded = std::max(recorded, step.recorded_reserved);
  SimulationOptions options;
  options.warmup_passes = 2;
  const PassSimulation sim = simulate_pass(synthesize_sequence(*model, target_length), options);
  int64_t in_regions = 0;
  for (const FreeRegion& r : model->held_free_regions) in_regions += r.bytes;
  std::printf("%s from %zu lengths to S=%lld: predicted %.1f MiB recorded %.1f MiB exact share %.3f held free cache %.1f MiB (%zu regions, %.1f MiB)\n",
              attn.c_str(), fitted.size(), static_cast<long long>(target_length), static_cast<double>(sim.peak_reserved) / MiB, static_cast<double>(recorded) / MiB,
              model->exact_share, static_cast<double>(model->held_free) / MiB, model->held_free_regions.size(),
              static_cast<double>(in_regions) / MiB);
  return static_cast<double>(sim.peak_reserved) / static_cast<double>(recorded) - 1;
}

// Sequences fitted from S = 512, 1024, 2048 (every size reproduced exactly) and synthesised
// at 4096, with the S-independent free cache fitted at those lengths (468 MiB for both series,
// which share the model's weight segments, laid out as the free regions found at the same
// addresses at every fitted length), predict the recorded peak Total Reserved of the 4096
// trace: eager 27,928 vs 27,930 MiB, SDPA 4,480 vs 4,482 MiB. With the same amount seeded as
// one free block SDPA was 3.3% low: the layout, not the amount, decides (docs/cost.md).
TEST(AllocatorExtrapolation, PredictsThePeakReservedOfTheS4096RunFromShorterRuns) {
  EXPECT_NEAR(holdout_error("eager"), 0.0, 0.001);
  EXPECT_NEAR(holdout_error("sdpa"), 0.0, 0.001);
}

// The S-independent free regions are the weights' segments' free space: the same ranges in
// both series (one process, one model), found at every fitted length.
TEST(AllocatorExtrapolation, HeldFreeRegionsAreTheSameAddressesInEverySeriesOfOneProcess) {
  std::vector<SequenceModel> models;
  for (const char* attn : {"sdpa", "eager"}) {
    std::vector<AllocationSequence> runs;
    for (int64_t s : {512, 1024, 2048})
      runs.push_back(sequence_of(h200_trace(fmt::format("llama7b4l_{}_bf16_b4_s{}", attn, s)), s));
    auto model = fit_allocation_sequences(runs);
    ASSERT_TRUE(model.ok());
    ASSERT_FALSE(model->held_free_regions.empty()) << attn;
    models.push_back(*model);
  }
  EXPECT_EQ(models[0].held_free, models[1].held_free);
  for (const FreeRegion& r : models[0].held_free_regions)
    EXPECT_TRUE(std::any_of(models[1].held_free_regions.begin(), models[1].held_free_regions.end(),
                            [&](const FreeRegion& o) {
                              return o.addr < r.addr + static_cast<uint64_t>(r.bytes) &&
                                     r.addr < o.addr + static_cast<uint64_t>(o.bytes);
                            }))
        << std::hex << r.addr;
}

// Two lengths are enough where the sizes are determined by them (a size growing exactly as
// S^2 between two lengths is fitted as c2*S^2): SDPA from 512+1024 -0.04% at 4096, from
// 1024+2048 +0.80% at 4096, from 512+1024 -0.14% at 2048; eager from 512+1024 -0.01% at 4096,
// from 1024+2048 +1.79% at 4096. The eager S=2048 recording itself holds 2,020 MiB more than
// its pass needs in the simulated steady state (its own cold replay is 2,078 MiB low too), so
// no fit predicts it: -18.8% from 512+1024 (docs/cost.md).
TEST(AllocatorExtrapolation, TwoShorterLengthsPredictTheLongerRunsToo) {
  EXPECT_NEAR(holdout_error("sdpa", {512, 1024}, 4096), 0.0, 0.001);
  EXPECT_NEAR(holdout_error("sdpa", {1024, 2048}, 4096), 0.0, 0.01);
  EXPECT_NEAR(holdout_error("sdpa", {512, 1024}, 2048), 0.0, 0.002);
  EXPECT_NEAR(holdout_error("eager", {512, 1024}, 4096), 0.0, 0.001);
  EXPECT_NEAR(holdout_error("eager", {1024, 2048}, 4096), 0.0, 0.02);
  EXPECT_NEAR(holdout_error("eager", {512, 1024}, 2048), -0.188, 0.002);
}

TEST(AllocatorExtrapolation, FitsEveryAllocationSizeOfTheLlamaSweepsExactly) {
  for (const char* attn : {"sdpa", "eager"}) {
    std::vector<AllocationSequence> runs;
    for (int64_t s : {512, 1024, 2048, 4096})
      runs.push_back(sequence_of(h200_trace(fmt::format("llama7b4l_{}_bf16_b4_s{}", attn, s)), s));
    auto model = fit_allocation_sequences(runs);
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(model->lengths.size(), 4u);
    EXPECT_DOUBLE_EQ(model->exact_share, 1.0) << attn;
    // The synthesised sequence at a measured length is that trace's sequence.
    const AllocationSequence at2048 = synthesize_sequence(*model, 2048);
    for (size_t i = 0; i < at2048.steps.size(); ++i) EXPECT_EQ(at2048.steps[i].bytes, runs[2].steps[i].bytes) << i;
  }
}

TEST(AllocatorExtrapolation, SequencesThatDoNotMatchStepByStepAreNotFitted) {
  std::vector<AllocationSequence> runs = {
      sequence_of(h200_trace("llama7b4l_sdpa_bf16_b4_s2048"), 2048),
      sequence_of(h200_trace("llama7b4l_eager_bf16_b4_s4096"), 4096)};
  auto model = fit_allocation_sequences(runs);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("do not match step by step"), std::string::npos);
}

}  // namespace
}  // namespace attnprof
