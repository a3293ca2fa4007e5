// The Report: the one versioned document every analysis fills and every renderer reads.
// Schema documented in docs/report-schema.md; bump kReportSchemaVersion on any change that
// removes or renames a field (adding an optional field is a minor bump).
//
// Sections that belong to later features are optional members whose types live in their
// own headers (report_sections.h); a renderer shows a section only when it is present.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/hw.h"
#include "attnprof/report_sections.h"
#include "attnprof/vocabulary.h"

namespace attnprof {

inline constexpr const char* kReportSchemaVersion = "1.8";

// Backends are kept as strings in the document; their spellings (backend::k*) and facts are
// the vocabulary's (vocabulary.h).

// Call components (component::k*) are the vocabulary's too.

// An optional section of a Call, held on the heap. The calls are extracted (with the trace's
// index beside them, the peak of a large trace's analysis) before any of their sections is
// filled, and std::optional would hold each section's full size in every call: 360 of its
// 1,056 bytes, ~37 MiB over the 108 k calls of the 20 GB bench trace. Reads like
// std::optional; a copy copies the section.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}                                              // NOLINT
  Boxed(const T& value) : value_(std::make_unique<T>(value)) {}         // NOLINT
  Boxed(T&& value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  Boxed(std::optional<T>&& value) {                                     // NOLINT
    if (value) value_ = std::make_unique<T>(std::move(*value));
  }
  Boxed(const Boxed& other) : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) value_ = other.value_ ? std::make_unique<T>(*other.value_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  T& value() {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  const T& value() const {
    if (!value_) throw std::bad_optional_access();
    return *value_;
  }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

struct KernelRef {
  std::string name;
  std::string component;  // one of component::*
  int64_t ts_ns = 0;      // start on the device clock of the trace
  double device_time_us = 0;
  int64_t stream = -1;
  int64_t correlation = -1;
};

struct Shape {
  // 0 is "unknown" (the trace did not record it), never a size: the JSON writes null for it
  // and no rule, fix, FLOP count or gain is derived from it (missing_shape_facts).
  // Packed (varlen/paged) calls: Sq and Skv are the longest query/key sequence.
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, D = 0, Dv = 0;
  std::string dtype;  // "bf16", "fp16", "fp32", "fp8_e4m3", ... ("" when unknown)
  int64_t tokens = 0;            // packed calls: query tokens of all sequences, 0 otherwise
  std::vector<int64_t> kv_cache; // paged calls: the K cache's dims [blocks, (block_size,) Hkv, D]
  bool skv_ceiling = false;      // Skv is a ceiling, not a length (block table x block size)
  // Per-sequence query and key lengths where something recorded them (engine annotation,
  // capture); else their sum of sq*sk over B sequences when only that is known (0 unknown).
  std::vector<int64_t> seqlens_q, seqlens_k;
  double sum_sq_sk = 0;
  std::string lengths_from;      // "annotation", "capture", "" (the op's dims only)
};

struct MaskInfo {
  bool present = false;
  std::string kind;         // "none", "bool", "float", "causal_flag", "block_mask", "unknown"
  std::vector<int64_t> dims;  // shape of the mask tensor when known
  // From the live capture only (a trace records a mask's shape, not its values):
  int64_t window = 0;              // causal sliding window: keys the last query row sees, 0 = none/unknown
  double block_sparsity = -1;      // BlockMask: share of (query block, key block) pairs skipped, -1 unknown
  std::vector<int64_t> block_size; // BlockMask: [query block, key block] in tokens
  std::string pattern;             // what the mask rows hold: "causal", "padding", "sliding_window",
                                   // "block", "bias", "full", "arbitrary"; "" when not read
};

// What a templated kernel name spells (cpp/src/attention/kernel_template.cpp): the library's
// own name for the kernel and the facts its template arguments fix. Read into the call where
// the trace recorded no Input Dims.
struct KernelTemplate {
  std::string name;            // "flash::FlashAttnFwdSm90", "ck_tile::FmhaFwdKernel"
  std::string library;         // the catalog library of the kernel it was read from
  int64_t head_dim = 0;        // 0 = the name does not say
  int64_t head_dim_v = 0;
  int64_t tile_m = 0, tile_n = 0;  // query x key tile (block) sizes
  std::string dtype;           // "bf16", "fp16", "fp8_e4m3", ... ("" when not spelled)
  // -1 unknown, 0 false, 1 true; `local`: the kernel applies a sliding (local) window whose
  // size the name does not spell
  int8_t causal = -1, split_kv = -1, paged = -1, varlen = -1, local = -1;
};

struct Call {
  int64_t id = 0;            // index in Report::calls
  int64_t layer = -1;        // attention layer index (execution order within a step)
  std::string module;        // nn.Module path ("model.layers.3.self_attn") or ""
  int64_t step = 0;          // profiler step / forward pass index
  std::string phase;         // "", "prefill", "decode", "mixed" (see docs/report-schema.md)
  bool phase_inferred = false;  // phase read from kernels or shapes, not from an annotation or token counts
  std::string direction;     // "forward" or "backward"
  // A forward run again inside the backward (activation checkpointing): not a layer of its
  // own; its pair_id is the layer's first forward, and its backward pairs with that forward.
  bool recompute = false;
  int64_t pair_id = -1;      // forward <-> backward partner call id, -1 when none
  int64_t sequence_number = -1;  // autograd "Sequence number" of the top op (pairs fwd/bwd)
  std::string backend;       // backend::*
  std::string library;       // pytorch_flash, aotriton, cutlass_fmha, cudnn, flash_attn_3, ...
  bool fused = false;
  std::string op;            // top attention op name (aten::scaled_dot_product_attention, ...)
  std::string backend_op;    // the dispatched op (aten::_scaled_dot_product_cudnn_attention)
  int64_t cpu_ts_ns = 0;     // start of the top op on the CPU
  int64_t cpu_dur_ns = 0;
  std::vector<KernelRef> kernels;
  double device_time_us = 0;  // sum of kernels' durations
  // The call's attention kernels were not recorded (ops traced while a CUDA/HIP graph was
  // being captured, or the library ran them where the profiler did not see them): its
  // device time and whether it was fused are unknown, not 0 and not "unfused".
  bool device_time_unknown = false;
  Shape shape;
  MaskInfo mask;
  bool causal = false;
  double dropout = 0;
  bool gqa = false;
  bool cross = false;        // Sq != Skv and not decode
  bool decode = false;       // Sq == 1
  double scale = 0;          // softmax scale when known, else 0
  // FLOPs (docs/cost.md, "FLOPs"): useful = 2*Hq*(D+Dv) per unmasked (q, k) pair; executed =
  // what the kernel computed (the whole matrix on materialising paths, whole tiles of a fused
  // causal kernel). Backward: x2.5 fused (P recomputed), x2.0 unfused (P stored).
  double flops_useful = 0;
  double flops_executed = 0;
  double flops = 0;                // = flops_useful (kept for one minor version)
  std::string flops_granularity;   // executed count: "full", "tile", "element", "block", "" unknown
  std::string causal_alignment;    // "top_left", "bottom_right", "" (not causal)
  bool flops_upper_bound = false;  // both counts are ceilings; flops_bound_reason says why
  std::string flops_bound_reason;
  double tflops = 0;               // flops_useful / device time
  double tflops_executed = 0;      // flops_executed / device time
  // device_time_us split: the attention kernels alone (the fused kernel, or QK^T, scale, mask,
  // softmax, dropout, PV of an unfused call) and the rest (mask conversion, fills, copies).
  double kernel_time_us = 0;
  double other_time_us = 0;
  double kernel_tflops = 0;        // flops_useful / kernel_time_us
  std::string source = "trace";  // "trace", or "trace+capture" when merged with a sidecar
  std::string device = "gpu";    // "gpu", or "cpu": its work ran on the CPU (device_time_us = CPU time)
  // Attention overhead the call needs but that is not attention (scheduler metadata, KV-index
  // building, KV-cache writes): its kernels' time, not part of device_time_us.
  double overhead_time_us = 0;
  // Shape facts the trace did not record ("Sq", "Skv", "D", ...): what a verdict would need.
  std::vector<std::string> unknown;
  Boxed<KernelTemplate> kernel_template;  // what the main kernel's template spells, when it does

  // Filled by later stages (see report_sections.h).
  Boxed<Explanation> explanation;  // rules: why this backend, what would be faster
  Boxed<CaptureInfo> capture;      // live capture: PyTorch's own choice, exact args
  Boxed<CallCost> cost;            // roofline + memory during the call
};

// A layer's calls and time in one phase of the run ("prefill", "decode", "mixed", "").
struct LayerPhase {
  std::string phase;
  int64_t calls = 0;
  double device_time_us = 0;
};

struct Layer {
  int64_t index = 0;
  std::string module;
  std::vector<std::string> backends;  // distinct backends seen, in first-seen order
  std::vector<int64_t> call_ids;
  double fused_time_fraction = 0;
  double device_time_us = 0;
  bool device_time_unknown = false;  // every call of the layer has unknown device time
  double recompute_time_us = 0;      // of its recompute calls (activation checkpointing), in device_time_us
  std::vector<LayerPhase> phases;    // per phase, when the run has more than one
  std::optional<LayerCost> cost;
};

// One forward of the model or of the serving engine (docs/report-schema.md, "Steps").
struct Step {
  int64_t index = 0;
  std::string marker;       // what marks it: "ProfilerStep#3", "execute_context_1(888_788544)_generation_0(0)", ...
  std::string marker_kind;  // "profiler_step", "engine", "annotation", "graph_replay", "period", "trace"
  int64_t ts_ns = 0, dur_ns = 0;  // CPU span
  int64_t call_count = 0;
  int64_t first_call_id = -1;
  double attention_device_time_us = 0;
  double overhead_time_us = 0;     // attention overhead kernels (scheduler, KV-index, KV-cache writes)
  double gpu_time_us = 0;          // busy GPU time of the step's kernels
  double attention_share = 0;      // attention_device_time_us / gpu_time_us
  std::string phase;               // "prefill", "decode", "mixed", "" unknown
  bool phase_inferred = false;
  // From the engine's annotation where it records them; -1 = not recorded.
  int64_t prefill_requests = -1, prefill_tokens = -1, decode_requests = -1, decode_tokens = -1;
  double sum_sq_sk = -1;           // sum over prefill sequences of query x key length
  std::string tokens_from;         // "annotation", "input_dims" (the attention op's query), "" not recorded
};

// Calls, time and speed of one phase over the run (summary.phases).
struct PhaseSummary {
  std::string phase;
  int64_t calls = 0;
  int64_t steps = 0;
  double device_time_us = 0;
  double share = 0;            // of all attention device time
  double tflops = 0;           // flops / device time of the calls with both known
  std::vector<std::string> backends;
  std::vector<std::string> kernels;  // the libraries' own kernel names
  bool inferred = false;       // some call's phase was inferred
};

struct Finding {
  std::string severity;  // "high", "medium", "low", "info"
  std::string title;     // one line
  std::string detail;    // how it was reached and what to do
  std::string rule;      // id of the rule/analyzer that produced it ("" for core)
  std::vector<int64_t> layers;
  double expected_gain = 0;  // e.g. 3.5 for "~3.5x faster", 0 when not estimated
  // What the finding is about, shared by analyzers that see the same problem from different
  // sides ("unfused:math"): one finding per cause and layer set, "" when none other shares it.
  std::string cause;
};

struct Summary {
  int64_t call_count = 0;
  int64_t fused_call_count = 0;
  double fused_time_fraction = 0;
  double fused_call_fraction = 0;
  double attention_device_time_us = 0;
  double gpu_time_us = 0;        // union of all kernel/memcpy/memset time on all devices
  double attention_share = 0;    // attention_device_time_us / gpu_time_us
  bool has_gpu = false;          // false for CPU-only traces (device time = CPU op time)
  int64_t unknown_time_call_count = 0;  // calls whose device time is unknown (not in the times above)
  double overhead_time_us = 0;          // attention overhead kernels, not in the times above
  int64_t recompute_call_count = 0;     // forwards run again in the backward (in the times above)
  double recompute_time_us = 0;
  std::vector<PhaseSummary> phases;     // per phase, when the run has more than one or any is known
  // Spread of time, TFLOP/s and bandwidth per (backend, library, shape, direction, phase),
  // most total time first (cpp/src/analysis/shape_spread.cpp).
  std::vector<ShapeGroup> shape_groups;
};

// An attention-like kernel or op name no catalog entry knows (docs/backends.md): shown so
// the user sees it and can report it; its kernels are calls with library "unknown".
struct UnrecognisedName {
  std::string name;
  std::string kind;  // "kernel" or "op"
  int64_t count = 0;
  double device_time_us = 0;  // kernels: their time; ops: the GPU time of what they launched
};

struct SourceInfo {
  std::vector<std::string> files;
  std::string device_name;       // from deviceProperties, else the GPU table model it was identified as
  std::string arch;              // "sm90", "gfx942", "cpu"
  std::string device_vendor;     // "nvidia", "amd", "" when unknown or CPU only
  // How the device was identified ("deviceProperties name", "deviceProperties: warpSize 64,
  // 304 CUs, 192 GiB = MI300X"), or, for a GPU not in the table, the fields seen.
  std::string device_identified_by;
  int64_t device_memory_bytes = 0;
  std::vector<std::pair<std::string, std::string>> versions;  // torch, cuda, cudnn, ... as known
  std::vector<std::string> assumptions;  // what attnprof assumed because the trace lacked it
  std::vector<std::string> missing;      // data absent from the trace and what it weakens
  std::optional<CodeInfo> code;          // git commit of the profiled project, config hash
  // Tensor parallelism the trace shows (NCCL collectives around the layers, distributedInfo):
  // head counts are then per rank. 0 = none seen, else the world size when known (1 = seen, size unknown).
  int64_t tensor_parallel = 0;
  std::string tensor_parallel_evidence;
  int64_t event_count = 0;
  // The ceilings the roofline and bound verdicts use: the GPU table's datasheet peaks, or a
  // user's measured ones (--gpu-spec FILE) where given.
  std::optional<MeasuredPeaks> measured_peaks;
};

struct Report {
  std::string schema_version = kReportSchemaVersion;
  std::string tool_version;
  SourceInfo source;
  std::vector<Step> steps;
  std::vector<Call> calls;
  std::vector<Layer> layers;
  Summary summary;
  std::vector<Finding> findings;

  // Optional sections added by later features.
  std::optional<ScalingSection> scaling;   // attnprof scale / sweep
  std::optional<AdviceSection> advice;     // backend advice from forced-backend runs
  std::optional<HeadsSection> heads;       // head utilisation and sparsity
  std::optional<RanksSection> ranks;       // multi-rank comparison
  std::optional<WhatIfSection> whatif;     // attnprof whatif: full vs sliding-window attention
  std::optional<std::vector<UnrecognisedName>> unrecognised;  // attention-like names no catalog knows
  std::optional<VerificationSection> verification;  // attnprof.verify: fixes measured on the user's model
  std::optional<DiffSection> diff;         // attnprof diff's verdicts; a later run's comparison with the first
};

}  // namespace attnprof
