// Allocation sizes fitted across sequence lengths, sequences synthesised at any length and
// the search for the first length that runs out of memory (docs/cost.md, "OOM threshold").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnprof/memory_sim.h"

namespace attnprof {
namespace {

constexpr double kExactTolerance = 512;             // the allocator's rounding granularity
constexpr int64_t kLongestLength = int64_t{1} << 24;  // search ceiling (16M tokens)

bool same_shape(const AllocationSequence& a, const AllocationSequence& b) {
  if (a.steps.size() != b.steps.size() || a.carried.size() != b.carried.size()) return false;
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const AllocationStep &x = a.steps[i], &y = b.steps[i];
    if (x.is_free() != y.is_free() || x.frees != y.frees || x.op != y.op || x.pool != y.pool) return false;
  }
  return true;
}

bool reproduces(const SizePolynomial& p, std::span<const double> s, std::span<const double> y) {
  for (size_t i = 0; i < s.size(); ++i)
    if (std::abs(p.c0 + p.c1 * s[i] + p.c2 * s[i] * s[i] - y[i]) > kExactTolerance) return false;
  return true;
}

// Least squares of y on {1, S, S^2} truncated to `terms` terms (S scaled for conditioning).
SizePolynomial least_squares(std::span<const double> s, std::span<const double> y, int terms) {
  double scale = 1;
  for (double v : s) scale = std::max(scale, v);
  long double a[3][4] = {};
  for (size_t i = 0; i < s.size(); ++i) {
    const long double x = s[i] / scale;
    const long double basis[3] = {1, x, x * x};
    for (int r = 0; r < terms; ++r) {
      for (int c = 0; c < terms; ++c) a[r][c] += basis[r] * basis[c];
      a[r][terms] += basis[r] * y[i];
    }
  }
  for (int col = 0; col < terms; ++col) {
    int pivot = col;
    for (int r = col + 1; r < terms; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    for (int c = 0; c <= terms; ++c) std::swap(a[col][c], a[pivot][c]);
    if (std::fabs(a[col][col]) < 1e-18L) return {};
    for (int r = 0; r < terms; ++r) {
      if (r == col) continue;
      const long double f = a[r][col] / a[col][col];
      for (int c = col; c <= terms; ++c) a[r][c] -= f * a[col][c];
    }
  }
  long double coef[3] = {0, 0, 0};
  for (int r = 0; r < terms; ++r) coef[r] = a[r][terms] / a[r][r];
  SizePolynomial p;
  p.c0 = static_cast<double>(coef[0]);
  p.c1 = static_cast<double>(coef[1] / scale);
  p.c2 = static_cast<double>(coef[2] / (static_cast<long double>(scale) * scale));
  return p;
}

// The lowest degree that reproduces every size (constant, linear, quadratic), else the
// quadratic least-squares fit marked inexact. With two lengths a line always passes through
// both, so a size that grows exactly as S^2 between them (an attention score tensor: B*H*S*S)
// is taken as c2*S^2 first: a line through two points of it is wrong at every other length.
SizePolynomial fit_sizes(std::span<const double> s, std::span<const double> y) {
  const int max_terms = static_cast<int>(std::min<size_t>(3, s.size()));
  SizePolynomial p;
  for (int terms = 1; terms <= max_terms; ++terms) {
    if (terms == 2 && max_terms == 2) {
      SizePolynomial square;
      square.c2 = y.back() / (s.back() * s.back());
      if (reproduces(square, s, y)) return square;
    }
    p = least_squares(s, y, terms);
    if (reproduces(p, s, y)) return p;
  }
  p.exact = false;
  return p;
}

SizePolynomial fit_values(std::span<const AllocationSequence* const> seqs, std::span<const double> s,
                          const auto& value_of) {
  std::vector<double> y;
  for (const AllocationSequence* seq : seqs) y.push_back(static_cast<double>(value_of(*seq)));
  return fit_sizes(s, y);
}

FailingAllocation failing_at(const SequenceModel& model, int64_t length, const PassSimulation& sim,
                             const AllocationSequence& seq) {
  FailingAllocation f;
  f.length = length;
  f.reserved_bytes = sim.reserved_at_failure;
  f.allocated_bytes = sim.allocated_at_failure;
  if (sim.failed_step >= 0) {
    const auto i = static_cast<size_t>(sim.failed_step);
    f.op = model.shape.steps[i].op;
    f.layer = model.shape.steps[i].layer;
    f.bytes = seq.steps[i].bytes;
  } else {
    f.op = "(weights and inputs)";
    f.bytes = seq.opaque_bytes;
  }
  return f;
}

int64_t recorded_peak_reserved(const AllocationSequence& seq) {
  int64_t peak = 0;
  for (const auto& step : seq.steps) peak = std::max(peak, step.recorded_reserved);
  return peak;
}

bool overlaps(const FreeRegion& a, const FreeRegion& b) {
  return a.addr < b.addr + static_cast<uint64_t>(b.bytes) && b.addr < a.addr + static_cast<uint64_t>(a.bytes);
}

// Free regions of the shortest run that lie at the same addresses in every other fitted run:
// in runs of one process, the free space inside segments that outlive every length (the
// weights'), so S-independent; runs of different processes share none.
std::vector<FreeRegion> regions_at_every_length(std::span<const AllocationSequence* const> used) {
  std::vector<FreeRegion> common;
  for (const FreeRegion& r : used.front()->free_regions)
    if (std::all_of(used.begin() + 1, used.end(), [&](const AllocationSequence* seq) {
          return std::any_of(seq->free_regions.begin(), seq->free_regions.end(),
                             [&](const FreeRegion& o) { return overlaps(r, o); });
        }))
      common.push_back(r);
  return common;
}

struct HeldFree {
  int64_t bytes = 0;
  std::vector<FreeRegion> regions;
};

// The free cache that empty_cache() cannot release (free space inside the weights' segments,
// left by model init) is the same at every length; what the recordings also hold are the
// segments the passes after empty_cache() created, which depend on S. So: the regions the
// addresses show at every length, plus the one further amount that, seeded with them before
// warm-up passes, best reproduces every recorded peak Total Reserved (least sum of absolute
// differences over a grid from 0 to the smallest free cache a recording began with).
HeldFree fit_held_free(std::span<const AllocationSequence* const> used) {
  constexpr int64_t kGranule = 2 * 1024 * 1024;
  constexpr int64_t kGridPoints = 128;
  int64_t ceiling = std::numeric_limits<int64_t>::max();
  for (const auto* seq : used) {
    if (seq->initial_reserved <= 0) return {};
    int64_t held = seq->opaque_bytes;
    for (int64_t c : seq->carried) held += c;
    ceiling = std::min(ceiling, seq->initial_reserved - held);
  }
  if (ceiling <= 0) return {};
  HeldFree best{.regions = regions_at_every_length(used)};
  int64_t in_regions = 0;
  for (const FreeRegion& r : best.regions) in_regions += allocator_segment_size(allocator_round_size({}, r.bytes));
  const int64_t step = std::max(kGranule, ceiling / kGridPoints / kGranule * kGranule);
  SimulationOptions warm;
  warm.warmup_passes = 2;
  double best_error = std::numeric_limits<double>::infinity();
  for (int64_t held_free = in_regions; held_free <= std::max(ceiling, in_regions); held_free += step) {
    double error = 0;
    for (const auto* seq : used) {
      AllocationSequence seeded = *seq;
      seeded.held_free = held_free;
      seeded.free_regions = best.regions;
      seeded.untouched_cache_unusable = seeded.small_pool_grew = false;
      seeded.private_small_pool_grew.assign(seeded.private_small_pool_grew.size(), false);
      const PassSimulation sim = simulate_pass(seeded, warm);
      error += std::abs(static_cast<double>(sim.peak_reserved - recorded_peak_reserved(*seq)));
    }
    if (error < best_error) best_error = error, best.bytes = held_free;
  }
  return best;
}

}  // namespace

int64_t SizePolynomial::at(int64_t length) const {
  const double s = static_cast<double>(length);
  return static_cast<int64_t>(std::llround(std::max(0.0, c0 + c1 * s + c2 * s * s)));
}

Result<SequenceModel> fit_allocation_sequences(std::span<const AllocationSequence> sequences) {
  if (sequences.empty()) return make_error(ErrorCode::kUnsupported, "no allocation sequence to fit");
  const AllocationSequence* longest = &sequences.front();
  for (const auto& seq : sequences)
    if (seq.length > longest->length) longest = &seq;
  std::vector<const AllocationSequence*> used;
  for (const auto& seq : sequences)
    if (same_shape(seq, *longest) &&
        std::none_of(used.begin(), used.end(), [&](const auto* u) { return u->length == seq.length; }))
      used.push_back(&seq);
  std::sort(used.begin(), used.end(), [](const auto* a, const auto* b) { return a->length < b->length; });
  if (used.size() < 2)
    return make_error(ErrorCode::kUnsupported,
                      fmt::format("the allocation sequences of the traces do not match step by step (same op, same "
                                  "frees) at two or more lengths; {} matches only itself",
                                  longest->file));
  SequenceModel model;
  model.shape = *longest;
  std::vector<double> s;
  for (const auto* seq : used) {
    s.push_back(static_cast<double>(seq->length));
    model.lengths.push_back(seq->length);
  }
  model.opaque = fit_values(used, s, [](const AllocationSequence& q) { return q.opaque_bytes; });
  for (size_t k = 0; k < longest->carried.size(); ++k)
    model.carried.push_back(fit_values(used, s, [k](const AllocationSequence& q) { return q.carried[k]; }));
  int64_t allocations = 0, exact = 0;
  for (size_t i = 0; i < longest->steps.size(); ++i) {
    if (longest->steps[i].is_free()) {
      model.steps.emplace_back();
      continue;
    }
    model.steps.push_back(fit_values(used, s, [i](const AllocationSequence& q) { return q.steps[i].bytes; }));
    ++allocations;
    exact += model.steps.back().exact ? 1 : 0;
  }
  model.exact_share = allocations > 0 ? static_cast<double>(exact) / static_cast<double>(allocations) : 1;
  HeldFree held = fit_held_free(used);
  model.held_free = held.bytes;
  model.held_free_regions = std::move(held.regions);
  return model;
}

AllocationSequence synthesize_sequence(const SequenceModel& model, int64_t length) {
  AllocationSequence seq;
  seq.file = fmt::format("synthesised at S={}", length);
  seq.length = length;
  seq.opaque_bytes = model.opaque.at(length);
  seq.held_free = model.held_free;
  seq.free_regions = model.held_free_regions;
  seq.private_small_pool_grew.assign(model.shape.private_small_pool_grew.size(), false);
  for (const auto& p : model.carried) seq.carried.push_back(std::max<int64_t>(1, p.at(length)));
  seq.steps.reserve(model.shape.steps.size());
  for (size_t i = 0; i < model.shape.steps.size(); ++i) {
    AllocationStep step;
    step.frees = model.shape.steps[i].frees;
    step.pool = model.shape.steps[i].pool;
    if (!model.shape.steps[i].is_free()) step.bytes = std::max<int64_t>(1, model.steps[i].at(length));
    seq.steps.push_back(step);
  }
  return seq;
}

OomSearch search_first_oom(const SequenceModel& model, const SimulationOptions& options) {
  OomSearch search;
  const auto fits = [&](int64_t length) { return simulate_pass(synthesize_sequence(model, length), options).fits; };
  int64_t good = 0, bad = std::max<int64_t>(1, model.lengths.back());
  while (bad <= kLongestLength && fits(bad)) {
    good = bad;
    bad *= 2;
  }
  if (bad > kLongestLength) return search;  // no OOM within the ceiling
  while (bad - good > 1) {
    const int64_t mid = good + (bad - good) / 2;
    (fits(mid) ? good : bad) = mid;
  }
  search.tokens = good;
  const AllocationSequence seq = synthesize_sequence(model, bad);
  search.failing = failing_at(model, bad, simulate_pass(seq, options), seq);
  return search;
}

}  // namespace attnprof
