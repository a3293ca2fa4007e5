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
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnprof/kernel_names.h"  // kernel_function_name: what the catalog matches
#include "attnprof/report.h"
#include "attnprof/trace.h"
#include "attnprof/trace_index.h"

namespace attnprof {

// Entries a user's file adds to both catalogs (--kernels FILE; defined below the op catalog).
struct CatalogExtension;

// ---- kernel catalog ------------------------------------------------------------------

enum class KernelKind : uint8_t {
  kFusedAttention,  // one kernel computes softmax(QK^T)V (or its backward, or a part of it)
  kGemm,            // matmul/bmm kernels (cuBLAS, cuBLASLt nvjet, CUTLASS, rocBLAS/hipBLASLt)
  kSoftmax,
  kDropout,
  kMaskBuild,       // triu/tril
  kElementwise,     // scale, mask add, casts
  kKvCacheWrite,    // writes K/V into a (paged) cache next to attention: not attention itself
  kRotaryEmbedding, // RoPE applied to Q/K before attention: not attention itself
  // Scheduler / metadata / plan work of attention libraries (FA3 scheduler metadata, FlashInfer
  // plan and KV-index building): not attention, never a call; its time is the call's overhead.
  kAttentionOverhead,
  kOther,
};
const char* kernel_kind_name(KernelKind kind);

enum class MatchKind : uint8_t { kContains, kPrefix, kExact };

// Where a fused-attention kernel sits in its call: the main kernel computes attention; a
// kBefore kernel runs ahead of it (SageAttention's Q/K quantisation), a kAfter kernel behind
// it (split-KV reduce/combine, dQ conversion). Calls built from kernels alone group them.
enum class KernelPart : uint8_t { kMain, kBefore, kAfter };

// Entries below this priority are catch-alls ("cutlass", "gemm", "elementwise_kernel"): a name
// they match that carries attention vocabulary is an unrecognised attention-like kernel.
inline constexpr int kFallbackPriority = 10;

struct KernelPattern {
  std::string_view pattern;
  MatchKind match;
  int priority;                // the highest-priority matching entry wins
  KernelKind kind;
  std::string_view backend;    // backend::* for fused attention kernels, "" otherwise
  std::string_view library;    // "pytorch_flash", "cudnn", "aotriton", "cublas", ...
  std::string_view vendor;     // "nvidia", "amd", "any"
  std::string_view direction;  // "forward", "backward", "" when either
  KernelPart part;             // main kernel, or a helper that runs before / after it
  // "decode" / "prefill" for kernels made for one serving phase (paged decode, batch prefill),
  // "" otherwise: the phase of a call without shapes (graph replays).
  std::string_view phase = "";
  bool auxiliary() const { return part != KernelPart::kMain; }
};

std::span<const KernelPattern> kernel_catalog();

// Visible for testing: while it lives, `extra` rows join the kernel catalog (a made-up
// backend's kernels in a test). Create it before analysing, never while another thread
// classifies kernels.
class ScopedKernelRows {
 public:
  explicit ScopedKernelRows(std::span<const KernelPattern> extra);
  ~ScopedKernelRows();
  ScopedKernelRows(const ScopedKernelRows&) = delete;
  ScopedKernelRows& operator=(const ScopedKernelRows&) = delete;

 private:
  std::span<const KernelPattern> previous_;
};
// The best catalog entry; an attention-like name (has_attention_vocabulary) that no entry
// above kFallbackPriority matches gets unrecognised_attention_kernel(). nullptr when neither.
// `extension`: the user's entries join the contest (CatalogExtension says how they rank).
const KernelPattern* classify_kernel(std::string_view kernel_name, const CatalogExtension* extension = nullptr);

// What the kernel's template arguments or generated name spell (KernelTemplate, report.h):
// nullopt for names of no family that spells anything (docs/backends.md).
std::optional<KernelTemplate> read_kernel_template(std::string_view kernel_name,
                                                   const CatalogExtension* extension = nullptr);
// From the call's main fused kernel: call.kernel_template, and the head dim, dtype (and, for a
// kernel without an op, causal) where the trace recorded none.
// `known`: what earlier calls' kernel names gave (a trace repeats a few names over many calls).
struct KernelTemplateEntry {
  bool main = false;                    // the name is a main kernel (KernelPart::kMain)
  std::optional<KernelTemplate> facts;  // read_kernel_template of it
};
using KernelTemplates = std::unordered_map<std::string, KernelTemplateEntry>;
void apply_kernel_template(Call& call, KernelTemplates* known = nullptr, const CatalogExtension* extension = nullptr);

// True when a word of the name is attention vocabulary (attn, attention, fmha, mha, flash,
// paged, sdpa, mla, sage, ...). Words are split at non-alphanumerics, lower->upper case
// changes and letter/digit changes ("BatchMLAPagedAttention" -> Batch MLA Paged Attention),
// so "flashlight" or "normalize" carry none.
bool has_attention_vocabulary(std::string_view name);

// The entry given to attention-like kernels the catalog does not know: fused attention,
// backend external, library "unknown".
const KernelPattern& unrecognised_attention_kernel();
bool is_unrecognised(const KernelPattern* p);

// The GPU vendor the trace's kernel names imply ("nvidia", "amd"), from the catalog's vendor
// of each distinct kernel name and the vendor types in it ("__hip_bfloat16", "__nv_bfloat16");
// "" when they do not say or disagree.
std::string gpu_vendor_of_kernels(const Trace& trace, const TraceIndex& index);

// An op name with attention vocabulary that neither the op catalog nor the kernel catalog
// knows ("aiter::some_new_attention_fwd"; not "_C_cache_ops::reshape_and_cache_flash", a
// known KV-cache write).
bool is_unrecognised_attention_op(std::string_view op_name, const CatalogExtension* extension = nullptr);

// The attention-like kernel and op names of the trace the catalogs do not know, with how
// often they ran and their device time (ops: the time of the GPU work they launched), so a
// user can see and report them. One check per distinct name.
std::vector<UnrecognisedName> unrecognised_attention_names(const Trace& trace, const TraceIndex& index,
                                                           const CatalogExtension* extension = nullptr);

// ---- op catalog ----------------------------------------------------------------------

enum class OpRole : uint8_t {
  kEntry,         // public entry point (aten::scaled_dot_product_attention)
  kBackend,       // the dispatched backend op (aten::_scaled_dot_product_cudnn_attention)
  kImpl,          // the op below it (aten::_cudnn_attention_forward)
  kAutogradNode,  // ScaledDotProductCudnnAttentionBackward0 (carries the Sequence number)
  kExternal,      // a library's own attention op (vllm::unified_attention, flash_attn::...)
  // A whole layer's op (nn.TransformerEncoderLayer's fast path: attention, then the FFN):
  // the call is the attention op recorded below it, else the layer op itself.
  kLayer,
  // An op that is attention only where no other finder took it (aten::_masked_softmax of a
  // fast path whose matmuls were not recorded): counted after the eager matcher ran.
  kStandalone,
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
  // Paged decode ops (vLLM paged_attention): a [B] seq_lens tensor, whose length is the batch,
  // and a [B, max_blocks] block table: max_blocks x block_size bounds the longest key sequence.
  int8_t seq_lens = -1, block_table = -1;
};

std::span<const AttentionOp> attention_op_catalog();
const AttentionOp* classify_attention_op(std::string_view op_name, const CatalogExtension* extension = nullptr);

// ---- catalog extension (catalog_extension.cpp; docs/cost.md, "Kernels and ops of your own") --

// Kernel and op entries read from a user's file, so a custom kernel gets a name, a backend and
// a cost without a release. Precedence is explicit: a user kernel entry carries a priority
// (kUserKernelPriority unless the file says otherwise) and wins over a built-in entry of the
// same or a lower priority; a user op entry that matches wins over every built-in op (the
// longest matching user name first). Among user entries of one priority the first in the file
// wins. The entries view names the extension owns; copies share them.
inline constexpr int kUserKernelPriority = 100;  // above every built-in entry (the highest is 60)
struct CatalogExtension {
  std::string file;
  std::vector<KernelPattern> kernels;
  std::vector<AttentionOp> ops;
  std::shared_ptr<const std::deque<std::string>> names;  // what the entries' string_views point into
};

// ---- what the analyses read of a trace (trace_reads.cpp) ----------------------------

// Whether some analysis reads the recorded inputs of ops named `op_name`: the op catalog's
// attention ops, the ATen ops of eager attention whose operands or arguments the eager
// matcher reads, and the mask-building ops (vocabulary.h) window effectiveness reads.
bool op_inputs_read(std::string_view op_name);

// All the analyses read of a trace beyond each slice's own fields, for ingest
// (IngestOptions::reads): a Trace loaded with it holds nothing they do not read. An analysis
// that starts reading more says so in trace_reads.cpp.
TraceReads analysis_reads();

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
std::vector<Call> extract_attention_calls(const Trace& trace, const TraceIndex& index,
                                          const CatalogExtension* extension = nullptr);

// Sorts the call's kernels, sums its device time (the CPU time of its ops on a trace without
// GPU activity), derives the decode/cross/gqa flags, FLOPs and TFLOP/s.
void finish_call(Call& call, bool trace_has_gpu, KernelTemplates* templates = nullptr,
                 const CatalogExtension* extension = nullptr);

// The shape facts a call lacks ("B", "Hq", "Sq", "Skv", "D", "dtype"): the trace did not
// record them, so no rule verdict, FLOP count or gain is derived from them.
std::vector<std::string> missing_shape_facts(const Call& call);

// Sorts calls by CPU start and sets each id to its index (attribute_layers pairs by id).
void number_calls_in_start_order(std::vector<Call>& calls);

// A call's reference to one GPU activity slice (kernel, memcpy, memset) of the trace.
KernelRef kernel_ref_of(const Trace& trace, const Slice& gpu_slice, std::string component);

// ---- FLOPs of a call (call_flops.cpp, docs/cost.md "FLOPs") -----------------------------

// Where a causal mask's diagonal sits when Sq != Skv: top-left (row i sees keys 0..i; PyTorch
// SDPA) or bottom-right (row i sees keys 0..i + Skv - Sq; FlashAttention >= 2.1, serving kernels).
enum class CausalAlignment { kNone, kTopLeft, kBottomRight };
std::string_view causal_alignment_name(CausalAlignment alignment);
CausalAlignment causal_alignment_of(const Call& call);
// (q, k) pairs a causal mask of that alignment (kNone: no mask) and a sliding window of
// `window` keys (0 = none) leave in one sequence of sq queries and sk keys.
double unmasked_pairs(int64_t sq, int64_t sk, CausalAlignment alignment, int64_t window);
// Pairs a fused kernel computes when it skips only whole tile_m x tile_n tiles that are masked.
double tile_pairs(int64_t sq, int64_t sk, CausalAlignment alignment, int64_t window, int64_t tile_m, int64_t tile_n);
// True for backends that build the Sq x Skv matrix in memory (eager, math).
bool materialises_scores(std::string_view backend);
// 2.5 for a fused backward (recomputes P), 2.0 for an unfused one (reads the stored P).
double backward_flops_factor(const Call& call);

struct CallFlops {
  double useful = 0, executed = 0;  // 0 when a dimension is unknown
  std::string granularity;          // of executed: "full", "tile", "element", "block"
  CausalAlignment alignment = CausalAlignment::kNone;
  bool upper_bound = false;
  std::string bound_reason;
};
CallFlops count_call_flops(const Call& call);
// count_call_flops(call).useful.
double attention_flops(const Call& call);
// Sets the call's FLOP counts, TFLOP/s and unknown shape facts from its shape and times.
void refresh_call_flops(Call& call);

// ---- steps, layers, phases (engine_steps.cpp, layer_attribution.cpp) -------------------

// Gives the calls of a pure prefill step whose engine annotation records its lengths (vLLM's
// execute_context_N(T_sum)) those lengths, and recounts their FLOPs: one request gives its
// sq and sk exactly; several give B, the tokens and sum sq*sk (a bound when causal).
void apply_step_lengths(const std::vector<Step>& steps, std::vector<Call>& calls);

// vLLM's step annotation "execute_context_<N>(<tokens>[_<sum sq*sk>])_generation_<M>(<tokens>)":
// prefill (context) and decode (generation) requests and tokens; false for other names.
bool read_engine_step_annotation(std::string_view name, int64_t& prefill_requests, int64_t& prefill_tokens,
                                 double& sum_sq_sk, int64_t& decode_requests, int64_t& decode_tokens);
// A Python frame of an engine's per-step function ("vllm/v1/worker/gpu_model_runner.py(2140):
// execute_model", SGLang's forward_batch_generation, forward_decode, ...): ingest keeps these.
bool is_engine_step_frame(std::string_view python_frame_name);

// Fills step, layer, module order, phase and forward/backward pairs (see docs/report-schema.md)
// and returns the steps: one per forward of the model or the engine, layers being positions
// among a step's forward calls. Step times and shares are filled by summarize_steps.
std::vector<Step> attribute_layers(const Trace& trace, const TraceIndex& index, std::vector<Call>& calls);

// Each step's GPU time (the union of the GPU work launched within it), attention and overhead
// time and share.
void summarize_steps(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls,
                     std::vector<Step>& steps);

// Per phase of the run: calls, steps, time, share, TFLOP/s, backends and kernels.
std::vector<PhaseSummary> summarize_phases(const std::vector<Call>& calls, const std::vector<Step>& steps);

// Findings about the story of the run: steps whose forward calls differ in number (how layers
// were then assigned), tensor parallelism.
std::vector<Finding> step_findings(const Report& report);

// Tensor parallelism the trace shows: collectives (NCCL/RCCL kernels or c10d ops) between the
// attention calls of one step; the world size from distributedInfo. Fills source.tensor_parallel.
void detect_tensor_parallel(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls,
                            SourceInfo& source);

// One Layer per layer index, in order.
std::vector<Layer> build_layers(const std::vector<Call>& calls);

// Fused shares, attention time and its share of all GPU time.
Summary summarize_attention(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls);

// Core findings: unfused calls first (ranked by time), then informational ones.
// `candidates`: attention_candidates' finding, reported instead of "no attention found".
std::vector<Finding> core_findings(const Report& report, std::optional<Finding> candidates = std::nullopt);

// When no call was recognised: what in the trace still resembles attention (a softmax between
// two matrix products, attention vocabulary in op, kernel or module names) and why each was not
// taken, as an info finding (finding::kAttentionCandidates); nullopt when nothing does, or
// when `calls` is not empty (cpp/src/attention/attention_candidates.cpp).
std::optional<Finding> attention_candidates(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls);

}  // namespace attnprof
