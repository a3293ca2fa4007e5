// "layers 0-3, 6": how every finding, explanation and diff names a set of layers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof {

// Sorted, deduplicated, consecutive runs collapsed: {0,1,2,3,6} -> "layers 0-3, 6";
// {2} -> "layer 2"; layer -1 (calls no layer was attributed to) -> "unattributed".
std::string format_layer_ranges(std::vector<int64_t> layers);
// The same for other indices: format_index_ranges({1, 2}, "step", "steps") -> "steps 1-2".
std::string format_index_ranges(std::vector<int64_t> indices, std::string_view one, std::string_view many);

}  // namespace attnprof
