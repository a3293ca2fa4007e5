// Live capture (python/attnprof) -> Report. The Python side intercepts every attention call
// inside the user's process and writes a sidecar JSON next to the trace (format in
// docs/capture-sidecar.md); this stage reads it and merges it into the Report built from the
// trace: module paths, layer names, PyTorch's own backend choice and the exact arguments.
//
// Calls are matched by time: the capture wraps each intercepted call in a record_function
// range named kCallAnnotationPrefix + id, and each non-torch module in a range named
// kModuleAnnotationPrefix + path; both land in the trace as user_annotation slices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/sidecar_name.h"
#include "attnprof/trace.h"
#include "attnprof/trace_index.h"

namespace attnprof {

inline constexpr int kSidecarFormatVersion = 1;
inline constexpr std::string_view kCallAnnotationPrefix = "attnprof.call#";
inline constexpr std::string_view kModuleAnnotationPrefix = "attnprof.module ";

struct CapturedTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
  std::string dtype;  // torch spelling: "float32", "bfloat16", ...
  bool requires_grad = false;
};

struct CapturedCall {
  int64_t id = 0;              // the N of "attnprof.call#N"
  std::string module;          // nn.Module path ("model.layers.0.self_attn"), "" when none
  std::string module_class;    // "LlamaAttention"
  std::string interface;       // "F.scaled_dot_product_attention", "transformers.sdpa", ...
  std::string device;          // "cpu", "cuda", ...
  int64_t step = 0;            // profiler step when the call ran
  std::string phase;           // "", "prefill", "decode"
  CapturedTensor query, key, value;
  MaskInfo mask;
  bool is_causal = false;
  double dropout_p = 0;
  std::optional<double> scale;  // None in Python = 1/sqrt(D)
  bool enable_gqa = false;
  bool grad_enabled = false;
  std::string pytorch_choice;  // SDPBackend name from torch._fused_sdp_choice, "" when no SDPA
};

struct CaptureSidecar {
  int format_version = kSidecarFormatVersion;
  std::string torch_version;
  std::string transformers_version;
  std::vector<CapturedCall> calls;
  std::vector<std::string> warnings;  // hook errors the capture caught (run went on)
};

// Where the sidecar of a trace lives: the trace path + kSidecarSuffix.
std::string sidecar_path_for(const std::string& trace_path);

Result<CaptureSidecar> parse_sidecar(std::string_view json_text, const std::string& label);
Result<CaptureSidecar> load_sidecar(const std::string& path);

// The backend vocabulary (backend::*) for a torch SDPBackend name on a device;
// "" for ERROR / unknown names.
std::string backend_of_sdp_choice(std::string_view choice, std::string_view device);

struct MergeStats {
  int64_t matched_calls = 0;         // report calls that got a captured record
  int64_t module_only_calls = 0;     // calls named only by an enclosing module range
  int64_t unmatched_captured = 0;    // captured calls seen in the trace without a report call
};

// What the live capture says about the run beside what it writes into the calls.
struct CaptureSection {
  MergeStats stats;
  std::vector<std::pair<std::string, std::string>> versions;  // the sidecar's torch, transformers ("" left out)
  std::vector<std::string> missing;  // for SourceInfo::missing: calls it could not attach, its own warnings
};

// Merges the sidecar into the calls (and layer names) extracted from `trace` (same run):
// module paths, PyTorch's own choice, the exact arguments.
CaptureSection merge_capture(std::vector<Call>& calls, std::vector<Layer>& layers, const Trace& trace,
                             const CaptureSidecar& sidecar);

// The sidecar of a trace: `explicit_path` (an error when it is missing or bad), or the file
// beside the trace (sidecar_path_for; nullopt when there is none).
struct LoadedSidecar {
  std::string path;
  CaptureSidecar sidecar;
};
Result<std::optional<LoadedSidecar>> find_sidecar(const Trace& trace, const std::string& explicit_path);

// Captured calls whose work ran in a torch.compile'd graph and that the trace alone shows no
// attention op or kernel for (Inductor's FlexAttention on CPU): one Call per
// "attnprof.call#" range that holds a compiled-graph run ("## Call CompiledFxGraph",
// "Torch-Compiled Region") and none of `calls`, timed by that run, arguments and backend from
// the record. Appends them and renumbers all calls in CPU start order (call before
// attribute_layers, which pairs calls by id). Returns how many were added.
int64_t add_compiled_graph_calls(std::vector<Call>& calls, const Trace& trace, const TraceIndex& index,
                                 const CaptureSidecar& sidecar);

}  // namespace attnprof
