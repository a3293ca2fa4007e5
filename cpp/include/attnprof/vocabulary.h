// The words every stage shares, each defined once as a constexpr table: attention backends
// (Report spelling, the torch SDPBackend member that selects it, its class), tensor dtypes
// (Report spelling, the spellings traces and torch use, size, PyTorch's printed name) and the
// ingest issue kinds (key, what the issue does to the numbers). Every former copy is a lookup
// into these tables now; adding a backend is one row here plus its kernel catalog rows
// (docs/architecture.md).
#pragma once

#include <array>
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

// The row of a Report backend spelling; nullptr when unknown.
constexpr const BackendWord* backend_word(std::string_view name) {
  for (const BackendWord& w : kBackendWords)
    if (w.name == name) return &w;
  return nullptr;
}

// The SDPBackend member of a backend ("" when SDPA cannot name it).
constexpr std::string_view sdp_backend_of(std::string_view backend_name) {
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
};

// c10/core/ScalarType.h names; "fnuz" variants are the ROCm fp8 formats.
inline constexpr std::array<DtypeWord, 6> kDtypeWords = {{
    {"bf16", {"c10::BFloat16", ""}, {"bfloat16", ""}, "c10::BFloat16", 2},
    {"fp16", {"c10::Half", ""}, {"float16", ""}, "c10::Half", 2},
    {"fp32", {"float", ""}, {"float32", ""}, "float", 4},
    {"fp64", {"double", ""}, {"float64", ""}, "double", 8},
    {"fp8_e4m3", {"c10::Float8_e4m3fn", "c10::Float8_e4m3fnuz"}, {"float8_e4m3fn", "float8_e4m3fnuz"},
     "c10::Float8_e4m3fn", 1},
    {"fp8_e5m2", {"c10::Float8_e5m2", "c10::Float8_e5m2fnuz"}, {"float8_e5m2", "float8_e5m2fnuz"},
     "c10::Float8_e5m2", 1},
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

struct IngestIssueWord {
  std::string_view kind;  // Trace::issues key (docs/ingest.md)
  // What ingest did to the events and, where obvious, which numbers it weakens, for
  // SourceInfo::missing (after the count: "3 events with ...").
  std::string_view effect;
};

inline constexpr std::array<IngestIssueWord, 12> kIngestIssueWords = {{
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
}};

// The row of an ingest issue kind; nullptr when unknown.
constexpr const IngestIssueWord* ingest_issue_word(std::string_view kind) {
  for (const IngestIssueWord& w : kIngestIssueWords)
    if (w.kind == kind) return &w;
  return nullptr;
}

}  // namespace attnprof
