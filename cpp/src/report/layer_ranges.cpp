#include "diff/layer_ranges.h"

#include <algorithm>

namespace attnprof {

std::string format_layer_ranges(std::vector<int64_t> layers) {
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  const bool unattributed = !layers.empty() && layers.front() < 0;
  if (unattributed) layers.erase(layers.begin());
  std::string ranges;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!ranges.empty()) ranges += ", ";
    ranges += std::to_string(layers[i]);
    if (j > i) ranges += "-" + std::to_string(layers[j]);
    i = j + 1;
  }
  std::string out;
  if (!layers.empty()) out = (layers.size() == 1 ? "layer " : "layers ") + ranges;
  if (unattributed) out += out.empty() ? "unattributed" : ", unattributed";
  return out;
}

}  // namespace attnprof
