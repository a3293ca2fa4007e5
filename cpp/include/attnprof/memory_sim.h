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
  bool is_free() const { return bytes == 0; }
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

// How well the replay reproduces the trace's own Total Reserved, per event.
AllocatorReplay replay_check(const AllocationSequence& sequence, const AllocatorConfig& config);

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
