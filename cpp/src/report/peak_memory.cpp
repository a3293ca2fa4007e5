// The one definition of peak memory during attention (peak_memory.h).
#include "attnprof/peak_memory.h"

#include <algorithm>

namespace attnprof {

int64_t call_peak_bytes(const Call& call) {
  return call.cost && call.cost->peak_bytes_during >= 0 ? call.cost->peak_bytes_during : -1;
}

int64_t layer_peak_bytes(const Layer& layer) {
  return layer.cost && layer.cost->peak_bytes >= 0 ? layer.cost->peak_bytes : -1;
}

int64_t report_peak_bytes(const Report& report) {
  int64_t peak = -1;
  for (const Layer& l : report.layers) peak = std::max(peak, layer_peak_bytes(l));
  for (const Call& c : report.calls) peak = std::max(peak, call_peak_bytes(c));
  return peak;
}

}  // namespace attnprof
