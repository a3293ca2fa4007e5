// How many threads parse a trace's chunks (chunks.h) when the caller leaves it to ingest.
#pragma once

#include <cstddef>

namespace attnprof::ingest {

// What the automatic thread count is chosen from.
struct WorkerBudget {
  size_t cores = 1;           // cores this process may run on (its CPU affinity)
  double busy_cores = 0;      // cores other processes keep busy (see current_worker_budget)
  size_t chunks = 1;          // chunks the input will be cut into (SIZE_MAX when unknown)
  bool inflating = false;     // a gzip inflater thread will take a core of its own
};

// The machine now, for an input of `input_bytes` (compressed bytes when `inflating`): busy
// cores are the smaller of the 1-minute load average and the processes runnable right now
// besides this one (/proc/loadavg): the average lags a minute behind a machine that just
// became quiet, the instant count jitters; taking the smaller trusts whichever says "free".
WorkerBudget current_worker_budget(size_t input_bytes, size_t chunk_bytes, bool inflating);

// Worker threads for IngestOptions::threads: none for 1 (the caller parses), as asked for
// N > 1; for 0 (automatic), one per free core (cores minus busy cores, minus the inflater's)
// but never fewer than two where the process may use two cores and the input has two
// chunks, at most one per chunk and at most 8. Other processes do not take a core away,
// they share it by time slices, and the reading thread parses queued chunks itself while it
// waits (ChunkWorkers::next_result), so a worker waiting for its slice delays one chunk, not
// the ingest: giving up parallelism at a load of 2.5 on two cores cost 1.2x wall time
// (docs/performance.md). The load only limits how many more than two are worth starting.
size_t ingest_worker_threads(size_t requested, const WorkerBudget& budget);

}  // namespace attnprof::ingest
