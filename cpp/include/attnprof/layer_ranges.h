// "layers 0-3, 6": how every finding, explanation and diff names a set of layers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof {

// Sorted, deduplicated, consecutive runs collapsed: {0,1,2,3,6} -> "layers 0-3, 6";
// {2} -> "layer 2"; layer -1 (calls no layer was attributed to) -> "unattributed".
std::string format_layer_ranges(std::vector<int64_t> layers);

}  // namespace attnprof
