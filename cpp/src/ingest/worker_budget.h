// How many threads parse a trace's chunks (chunks.h) when the caller leaves it to ingest.
#pragma once

#include <cstddef>

#include "attnprof/cpu_cores.h"

namespace attnprof::ingest {

// What the automatic thread count is chosen from.
struct WorkerBudget {
  size_t cores = 1;        // cores this process may run on (its CPU affinity)
  size_t chunks = 1;       // chunks the input will be cut into (SIZE_MAX when unknown)
  double idle_cores = 0;   // cores the machine left idle while the reading thread parsed alone (IdleProbe)
};

// Cores and chunks for an input of `input_bytes` (compressed bytes when `inflating`, which
// say little about the JSON behind them: then enough chunks are assumed); idle_cores is 0
// until an IdleProbe has measured it.
WorkerBudget current_worker_budget(size_t input_bytes, size_t chunk_bytes, bool inflating);

// Whether automatic threads (requested == 0) could start a worker at all: two cores and
// two chunks. Only then is the idle time worth measuring.
bool may_parse_in_parallel(size_t requested, const WorkerBudget& budget);

// Worker threads for IngestOptions::threads, the reading thread being one of the parsing
// threads: N - 1 for N; for 0 (automatic), none unless at least half a core stayed idle while
// the reading thread parsed alone, else one per idle core (rounded), at least one, at most
// one per core and one per chunk besides the reading thread's, and 8. Not one more: with a
// third parsing thread time-slicing two cores the whole parse took longer, 1.08 s against
// 0.93 s on the 1 GB trace (docs/performance.md, "Tenth round"). Idle time, not the load
// average: the scheduler shares the cores between sessions (autogroup), so a process of a
// busy machine gets no more CPU from more threads, only the merge's extra work
// (docs/performance.md: 1.09x CPU, 1.15x wall at load 8), while on an idle core the workers
// gain.
size_t ingest_worker_threads(size_t requested, const WorkerBudget& budget);

// Chunks cut and not yet merged, at most, with `workers` workers: one being parsed and one
// queued behind it for each worker, so a worker that finishes starts the next at once while
// the reading thread parses a chunk of its own or merges one, plus those two. With one chunk
// per worker the workers waited (1.32 s against 0.96 s on the 1 GB trace, docs/performance.md
// "Tenth round"). Each chunk in flight holds about IngestOptions::chunk_bytes and its rows.
size_t most_chunks_in_flight(size_t workers);

}  // namespace attnprof::ingest
