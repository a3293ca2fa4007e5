// Attention extraction: Trace (+ TraceIndex) -> attention Calls, Layers and the Summary.
//
// Facts live in two tables, each in one place:
//   - the kernel catalog (cpp/src/attention/kernel_catalog.cpp): kernel-name pattern ->
//     kind, backend, library, vendor, fused?, with an explicit priority when several match;
//   - the op catalog (cpp/src/attention/op_catalog.cpp): attention op name -> backend,
//     direction, role in the call, and where its arguments sit.
// docs/backends.md lists both and explains how each backend is recognised.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/report.h"
#include "attnprof/trace.h"
#include "attnprof/trace_index.h"

namespace attnprof {

// ---- kernel catalog ------------------------------------------------------------------

enum class KernelKind : uint8_t {
  kFusedAttention,  // one kernel computes softmax(QK^T)V (or its backward, or a part of it)
  kGemm,            // matmul/bmm kernels (cuBLAS, cuBLASLt nvjet, CUTLASS, rocBLAS/hipBLASLt)
  kSoftmax,
  kDropout,
  kMaskBuild,       // triu/tril
  kElementwise,     // scale, mask add, casts
  kOther,
};
const char* kernel_kind_name(KernelKind kind);

enum class MatchKind : uint8_t { kContains, kPrefix, kExact };

struct KernelPattern {
  std::string_view pattern;
  MatchKind match;
  int priority;                // the highest-priority matching entry wins
  KernelKind kind;
  std::string_view backend;    // backend::* for fused attention kernels, "" otherwise
  std::string_view library;    // "pytorch_flash", "cudnn", "aotriton", "cublas", ...
  std::string_view vendor;     // "nvidia", "amd", "any"
  std::string_view direction;  // "forward", "backward", "" when either
  bool auxiliary;              // a helper kernel of a fused call (split-KV combine, dQ convert)
};

std::span<const KernelPattern> kernel_catalog();
// The part of a kernel name patterns are matched against: no "void ", no parameter list.
std::string_view kernel_function_name(std::string_view kernel_name);
// nullptr when no entry matches.
const KernelPattern* classify_kernel(std::string_view kernel_name);

// ---- op catalog ----------------------------------------------------------------------

enum class OpRole : uint8_t {
  kEntry,         // public entry point (aten::scaled_dot_product_attention)
  kBackend,       // the dispatched backend op (aten::_scaled_dot_product_cudnn_attention)
  kImpl,          // the op below it (aten::_cudnn_attention_forward)
  kAutogradNode,  // ScaledDotProductCudnnAttentionBackward0 (carries the Sequence number)
  kExternal,      // a library's own attention op (vllm::unified_attention, flash_attn::...)
};

enum class TensorLayout : uint8_t {
  kBHSD,
  kBSHD,
  kTHD,    // varlen: q [tokens, Hq, D], k/v [tokens, Hkv, D], sequences packed one after another
  kPaged,  // q [tokens, Hq, D], k/v a paged cache [blocks, (block_size,) Hkv, D]
  kBSE,    // [B, S, embed] with the head count an argument (aten::_native_multi_head_attention)
};

struct AttentionOp {
  std::string_view name;
  MatchKind match;
  OpRole role;
  std::string_view backend;    // "" when the op does not decide it (the entry point)
  std::string_view direction;  // "forward" / "backward"
  bool fused;                  // whether the backend computes attention in fused kernels
  TensorLayout layout;
  // Positions of the arguments in "Input Dims"/"Concrete Inputs"; -1 when absent.
  int8_t query, key, value, mask, dropout, causal, scale, gqa;
  // Varlen/paged calls: a [B+1] offsets tensor (cu_seqlens_q, kv_indptr) whose length gives
  // the batch, and the longest query/key sequence (max_seqlen_q/k scalars).
  int8_t offsets = -1, max_seqlen_q = -1, max_seqlen_k = -1;
  int8_t heads = -1;  // a head-count scalar (kBSE layout)
  // The library the op itself belongs to, for calls whose kernels did not run or are not in
  // the kernel catalog (graph captures); "" when only the kernel can tell.
  std::string_view library = "";
};

std::span<const AttentionOp> attention_op_catalog();
const AttentionOp* classify_attention_op(std::string_view op_name);

// ---- torch.compile ranges -------------------------------------------------------------

// A range torch.compile records while it traces and compiles a frame or a graph
// ("entire_frame_compile", "_compile.compile_inner", "compile_fx_inner", each also with a
// " (dynamo_timed)" suffix). Ops inside run on fake tensors: attention ops there are not calls.
bool is_compile_phase(std::string_view range_name);
// A range that runs compiled code: "Torch-Compiled Region: 0/1" (the frame, guards included)
// or "## Call CompiledFxGraph <hash> ##" (one Inductor graph).
bool is_compiled_graph_run(std::string_view range_name);
bool is_compiled_fx_graph_call(std::string_view range_name);

// ---- extraction ----------------------------------------------------------------------

// Component of a kernel in an unfused call, from the ATen op that launched it.
std::string_view component_of_op(std::string_view op_name);

// "c10::BFloat16" or "bfloat16" -> "bf16", "float" or "float32" -> "fp32", ... ; "" for unknown types.
std::string dtype_name(std::string_view torch_type);

// Every attention call of the trace, in CPU start order, with kernels, shapes, flags,
// FLOPs; layer/step/pairing are filled by attribute_layers.
std::vector<Call> extract_attention_calls(const Trace& trace, const TraceIndex& index);

// Sorts the call's kernels, sums its device time (the CPU time of its ops on a trace without
// GPU activity), derives the decode/cross/gqa flags, FLOPs and TFLOP/s.
void finish_call(Call& call, bool trace_has_gpu);

// Sorts calls by CPU start and sets each id to its index (attribute_layers pairs by id).
void number_calls_in_start_order(std::vector<Call>& calls);

// A call's reference to one GPU activity slice (kernel, memcpy, memset) of the trace.
KernelRef kernel_ref_of(const Trace& trace, const Slice& gpu_slice, std::string component);

// FLOPs of one call: 4*B*Hq*Sq*Skv*D, halved for causal self-attention (Sq == Skv),
// x2.5 for backward. Packed (varlen/paged) calls: 4*Hq*D*tokens*Skv with Skv the longest
// key sequence, an upper bound unless the batch is one sequence (see
// flops_are_upper_bound). 0 when a dimension is unknown.
double attention_flops(const Call& call);
// Whether attention_flops is a ceiling: a packed call of several sequences whose lengths
// the trace gives only as a maximum.
bool flops_are_upper_bound(const Call& call);

// Fills step, layer, module order, phase and forward/backward pairs (see docs/report-schema.md).
void attribute_layers(const Trace& trace, const TraceIndex& index, std::vector<Call>& calls);

// One Layer per layer index, in order.
std::vector<Layer> build_layers(const std::vector<Call>& calls);

// The layer's first call, or nullptr when the layer names no valid call (a Report read back
// from JSON may be inconsistent).
const Call* first_call_of(const std::vector<Call>& calls, const Layer& layer);

// Fused shares, attention time and its share of all GPU time.
Summary summarize_attention(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls);

// Core findings: unfused calls first (ranked by time), then informational ones.
std::vector<Finding> core_findings(const Report& report);

}  // namespace attnprof
