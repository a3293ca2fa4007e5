// The median the fleet compares ranks by (their times, their deviations).
#pragma once

#include <algorithm>
#include <vector>

namespace attnprof::fleet {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace attnprof::fleet
