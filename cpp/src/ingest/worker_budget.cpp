#include "ingest/worker_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attnprof::ingest {

WorkerBudget current_worker_budget(size_t input_bytes, size_t chunk_bytes, bool inflating) {
  WorkerBudget budget;
  budget.cores = usable_cores();
  budget.chunks = inflating ? SIZE_MAX : std::max<size_t>(1, (input_bytes + chunk_bytes - 1) / std::max<size_t>(chunk_bytes, 1));
  return budget;
}

namespace {
constexpr size_t kMaxWorkers = 8;
constexpr double kIdleWorthAWorker = 0.5;  // cores
// The reading thread parses too: a worker for each other core and each other chunk.
size_t most_workers(const WorkerBudget& budget) {
  const size_t parsing_threads = std::min({budget.cores, budget.chunks, kMaxWorkers + 1});
  return parsing_threads > 0 ? parsing_threads - 1 : 0;
}
}  // namespace

bool may_parse_in_parallel(size_t requested, const WorkerBudget& budget) {
  return requested == 0 && most_workers(budget) >= 1;
}

size_t ingest_worker_threads(size_t requested, const WorkerBudget& budget) {
  if (requested > 0) return requested - 1;
  if (!may_parse_in_parallel(requested, budget) || budget.idle_cores < kIdleWorthAWorker) return 0;
  const auto idle = static_cast<size_t>(std::floor(budget.idle_cores + 0.5));
  return std::clamp<size_t>(idle, 1, most_workers(budget));
}

size_t most_chunks_in_flight(size_t workers) { return 2 * workers + 2; }

}  // namespace attnprof::ingest
