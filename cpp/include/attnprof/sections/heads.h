// Head utilisation and sparsity statistics. Filled by cpp/src/heads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnprof {

struct HeadStats {
  int64_t layer = 0;
  int64_t head = 0;
  double entropy = 0;           // normalised by log(#keys)
  double max_weight = 0;        // mean over queries of max_j alpha_ij
  double sink_mass = 0;         // mass on the first sink tokens
  double output_share = -1;     // share of the layer's output norm, -1 when V/W_O unknown
  std::vector<std::pair<int64_t, double>> window_mass;  // w -> mass within the local window
  double block_coverage_90 = 0; // fraction of blocks holding 90% of the mass
  double block_coverage_95 = 0;
  double sink_window_recall = 0;
  std::string kind;             // "local", "streaming", "global", "block_sparse", "dense", "dormant"
};

struct HeadsSection {
  int64_t block_size = 64;
  int64_t sink_tokens = 4;
  bool weights_look_trained = true;
  std::string sampling_note;    // query-row sampling and its error, "" when exact
  std::vector<HeadStats> heads;
  std::vector<std::string> notes;
};

}  // namespace attnprof
