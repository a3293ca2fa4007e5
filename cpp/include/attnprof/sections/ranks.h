// Multi-rank comparison: one Report over many per-rank traces (a directory on local cores, or
// a fleet on Ray). Filled by cpp/src/fleet from one compact RankSummary per rank.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnprof {

// A backend the rules rejected for a layer's first call, with the first rule that failed.
struct RankRejection {
  std::string backend;  // backend::*
  std::string rule;     // the failed rule's id ("flash.attn_mask")
  std::string message;  // its text, with the failing value where the rules give one
};

// One layer of one rank: its time, and the facts ranks are compared on (the layer's first call).
struct RankLayer {
  int64_t index = 0;
  double time_us = 0;
  std::string backend;  // backend with the most device time in the layer
  std::string kernel;   // main kernel: the template name where the kernel spells one, else its name
  std::string shape;    // shape_text without the dtype: "B4 H32/8 S2048x2048 D128"
  std::string mask;     // mask kind, with its pattern where known ("bool padding", "causal_flag")
  std::string dtype;
  std::string phase;    // "prefill", "decode", "mixed", ""
  std::vector<RankRejection> rejections;
};

// A process group the rank belongs to, from its trace's distributedInfo.pg_config.
struct RankGroupRef {
  std::string name;  // pg_name ("0", "3")
  std::string desc;  // pg_desc ("default_pg", "tp", "dp", "pp", "undefined")
  int64_t size = 0;
};

struct RankSummary {
  int64_t rank = 0;
  std::string file;
  // Failed ranks: the one-line error that stopped the analysis; every other field is empty.
  std::string error;
  int64_t trace_rank = -1;  // distributedInfo.rank, -1 when the trace has none
  int64_t world_size = -1;
  std::string stage;        // profiling stage from the file name ("prefill", "decode", "")
  std::string host;         // host the worker name of the file spells, "" when it spells none
  std::string device;       // device name from deviceProperties
  std::string report_html;  // its own dashboard where the fleet wrote one (--out-dir), else ""
  double attention_device_time_us = 0;
  bool attention_time_unknown = false;  // some call's device time is unknown (graph replay)
  double fused_time_fraction = 0;
  double step_time_us = 0;              // median step duration, 0 when the trace marks no step
  double attention_share = 0;           // attention time / busy GPU time
  int64_t call_count = 0;
  std::vector<std::pair<std::string, double>> backend_time_us;  // backend mix, largest first
  std::vector<std::string> libraries;
  std::vector<std::string> shapes;      // distinct shapes, first-seen order
  std::vector<double> layer_time_us;    // per layer index
  std::vector<RankLayer> layers;        // layers with calls, by index
  std::vector<RankGroupRef> groups;
};

// A rank (overall, layer -1) or a rank's layer beyond the straggler threshold over the median.
struct Straggler {
  int64_t rank = 0;
  int64_t layer = -1;
  double time_us = 0;
  double median_us = 0;
  double over_median = 0;      // time / median
  int64_t worst_layer = -1;    // overall stragglers: the layer furthest above its median
};

// A rank whose layer differs from what most ranks ran there.
struct Disagreement {
  int64_t layer = 0;
  std::string facet;           // "backend", "kernel", "shape", "mask", "dtype"
  std::string majority;        // the value most ranks have
  int64_t majority_ranks = 0;  // how many ranks have it
  int64_t rank = 0;
  std::string value;           // what this rank has
  std::string cause;           // why, from the rules and the facets that differ ("" when unknown)
};

// A process group across the fleet, with its slowest member.
struct RankGroup {
  std::string name;
  std::string desc;
  std::vector<int64_t> ranks;  // members whose traces were analysed
  int64_t slowest_rank = -1;
  double slowest_over_median = 0;
};

struct RanksSection {
  std::vector<RankSummary> ranks;   // analysed ranks, by rank
  std::vector<RankSummary> failed;  // ranks that could not be analysed: file and error
  int64_t slowest_rank = -1;
  double slowest_over_median = 0;   // slowest attention time / median across ranks
  double median_attention_us = 0;
  std::vector<double> layer_median_us;  // per layer index: median over ranks of known time (a missing layer is 0)
  double straggler_threshold = 0;   // the over-median ratio beyond which a rank straggles
  std::vector<Straggler> stragglers;        // overall (layer -1) first, then per layer; worst first
  std::vector<Disagreement> disagreements;  // by layer, facet, rank
  std::vector<RankGroup> groups;
};

}  // namespace attnprof
