// The words every stage shares, each defined once as a constexpr table: attention backends
// (Report spelling, SDPBackend member, class), tensor dtypes (Report, trace and torch spellings,
// size, PyTorch's printed name, whether the rules reason about it), mask kinds and patterns,
// directions and phases, call components and the ATen ops' roles in eager attention, ingest
// issue kinds, finding ids and the file name of a forced-backend trace. Every former copy is a
// lookup into these tables (Python reads them through attnprof._core; a test fails on a second
// spelling); adding a backend is one row here plus its kernel catalog rows
// (docs/architecture.md).
#pragma once

#include <array>
#include <utility>
#include <span>
#include <string_view>

namespace attnprof {

// Report spellings of the backends (Call::backend, Layer::backends, rules' backend_name).
namespace backend {
inline constexpr const char* kFlash = "flash";
inline constexpr const char* kEfficient = "efficient";
inline constexpr const char* kCudnn = "cudnn";
inline constexpr const char* kMath = "math";
inline constexpr const char* kCpuFlash = "cpu_flash";
inline constexpr const char* kFlex = "flex";
inline constexpr const char* kEager = "eager";
inline constexpr const char* kExternal = "external";
inline constexpr const char* kFa2 = "fa2";
inline constexpr const char* kFa3 = "fa3";
inline constexpr const char* kXformers = "xformers";
}  // namespace backend

// What kind of work a backend does (docs/outputs.md, "Backend classes"): one fused kernel,
// SDPA's unfused math fallback, or the model's own matmul + softmax.
enum class BackendClass { kFused, kFallback, kEager };

// Its spelling in outputs (the dashboard's backend_class::k*, Python's BACKENDS[i]["kind"]).
constexpr std::string_view backend_class_name(BackendClass kind) {
  switch (kind) {
    case BackendClass::kFused: return "fused";
    case BackendClass::kFallback: return "fallback";
    case BackendClass::kEager: return "eager";
  }
  return "";
}

struct BackendWord {
  std::string_view name;         // backend::k*
  std::string_view sdp_backend;  // torch.nn.attention.SDPBackend member naming it ("" = none)
  std::string_view device;       // device the SDPBackend member means it on ("" = any, "cpu")
  BackendClass kind;
  // sdpa_kernel([SDPBackend.X]) forces it on a GPU: the backends a sweep forces and
  // `attnprof scale` advises pinning.
  bool pinnable;
};

// SDPBackend members: torch/nn/attention/__init__.py (FLASH_ATTENTION, EFFICIENT_ATTENTION,
// CUDNN_ATTENTION, MATH, OVERRIDEABLE); FLASH_ATTENTION on CPU is the CPU flash kernel.
inline constexpr std::array<BackendWord, 11> kBackendWords = {{
    {backend::kFlash, "FLASH_ATTENTION", "", BackendClass::kFused, true},
    {backend::kEfficient, "EFFICIENT_ATTENTION", "", BackendClass::kFused, true},
    {backend::kCudnn, "CUDNN_ATTENTION", "", BackendClass::kFused, true},
    {backend::kMath, "MATH", "", BackendClass::kFallback, true},
    {backend::kCpuFlash, "FLASH_ATTENTION", "cpu", BackendClass::kFused, false},
    {backend::kExternal, "OVERRIDEABLE", "", BackendClass::kFused, false},
    {backend::kFlex, "", "", BackendClass::kFused, false},
    {backend::kEager, "", "", BackendClass::kEager, false},
    {backend::kFa2, "", "", BackendClass::kFused, false},
    {backend::kFa3, "", "", BackendClass::kFused, false},
    {backend::kXformers, "", "", BackendClass::kFused, false},
}};

// The row of a Report backend spelling, from kBackendWords and then any rows a
// ScopedBackendWords added; nullptr when unknown.
const BackendWord* backend_word(std::string_view name);

// Visible for testing: while it lives, `extra` rows count as rows of kBackendWords for
// backend_word (a made-up backend in a test: one row, then every lookup knows it). Create it
// before analysing, never while another thread looks a backend up.
class ScopedBackendWords {
 public:
  explicit ScopedBackendWords(std::span<const BackendWord> extra);
  ~ScopedBackendWords();
  ScopedBackendWords(const ScopedBackendWords&) = delete;
  ScopedBackendWords& operator=(const ScopedBackendWords&) = delete;

 private:
  std::span<const BackendWord> previous_;
};

// The SDPBackend member of a backend ("" when SDPA cannot name it).
inline std::string_view sdp_backend_of(std::string_view backend_name) {
  const BackendWord* w = backend_word(backend_name);
  return w ? w->sdp_backend : std::string_view("");
}

// The backend an SDPBackend member means on `device` ("cpu", "cuda", ...); "" when unknown.
constexpr std::string_view backend_of_sdp_backend(std::string_view member, std::string_view device) {
  const BackendWord* any_device = nullptr;
  for (const BackendWord& w : kBackendWords) {
    if (member.empty() || w.sdp_backend != member) continue;
    if (w.device == device) return w.name;
    if (w.device.empty() && !any_device) any_device = &w;
  }
  return any_device ? any_device->name : std::string_view("");
}

struct DtypeWord {
  std::string_view name;                     // Report spelling (Shape::dtype)
  std::array<std::string_view, 2> kineto;    // the trace's "Input type" spellings
  std::array<std::string_view, 2> torch;     // torch dtype names (live capture)
  std::string_view type_meta;                // how PyTorch prints it in dtype messages
  int bytes;
  // The SDPA rules (cpp/src/rules) reason about it: what `attnprof explain --dtype` and
  // `attnprof matrix --dtypes` accept.
  bool rules;
  // attnprof.verify: the largest relative output difference (max |a-b| / max |a|) a fix may
  // cause and still count as giving the same results in this dtype: a few units of the
  // format's rounding (bf16 has 8 mantissa bits, fp16 11, fp32 24) after a model's worth of
  // reordered sums (docs/verify.md).
  double verify_tolerance;
};

// c10/core/ScalarType.h names; "fnuz" variants are the ROCm fp8 formats.
inline constexpr std::array<DtypeWord, 6> kDtypeWords = {{
    {"bf16", {"c10::BFloat16", ""}, {"bfloat16", ""}, "c10::BFloat16", 2, true, 3e-2},
    {"fp16", {"c10::Half", ""}, {"float16", ""}, "c10::Half", 2, true, 1e-2},
    {"fp32", {"float", ""}, {"float32", ""}, "float", 4, true, 1e-3},
    {"fp64", {"double", ""}, {"float64", ""}, "double", 8, true, 1e-9},
    {"fp8_e4m3", {"c10::Float8_e4m3fn", "c10::Float8_e4m3fnuz"}, {"float8_e4m3fn", "float8_e4m3fnuz"},
     "c10::Float8_e4m3fn", 1, true, 0.15},
    {"fp8_e5m2", {"c10::Float8_e5m2", "c10::Float8_e5m2fnuz"}, {"float8_e5m2", "float8_e5m2fnuz"},
     "c10::Float8_e5m2", 1, false, 0.3},
}};

// The row of a Report dtype spelling; nullptr when unknown.
constexpr const DtypeWord* dtype_word(std::string_view name) {
  for (const DtypeWord& w : kDtypeWords)
    if (w.name == name) return &w;
  return nullptr;
}

// The Report spelling of a Kineto or torch dtype spelling; "" when unknown.
constexpr std::string_view dtype_of_spelling(std::string_view spelling) {
  if (spelling.empty()) return "";
  for (const DtypeWord& w : kDtypeWords)
    for (const auto* list : {&w.kineto, &w.torch})
      for (std::string_view s : *list)
        if (s == spelling) return w.name;
  return "";
}

// What a call's mask argument is (MaskInfo::kind, the live capture's "kind", `attnprof explain
// --mask`): the rules reason about none, bool and float (rules::MaskKind).
namespace mask_kind {
inline constexpr const char* kNone = "none";
inline constexpr const char* kBool = "bool";           // bool tensor: True = attend
inline constexpr const char* kFloat = "float";         // additive float tensor
inline constexpr const char* kCausalFlag = "causal_flag";  // is_causal=True, no tensor
inline constexpr const char* kBlockMask = "block_mask";    // FlexAttention BlockMask
inline constexpr const char* kUnknown = "unknown";     // an object of any other type
}  // namespace mask_kind

// What a mask's rows hold (MaskInfo::pattern, HeadsWindow::mask_kind; docs/heads.md, mask
// kinds): read from its values by the live capture, or proven by the trace's mask-building ops.
namespace mask_pattern {
inline constexpr const char* kCausal = "causal";
inline constexpr const char* kPadding = "padding";
inline constexpr const char* kSlidingWindow = "sliding_window";
inline constexpr const char* kBlock = "block";
inline constexpr const char* kBias = "bias";
inline constexpr const char* kFull = "full";
inline constexpr const char* kArbitrary = "arbitrary";
inline constexpr const char* kUnknown = "unknown";  // neither the capture nor the trace says
}  // namespace mask_pattern

struct MaskWord {
  std::string_view name;   // mask_kind::k* or mask_pattern::k*
  std::string_view label;  // how outputs name it ("padding mask")
};

inline constexpr std::array<MaskWord, 6> kMaskKindWords = {{
    {mask_kind::kNone, "no mask"},
    {mask_kind::kBool, "bool mask tensor"},
    {mask_kind::kFloat, "additive float mask tensor"},
    {mask_kind::kCausalFlag, "is_causal=True without a mask tensor"},
    {mask_kind::kBlockMask, "FlexAttention BlockMask"},
    {mask_kind::kUnknown, "mask object of unknown type"},
}};

inline constexpr std::array<MaskWord, 8> kMaskPatternWords = {{
    {mask_pattern::kSlidingWindow, "sliding-window mask"},
    {mask_pattern::kPadding, "padding mask"},
    {mask_pattern::kCausal, "materialised causal mask"},
    {mask_pattern::kBlock, "block-diagonal (document) mask"},
    {mask_pattern::kArbitrary, "arbitrary mask"},
    {mask_pattern::kBias, "bias mask (additive scores: ALiBi, position bias)"},
    {mask_pattern::kFull, "mask that keeps every score"},
    {mask_pattern::kUnknown, "mask of unknown kind"},
}};

// The row of a mask pattern; nullptr when unknown.
constexpr const MaskWord* mask_pattern_word(std::string_view name) {
  for (const MaskWord& w : kMaskPatternWords)
    if (w.name == name) return &w;
  return nullptr;
}

// The trace's "Input type" of a bool tensor (a mask; c10 prints torch.bool as "bool").
inline constexpr std::string_view kKinetoBoolType = "bool";

// Which way a call runs (Call::direction, the kernel catalog's direction) and the serving phase
// of a call (Call::phase): a query of one token decodes, a longer one fills the cache.
namespace direction {
inline constexpr const char* kForward = "forward";
inline constexpr const char* kBackward = "backward";
}  // namespace direction

namespace phase {
inline constexpr const char* kPrefill = "prefill";
inline constexpr const char* kDecode = "decode";
inline constexpr const char* kMixed = "mixed";  // prefill and decode rows in one call
}  // namespace phase

inline constexpr std::array<std::string_view, 2> kDirections = {direction::kForward, direction::kBackward};
inline constexpr std::array<std::string_view, 3> kPhases = {phase::kPrefill, phase::kDecode, phase::kMixed};

// Component of an attention call a kernel belongs to (for eager/math calls several kernels
// make one call; a fused call has one "fused" component): Report spellings
// (KernelRef::component).
namespace component {
inline constexpr const char* kQK = "qk";            // Q @ K^T (bmm/matmul/gemm)
inline constexpr const char* kScale = "scale";      // mul/div by sqrt(d)
inline constexpr const char* kMask = "mask";        // add/masked_fill/where
inline constexpr const char* kSoftmax = "softmax";
inline constexpr const char* kDropout = "dropout";
inline constexpr const char* kAV = "av";            // P @ V
inline constexpr const char* kFused = "fused";      // one fused attention kernel
inline constexpr const char* kOther = "other";      // copies, casts, layout changes
// Attention overhead: scheduler metadata, KV-index building, KV-cache writes. Not attention,
// not in the call's device time (Call::overhead_time_us).
inline constexpr const char* kOverhead = "overhead";
// Work of a custom op that fuses more than attention (norms, RoPE, casts around the kernel):
// listed with the call, not in its device time.
inline constexpr const char* kNonAttention = "non_attention";
}  // namespace component

// Where an ATen op may sit in eager attention, Q @ K^T -> [scale] -> [mask] -> softmax ->
// [dropout] -> P @ V (cpp/src/attention/eager_pattern.cpp), as bits: one op can be a score op
// and a prob op (aten::mul scales the scores or applies a head mask).
enum AtenOpRole : unsigned {
  kRoleSoftmax = 1,  // the anchor
  kRoleMatmul = 2,   // Q @ K^T before the softmax, P @ V after it
  kRoleLayout = 4,   // only reshapes, casts or copies: allowed anywhere inside the pattern
  kRoleScore = 8,    // between Q @ K^T and the softmax: scaling, masking, soft-capping
  kRoleProb = 16,    // between the softmax and P @ V: dropout, head masks
};

struct AtenOpWord {
  std::string_view name;       // "aten::softmax"
  unsigned roles;              // AtenOpRole bits
  std::string_view component;  // component:: its kernels count as ("gemm": qk or av, the matcher knows which)
};

inline constexpr std::string_view kGemmComponent = "gemm";

// The ATen ops eager attention is made of, with their roles; any other op is component::kOther
// and ends the pattern. aten::bernoulli_ (dropout's sampling, under native_dropout) counts as
// dropout work but cannot stand between the softmax and P @ V by itself.
inline constexpr AtenOpWord kAtenOpWords[] = {
    {"aten::softmax", kRoleSoftmax, component::kSoftmax},
    {"aten::_softmax", kRoleSoftmax, component::kSoftmax},
    {"aten::_safe_softmax", kRoleSoftmax, component::kSoftmax},
    {"aten::special_softmax", kRoleSoftmax, component::kSoftmax},
    {"aten::_masked_softmax", kRoleSoftmax, component::kSoftmax},
    {"aten::matmul", kRoleMatmul, kGemmComponent},
    {"aten::bmm", kRoleMatmul, kGemmComponent},
    {"aten::baddbmm", kRoleMatmul, kGemmComponent},
    {"aten::einsum", kRoleMatmul, kGemmComponent},
    {"aten::mm", kRoleMatmul, kGemmComponent},
    {"aten::view", kRoleLayout, component::kOther},
    {"aten::reshape", kRoleLayout, component::kOther},
    {"aten::_unsafe_view", kRoleLayout, component::kOther},
    {"aten::transpose", kRoleLayout, component::kOther},
    {"aten::permute", kRoleLayout, component::kOther},
    {"aten::expand", kRoleLayout, component::kOther},
    {"aten::contiguous", kRoleLayout, component::kOther},
    {"aten::clone", kRoleLayout, component::kOther},
    {"aten::to", kRoleLayout, component::kOther},
    {"aten::_to_copy", kRoleLayout, component::kOther},
    {"aten::copy_", kRoleLayout, component::kOther},
    {"aten::type_as", kRoleLayout, component::kOther},
    {"aten::unsqueeze", kRoleLayout, component::kOther},
    {"aten::squeeze", kRoleLayout, component::kOther},
    {"aten::slice", kRoleLayout, component::kOther},
    {"aten::select", kRoleLayout, component::kOther},
    {"aten::as_strided", kRoleLayout, component::kOther},
    {"aten::detach", kRoleLayout, component::kOther},
    {"aten::empty", kRoleLayout, component::kOther},
    {"aten::empty_like", kRoleLayout, component::kOther},
    {"aten::lift_fresh", kRoleLayout, component::kOther},
    {"aten::mul", kRoleScore | kRoleProb, component::kScale},
    {"aten::mul_", kRoleScore, component::kScale},
    {"aten::div", kRoleScore, component::kScale},
    {"aten::div_", kRoleScore, component::kScale},
    {"aten::add", kRoleScore, component::kMask},
    {"aten::add_", kRoleScore, component::kMask},
    {"aten::sub", kRoleScore, component::kMask},
    {"aten::masked_fill", kRoleScore | kRoleProb, component::kMask},
    {"aten::masked_fill_", kRoleScore, component::kMask},
    {"aten::where", kRoleScore, component::kMask},
    {"aten::tril", kRoleScore, component::kMask},
    {"aten::triu", kRoleScore, component::kMask},
    {"aten::ones", kRoleScore, component::kMask},
    {"aten::zeros", kRoleScore, component::kMask},
    {"aten::full", kRoleScore, component::kMask},
    {"aten::scalar_tensor", kRoleScore, component::kMask},
    {"aten::fill_", kRoleScore, component::kMask},
    {"aten::tanh", kRoleScore, component::kOther},  // soft-capping (Gemma 2)
    {"aten::bitwise_not", kRoleScore, component::kOther},
    {"aten::logical_not", kRoleScore, component::kOther},
    {"aten::__and__", kRoleScore, component::kOther},
    {"aten::dropout", kRoleProb, component::kDropout},
    {"aten::native_dropout", kRoleProb, component::kDropout},
    {"aten::feature_dropout", kRoleProb, component::kDropout},
    {"aten::bernoulli_", 0, component::kDropout},
};

// The row of an ATen op name; nullptr when it has no role in eager attention.
constexpr const AtenOpWord* aten_op_word(std::string_view name) {
  for (const AtenOpWord& w : kAtenOpWords)
    if (w.name == name) return &w;
  return nullptr;
}

// ATen ops that only compute tensor metadata: the views (as_strided and the ops PyTorch's
// native_functions.yaml builds on it, which return aliases of their input) and result_type (a
// dtype). They launch no device work and allocate nothing, so nothing inside one is anything
// an analysis reads: ingest leaves them out where another op holds them (trace_reads.cpp).
// reshape, contiguous, clone and the casts are not here: they may copy.
inline constexpr std::string_view kMetadataOnlyAtenOps[] = {
    "aten::as_strided", "aten::view",     "aten::_unsafe_view", "aten::_reshape_alias", "aten::view_as",
    "aten::t",          "aten::transpose", "aten::permute",     "aten::expand",         "aten::expand_as",
    "aten::unsqueeze",  "aten::squeeze",  "aten::slice",        "aten::select",         "aten::narrow",
    "aten::alias",      "aten::detach",   "aten::unflatten",    "aten::unbind",         "aten::split",
    "aten::split_with_sizes", "aten::chunk", "aten::result_type",
};

constexpr bool is_metadata_only_aten_op(std::string_view name) {
  for (const std::string_view op : kMetadataOnlyAtenOps)
    if (op == name) return true;
  return false;
}

// ATen ops that are composites (native_functions.yaml: CompositeImplicitAutograd, and
// _to_copy's CompositeExplicitAutograd): they do their work by calling other ops, which the
// profiler records inside them (a copy as aten::clone / aten::copy_, its memory as
// aten::empty / aten::empty_strided), so they launch nothing and allocate nothing of their
// own, and whatever an analysis reads of their work is in those ops.
inline constexpr std::string_view kCompositeAtenOps[] = {
    "aten::reshape", "aten::flatten", "aten::contiguous", "aten::to", "aten::type_as", "aten::_to_copy",
};

// Ops that run no device work and allocate no memory of their own: the metadata-only ones and
// the composites.
constexpr bool runs_nothing_of_its_own(std::string_view name) {
  if (is_metadata_only_aten_op(name)) return true;
  for (const std::string_view op : kCompositeAtenOps)
    if (op == name) return true;
  return false;
}

// CUDA / HIP runtime and driver calls whose meaning attnprof reads from their names: a graph
// replay (cudaGraphLaunch, hipGraphLaunch, cuGraphLaunch) and the bounds of a graph capture
// (cudaStreamBeginCapture, cudaStreamBeginCaptureToGraph, hipStreamBeginCapture,
// cuStreamBeginCapture_v2; cudaStreamEndCapture, ...): every spelling contains its word.
enum class RuntimeCallRole { kNone, kGraphLaunch, kCaptureBegin, kCaptureEnd };

struct RuntimeCallWord {
  std::string_view word;  // contained in the call's name
  RuntimeCallRole role;
};

inline constexpr RuntimeCallWord kRuntimeCallWords[] = {
    {"GraphLaunch", RuntimeCallRole::kGraphLaunch},
    {"StreamBeginCapture", RuntimeCallRole::kCaptureBegin},
    {"StreamEndCapture", RuntimeCallRole::kCaptureEnd},
};

constexpr RuntimeCallRole runtime_call_role(std::string_view name) {
  for (const RuntimeCallWord& w : kRuntimeCallWords)
    if (name.find(w.word) != std::string_view::npos) return w.role;
  return RuntimeCallRole::kNone;
}

// ATen ops that build an attention mask from index compares, whose input shapes tell what the
// mask hides (cpp/src/heads/window_effectiveness.cpp): an and of a bool key row marks key
// padding; a query column compared with a key row is a causal mask (le/ge) or a window (gt/lt).
enum class MaskBuildingRole { kAnd, kCausalCompare, kWindowCompare };

struct MaskBuildingOp {
  std::string_view name;
  MaskBuildingRole role;
};

inline constexpr MaskBuildingOp kMaskBuildingOps[] = {
    {"aten::__and__", MaskBuildingRole::kAnd},        {"aten::bitwise_and", MaskBuildingRole::kAnd},
    {"aten::logical_and", MaskBuildingRole::kAnd},    {"aten::mul", MaskBuildingRole::kAnd},
    {"aten::le", MaskBuildingRole::kCausalCompare},   {"aten::ge", MaskBuildingRole::kCausalCompare},
    {"aten::gt", MaskBuildingRole::kWindowCompare},   {"aten::lt", MaskBuildingRole::kWindowCompare},
};

// The row of a mask-building op; nullptr for any other name.
constexpr const MaskBuildingOp* mask_building_op(std::string_view name) {
  for (const MaskBuildingOp& op : kMaskBuildingOps)
    if (op.name == name) return &op;
  return nullptr;
}

struct IngestIssueWord {
  std::string_view kind;  // Trace::issues key (docs/ingest.md)
  // What ingest did to the events and, where obvious, which numbers it weakens, for
  // SourceInfo::missing (after the count: "3 events with ...").
  std::string_view effect;
};

inline constexpr std::array<IngestIssueWord, 13> kIngestIssueWords = {{
    {"negative_duration",
     "events with negative duration were kept with duration 0 (device times and fused share may be low)"},
    {"missing_duration",
     "events without a duration were kept with duration 0 (device times and fused share may be low)"},
    {"missing_ts", "events without a timestamp were ignored (calls and layers may be missing)"},
    {"duplicate_correlation",
     "runtime events share one CUPTI correlation id (kernel-to-call attribution may be wrong)"},
    {"ignored_begin_end_event", "B/E phase events were ignored (only complete X events are read)"},
    {"non_utf8_text",
     "invalid UTF-8 bytes were replaced by '?' (names holding them may not match kernel patterns)"},
    {"no_category",
     "complete events had no \"cat\" (legacy pre-Kineto profiler) and were read as CPU ops: no GPU "
     "kernels, no shapes (B/H/S/D, FLOPs), no module paths; calls come from op names alone"},
    {"number_out_of_range", "events had a number_out_of_range problem and were kept or skipped as docs/ingest.md says"},
    {"bad_value", "events had a bad_value problem and were kept or skipped as docs/ingest.md says"},
    {"event_not_object", "events had a event_not_object problem and were kept or skipped as docs/ingest.md says"},
    {"missing_ph", "events had a missing_ph problem and were kept or skipped as docs/ingest.md says"},
    {"flow_without_id", "events had a flow_without_id problem and were kept or skipped as docs/ingest.md says"},
    {"too_many_threads",
     "complete events of threads past the 16,777,216th distinct (pid, tid) were ignored (calls and layers may be missing)"},
}};

// The row of an ingest issue kind; nullptr when unknown.
constexpr const IngestIssueWord* ingest_issue_word(std::string_view kind) {
  for (const IngestIssueWord& w : kIngestIssueWords)
    if (w.kind == kind) return &w;
  return nullptr;
}

// Finding::rule ids, beside the ids of the SDPA rule table (cpp/src/rules/rule_table.cpp,
// "sdpa.flash.dtype", ...) that name the failed check of a fallback finding. The findings
// of extraction itself (unfused calls, no attention, all fused) carry no id.
namespace finding {
inline constexpr const char* kEagerAttention = "rules.eager_attention";
inline constexpr const char* kForcedBackend = "rules.forced_backend";
inline constexpr const char* kConsistency = "rules.consistency";
inline constexpr const char* kRoofline = "cost.roofline";
inline constexpr const char* kMemoryShare = "cost.memory_share";
inline constexpr const char* kNonKernelTime = "cost.non_kernel_time";
inline constexpr const char* kSlidingWindow = "heads.sliding_window";
inline constexpr const char* kPaddingMask = "heads.padding_mask";
inline constexpr const char* kCausalMask = "heads.causal_mask";
inline constexpr const char* kBlockMask = "heads.block_mask";
inline constexpr const char* kArbitraryMask = "heads.arbitrary_mask";
inline constexpr const char* kBiasMask = "heads.bias_mask";
inline constexpr const char* kFullMask = "heads.full_mask";
inline constexpr const char* kMaskedWork = "heads.masked_work";
inline constexpr const char* kRanksSlowest = "ranks.slowest";
inline constexpr const char* kRanksStragglers = "ranks.stragglers";
inline constexpr const char* kRanksDisagree = "ranks.disagreement";
inline constexpr const char* kRanksFailed = "ranks.failed";
inline constexpr const char* kKeyLengthUnknown = "flops.key_length_unknown";
inline constexpr const char* kUnevenSteps = "steps.uneven_calls";
inline constexpr const char* kRecompute = "calls.recompute";
inline constexpr const char* kTensorParallel = "steps.tensor_parallel";
inline constexpr const char* kAttentionCandidates = "attention.candidates";
}  // namespace finding

// Fixes attnprof.verify applies in the user's process (python/attnprof/verify.py), each mapped
// from a finding's rule id (verify stage, plan_fixes), never from its text.
namespace fix {
inline constexpr const char* kUseSdpa = "use_sdpa";
inline constexpr const char* kUnforceBackend = "unforce_backend";
inline constexpr const char* kIsCausal = "is_causal";
inline constexpr const char* kFlexAttention = "flex_attention";
inline constexpr const char* kAutocastBf16 = "autocast_bf16";
inline constexpr const char* kManual = "manual";
}  // namespace fix

struct FixWord {
  std::string_view id;
  std::string_view change;  // what verify changes, for every output
  // Whether the fix exists to change the backend: when the same backends run after it, it
  // did not take effect (the change was undone inside the model's code).
  bool changes_backend;
};

inline constexpr std::array<FixWord, 6> kFixWords = {{
    {fix::kUseSdpa, "attention through torch.nn.functional.scaled_dot_product_attention (attn_implementation=\"sdpa\")", true},
    {fix::kUnforceBackend, "every SDPA backend enabled (sdpa_kernel of all backends) so SDPA picks its own", true},
    {fix::kIsCausal, "a materialised causal mask passed as is_causal=True instead", false},
    {fix::kFlexAttention, "attn_implementation=\"flex_attention\": the mask as a FlexAttention block mask", true},
    {fix::kAutocastBf16, "the forward under torch.autocast(dtype=torch.bfloat16)", false},
    {fix::kManual, "nothing: the finding's fix needs a change to the code or the inputs", false},
}};

constexpr const FixWord* fix_word(std::string_view id) {
  for (const FixWord& w : kFixWords)
    if (w.id == id) return &w;
  return nullptr;
}

// The fix that answers a finding, by its rule id; "" for findings that report without asking for
// a change (roofline, memory share, steps, ...). A rules finding whose first rejection is the
// dtype ("flash.dtype") asks for half precision; the changes verify cannot make in the
// process (the inputs: padding, documents; or the code) are fix::kManual.
constexpr std::string_view fix_for_finding(std::string_view rule) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kFixOfFinding = {{
      {finding::kEagerAttention, fix::kUseSdpa},
      {finding::kForcedBackend, fix::kUnforceBackend},
      {finding::kCausalMask, fix::kIsCausal},
      {finding::kSlidingWindow, fix::kFlexAttention},
      {finding::kPaddingMask, fix::kManual},
      {finding::kBlockMask, fix::kManual},
      {finding::kArbitraryMask, fix::kManual},
      {finding::kBiasMask, fix::kManual},
      {finding::kNonKernelTime, fix::kManual},
      {finding::kRecompute, fix::kManual},
  }};
  for (const auto& [finding_id, fix_id] : kFixOfFinding)
    if (finding_id == rule) return fix_id;
  constexpr std::string_view kDtypeRule = ".dtype";
  if (rule.size() > kDtypeRule.size() && rule.substr(rule.size() - kDtypeRule.size()) == kDtypeRule)
    return fix::kAutocastBf16;
  return "";
}

// The verdict of one verified fix (sections/verification.h; docs/verify.md).
namespace verdict {
inline constexpr const char* kConfirmed = "confirmed";
inline constexpr const char* kNoGain = "no_gain";
inline constexpr const char* kChangesResults = "changes_results";
inline constexpr const char* kNotApplicable = "not_applicable";
}  // namespace verdict

struct FindingWord {
  std::string_view id;     // finding::k*
  std::string_view stage;  // the stage that emits it
  std::string_view what;   // what it reports (docs/report-schema.md, "Finding ids")
};

inline constexpr std::array<FindingWord, 23> kFindingWords = {{
    {finding::kEagerAttention, "rules", "eager attention (no SDPA call) and the backend SDPA would run"},
    {finding::kForcedBackend, "rules", "sdpa_kernel([X]) forced a backend the rules rank below another"},
    {finding::kConsistency, "rules", "the rules' prediction disagrees with the trace or the live capture"},
    {finding::kRoofline, "analysis", "the share of the GPU's peak each backend's attention reaches"},
    {finding::kMemoryShare, "analysis", "layers whose attention peak exceeds 1.5x the median layer's"},
    {finding::kNonKernelTime, "analysis", "fused calls whose time is >= 5% work beside the attention kernel (mask conversion, fills, copies) and its fix"},
    {finding::kSlidingWindow, "heads", "a sliding-window mask whose masked scores the kernel still computes"},
    {finding::kPaddingMask, "heads", "a padding mask whose padded keys the kernel still computes"},
    {finding::kCausalMask, "heads", "a materialised causal mask instead of is_causal=True"},
    {finding::kBlockMask, "heads", "a block-diagonal (document) mask computed in full"},
    {finding::kArbitraryMask, "heads", "an arbitrary mask computed in full"},
    {finding::kBiasMask, "heads", "a bias mask (ALiBi, position bias) added to materialised scores"},
    {finding::kFullMask, "heads", "masked work of a FlexAttention call whose captured mask keeps every score (pattern full)"},
    {finding::kMaskedWork, "heads", "masked scores of a mask of unknown kind that the kernel computes"},
    {finding::kRanksSlowest, "fleet", "the rank whose attention takes longest against the median rank"},
    {finding::kRanksStragglers, "fleet", "ranks beyond the robust straggler threshold over the median, overall and per layer"},
    {finding::kRanksDisagree, "fleet", "ranks whose backend, kernel, shape, mask or dtype in a layer differs from most ranks, and why"},
    {finding::kRanksFailed, "fleet", "rank traces that could not be analysed, each with its error; the rest is merged"},
    {finding::kKeyLengthUnknown, "attention", "serving calls whose FLOPs are unknown: the trace records no key length"},
    {finding::kUnevenSteps, "attention", "steps whose numbers of attention calls differ, and how layers were assigned"},
    {finding::kRecompute, "attention", "activation checkpointing runs forward attention again in the backward: calls, time, share, and how to keep attention's output instead"},
    {finding::kTensorParallel, "attention", "collectives between the layers of a forward: head counts are per rank"},
    {finding::kAttentionCandidates, "attention", "no call recognised, but ops or names that resemble attention, and why each was not taken"},
}};

// The row of a finding id; nullptr for the rule table's ids and unknown ones.
constexpr const FindingWord* finding_word(std::string_view id) {
  for (const FindingWord& w : kFindingWords)
    if (w.id == id) return &w;
  return nullptr;
}

// A trace recorded with one SDPA backend forced (sdpa_kernel([X])) says so in its file name:
// "<run>_force_<backend>..." (attnprof.sweep writes sweep_sdpa_force_flash_s512.pt.trace.json).
// `attnprof scale` reads such a run as forced, the others as PyTorch's own pick.
inline constexpr std::string_view kForcedBackendMarker = "_force_";

}  // namespace attnprof
