// A pass's allocation sequence read from a trace's [memory] events, replayed through the
// caching-allocator model (allocator_sim.h), fitted across sequence lengths and synthesised at
// any length to find the first one that runs out of memory. docs/cost.md, "Allocator
// simulation" and "OOM threshold".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "attnprof/allocator_sim.h"
#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/trace.h"

namespace attnprof {

// One allocation or free of a pass, in order.
struct AllocationStep {
  int64_t bytes = 0;   // size of an allocation; 0 for a free
  int32_t frees = 0;   // a free: index of the step it frees, or -(k + 1) for carried[k]
  std::string op;      // innermost CPU op around the event ("" when none)
  int64_t layer = -1;  // layer of the last attention call started before the event
  int64_t recorded_reserved = -1;  // Total Reserved after the event (traces only)
  uint64_t addr = 0;               // the block's address (traces only)
  // An allocation's pool: 0 = the default pool, k >= 1 = the k-th CUDA-graph private pool (the
  // event lies in a graph capture; docs/cost.md, "CUDA-graph private pools").
  int32_t pool = 0;
  bool is_free() const { return bytes == 0; }
};

// An address range the recorded pass is seen allocating in (docs/cost.md, "Seeded free cache").
struct FreeRegion {
  uint64_t addr = 0;
  int64_t bytes = 0;
  int32_t pool = 0;  // the pool of the allocations seen in it
};

struct AllocationSequence {
  std::string file;
  int64_t length = 0;            // sequence length S of the pass
  int64_t opaque_bytes = 0;      // allocated before the first event and not freed in the pass
  std::vector<int64_t> carried;  // blocks allocated before the first event that the pass frees
  // Total Reserved when the recording began (the first event's); 0 when unknown (synthesised).
  int64_t initial_reserved = 0;
  // Free cached memory that survives torch.cuda.empty_cache() (free space inside segments that
  // hold weights), seeded when the simulation is given no initial_reserved.
  int64_t held_free = 0;
  // Large-pool free blocks the recording began with, as far as its addresses show them: the
  // address ranges of the pass's large-pool allocations, merged where they overlap (one block
  // never spans two segments), leaving out ranges that grew Total Reserved or reuse blocks
  // allocated before the recording. Seeded as separate segments out of the free cache, each
  // in the pool whose allocations it holds.
  std::vector<FreeRegion> free_regions;
  // The recording grew its reserved memory for default-pool large requests while free cache it
  // never touched was there: that cache could not serve them (best fit would have), so it is
  // held, not seeded. small_pool_grew: the same for a default-pool small request (no
  // small-pool seed). A private pool's growth says nothing about the default pool's cache.
  bool untouched_cache_unusable = false;
  bool small_pool_grew = false;
  // Per CUDA-graph private pool k (index k - 1): whether one of its small-pool requests grew
  // Total Reserved (no small seed there). Its size is the number of private pools.
  std::vector<bool> private_small_pool_grew;
  std::vector<AllocationStep> steps;
};

// The events of the device that allocated most (MemoryTimeline's choice), with the op and
// layer of each. Errors: kUnsupported when there are no device memory events with totals
// (CPU-only traces: the CPU allocator is not PyTorch's caching allocator).
Result<AllocationSequence> allocation_sequence(const Trace& trace, const Report& report);

struct SimulationOptions {
  AllocatorConfig config;
  int64_t limit_bytes = 0;  // reserved-memory cap; 0 = none
  int warmup_passes = 0;    // passes of the same sequence before the measured one
  // Reserved memory the process holds before the pass (segments of model init and earlier
  // passes): what it holds beyond the resident and carried blocks is seeded as free cached
  // blocks (docs/cost.md, "Seeded free cache"). 0 = start from an empty cache.
  int64_t initial_reserved = 0;
};

struct PassSimulation {
  bool fits = true;
  int64_t failed_step = -1;  // index into steps of the allocation that raised OOM
  int64_t reserved_at_failure = 0;
  int64_t allocated_at_failure = 0;
  int64_t peak_reserved = 0;   // over the measured pass
  int64_t peak_allocated = 0;
  std::vector<int64_t> reserved_after;  // per step of the measured pass, when recorded
};

// Starts from an empty allocator holding the opaque bytes and the carried blocks (and the
// seeded free cache of options.initial_reserved), runs the warm-up passes (each ends by
// freeing what it left allocated and re-creating the carried blocks it freed), then the
// measured pass.
PassSimulation simulate_pass(const AllocationSequence& sequence, const SimulationOptions& options,
                             bool record_reserved = false);

// How the replay starts: from the free cache the recording began with (its first Total
// Reserved, laid out as free_regions shows), or from an empty cache after two warm-up passes
// of the sequence (nothing taken from the recording's reserved memory).
enum class ReplayStart { kRecordedFreeCache, kEmptyCache };

// How well the replay reproduces the trace's own Total Reserved, per event.
AllocatorReplay replay_check(const AllocationSequence& sequence, const AllocatorConfig& config,
                             ReplayStart start = ReplayStart::kRecordedFreeCache);

// Whether the replay, seeded with the recording's free cache, puts each large-pool allocation
// where the allocator did: in the same seen free region, at the same offset inside it.
struct PlacementCheck {
  int64_t allocations = 0;   // large-pool allocations whose recorded address lies in a seen region
  int64_t same_region = 0;   // simulated inside the same region
  int64_t same_address = 0;  // ... at the same offset from the region's start
};
PlacementCheck placement_check(const AllocationSequence& sequence, const AllocatorConfig& config);

// Sizes per step as c0 + c1*S + c2*S^2, fitted across sequences of one model at several S.
struct SizePolynomial {
  double c0 = 0, c1 = 0, c2 = 0;
  bool exact = true;  // reproduces every measured size within the allocator's 512 B
  int64_t at(int64_t length) const;
};

struct SequenceModel {
  AllocationSequence shape;  // the longest measured sequence (ops, frees, layers)
  std::vector<int64_t> lengths;
  SizePolynomial opaque;
  std::vector<SizePolynomial> carried;
  std::vector<SizePolynomial> steps;  // per step (frees hold a zero polynomial)
  double exact_share = 1;             // share of allocation sizes fitted exactly
  int64_t held_free = 0;              // S-independent free cache, fitted to the recorded reserved
  // The part of held_free whose layout the recordings show: the smallest fitted length's free
  // regions that lie at the same addresses at every fitted length (same process, same segments).
  std::vector<FreeRegion> held_free_regions;
};

// Needs two or more lengths whose sequences match step by step (same op, same frees);
// sequences that do not match the longest one are left out. Errors: kUnsupported.
Result<SequenceModel> fit_allocation_sequences(std::span<const AllocationSequence> sequences);

AllocationSequence synthesize_sequence(const SequenceModel& model, int64_t length);

struct OomSearch {
  int64_t tokens = -1;  // largest S whose pass fits; -1 when none fails up to the ceiling
  FailingAllocation failing;  // the first allocation that fails at tokens + 1
};

// Largest S whose cold pass (cache emptied, no warm-up: how a length search runs) fits
// options.limit_bytes.
OomSearch search_first_oom(const SequenceModel& model, const SimulationOptions& options);

}  // namespace attnprof
