#include "attnprof/layer_ranges.h"

#include <fmt/format.h>

#include <algorithm>

namespace attnprof {

std::string format_layer_ranges(std::vector<int64_t> layers) { return format_index_ranges(std::move(layers), "layer", "layers"); }

std::string format_index_ranges(std::vector<int64_t> layers, std::string_view one, std::string_view many) {
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  const bool unattributed = !layers.empty() && layers.front() < 0;
  if (unattributed) layers.erase(layers.begin());
  std::vector<std::string> runs;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    runs.push_back(i == j ? fmt::format("{}", layers[i]) : fmt::format("{}-{}", layers[i], layers[j]));
    i = j + 1;
  }
  if (unattributed) runs.emplace_back("unattributed");
  if (layers.empty()) return unattributed ? "unattributed" : "";
  return fmt::format("{} {}", layers.size() == 1 ? one : many, fmt::join(runs, ", "));
}

}  // namespace attnprof
