// y = c0 + c1*S + c2*S^2 by non-negative least squares (docs/cost.md, "Scaling fits").
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "attnprof/scaling.h"

namespace attnprof {
namespace {

// A term's share of y at the largest measured S from which the fit calls the growth by it.
constexpr double kGrowthShare = 0.25;

// Gauss-Jordan elimination with partial pivoting of the n x (n + 1) augmented system `a`,
// leaving it diagonal; false when it is singular.
bool gauss_jordan(double (&a)[3][4], int n) {
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-12) return false;
    for (int c = 0; c <= n; ++c) std::swap(a[col][c], a[pivot][c]);
    for (int r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int c = col; c <= n; ++c) a[r][c] -= f * a[col][c];
    }
  }
  return true;
}

// Solves the normal equations of the terms in `mask` (bit k = S^k) on S scaled to [0, 1].
// Returns false when the system is singular.
bool solve_subset(std::span<const double> s, std::span<const double> y, unsigned mask,
                  std::array<double, 3>& coef) {
  std::array<int, 3> terms{};
  int n = 0;
  for (int k = 0; k < 3; ++k)
    if (mask & (1u << k)) terms[static_cast<size_t>(n++)] = k;
  double a[3][4] = {};
  for (size_t i = 0; i < s.size(); ++i) {
    double basis[3];
    for (int r = 0; r < n; ++r) basis[r] = std::pow(s[i], terms[static_cast<size_t>(r)]);
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) a[r][c] += basis[r] * basis[c];
      a[r][n] += basis[r] * y[i];
    }
  }
  if (!gauss_jordan(a, n)) return false;
  coef = {0, 0, 0};
  for (int r = 0; r < n; ++r) coef[static_cast<size_t>(terms[static_cast<size_t>(r)])] = a[r][n] / a[r][r];
  return true;
}

std::string growth_class(const FitTerm& fit, double largest) {
  const double y = evaluate_fit(fit, largest);
  if (y <= 0) return "constant";
  if (fit.c2 * largest * largest / y >= kGrowthShare) return "quadratic";
  if (fit.c1 * largest / y >= kGrowthShare) return "linear";
  return "constant";
}

// NNLS over three terms: the optimum is the least-squares fit of some subset of terms whose
// coefficients are all >= 0; try every subset and keep the feasible one with least error.
std::array<double, 3> nonnegative_fit(std::span<const double> scaled, std::span<const double> values) {
  double best_sse = std::numeric_limits<double>::infinity();
  std::array<double, 3> best{0, 0, 0};
  for (unsigned mask = 1; mask < 8; ++mask) {
    if (static_cast<size_t>(std::popcount(mask)) > scaled.size()) continue;
    std::array<double, 3> coef{};
    if (!solve_subset(scaled, values, mask, coef)) continue;
    if (coef[0] < 0 || coef[1] < 0 || coef[2] < 0) continue;
    double sse = 0;
    for (size_t i = 0; i < scaled.size(); ++i) {
      const double r = values[i] - (coef[0] + coef[1] * scaled[i] + coef[2] * scaled[i] * scaled[i]);
      sse += r * r;
    }
    if (sse < best_sse * (1 - 1e-12)) {
      best_sse = sse;
      best = coef;
    }
  }
  return best;
}

}  // namespace

double evaluate_fit(const FitTerm& fit, double length) {
  return fit.c0 + fit.c1 * length + fit.c2 * length * length;
}

namespace {

// The fit's residuals and relative RMS error over the points; returns the largest length.
double add_residuals(std::span<const double> lengths, std::span<const double> values, FitTerm& fit) {
  double mean = 0, sq = 0, largest = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const double r = values[i] - evaluate_fit(fit, lengths[i]);
    fit.residuals.push_back(r);
    mean += values[i];
    sq += r * r;
    largest = std::max(largest, lengths[i]);
  }
  const double n = static_cast<double>(lengths.size());
  mean /= n;
  fit.rel_rms_error = mean != 0 ? std::sqrt(sq / n) / std::abs(mean) : 0;
  return largest;
}

}  // namespace

FitTerm fit_growth(std::span<const double> lengths, std::span<const double> values) {
  FitTerm fit;
  if (lengths.empty() || lengths.size() != values.size()) return fit;
  double scale = 0;
  for (double s : lengths) scale = std::max(scale, std::abs(s));
  if (scale == 0) scale = 1;
  std::vector<double> scaled;
  for (double s : lengths) scaled.push_back(s / scale);

  const std::array<double, 3> best = nonnegative_fit(scaled, values);
  fit.c0 = best[0];
  fit.c1 = best[1] / scale;
  fit.c2 = best[2] / (scale * scale);

  const double largest = add_residuals(lengths, values, fit);
  fit.growth = growth_class(fit, largest);
  if (fit.c2 > 0) {
    // c2*S^2 = c1*S + c0  ->  S = (c1 + sqrt(c1^2 + 4*c2*c0)) / (2*c2)
    const double s = (fit.c1 + std::sqrt(fit.c1 * fit.c1 + 4 * fit.c2 * fit.c0)) / (2 * fit.c2);
    fit.quadratic_dominates_from = static_cast<int64_t>(std::ceil(s));
  }
  return fit;
}

int64_t largest_length_within(const FitTerm& fit, double baseline_bytes, double budget_bytes) {
  const double room = budget_bytes - baseline_bytes - fit.c0;
  double s = 0;
  if (fit.c2 > 0) {
    s = (-fit.c1 + std::sqrt(fit.c1 * fit.c1 + 4 * fit.c2 * std::max(0.0, room))) / (2 * fit.c2);
  } else if (fit.c1 > 0) {
    s = std::max(0.0, room) / fit.c1;
  } else {
    return -1;
  }
  if (room < 0) return 0;
  return static_cast<int64_t>(std::floor(s));
}

}  // namespace attnprof
