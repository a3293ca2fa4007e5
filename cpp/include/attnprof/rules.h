// Backend eligibility rules: which attention kernels can run for given inputs, why the others
// cannot, what SDPA dispatches to, and what to change. Data-driven: every check is one Rule
// (id, PyTorch function, applicable versions/devices, condition, message template, fix);
// the table lives in cpp/src/rules/rule_table.cpp and is documented in docs/rules.md.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/report.h"
#include "attnprof/sections/explanation.h"

namespace attnprof {
}

namespace attnprof::rules {

struct Version {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const Version&) const = default;
  std::string str() const;  // "2.11" or "2.5.1" (patch only when non-zero)
};
// "2.11", "2.11.0+cu130", "9.19", "91900" (cuDNN integer form). Error on anything else.
Result<Version> parse_version(std::string_view text);
// cuDNN's integer encoding (major*10000 + minor*100 + patch), as PyTorch compares it.
int cudnn_code(const Version& v);

enum class DeviceKind { kCuda, kRocm, kCpu };
struct Device {
  DeviceKind kind = DeviceKind::kCuda;
  int sm = 90;          // CUDA compute capability major*10+minor (sm90 = 90, sm121 = 121)
  std::string gfx;      // ROCm architecture, e.g. "gfx942"
  std::string str() const;  // "sm90", "gfx942", "cpu"
};
// "sm90", "sm_90", "sm121", "9.0", "gfx942", "cpu". Error on anything else.
Result<Device> parse_arch(std::string_view text);

enum class MaskKind { kNone, kBool, kFloat };
const char* mask_kind_name(MaskKind kind);

// The inputs of one scaled_dot_product_attention call, dense (B, H, S, D) layout.
struct SdpaInput {
  int64_t B = 1, Hq = 1, Hkv = 1, Sq = 1, Skv = 1;
  int64_t D = 64;   // head dim of q and k
  int64_t Dv = 64;  // head dim of v
  std::string dtype = "bf16";  // Shape::dtype spelling: fp16, bf16, fp32, fp64, fp8_e4m3
  MaskKind mask = MaskKind::kNone;
  std::vector<int64_t> mask_dims;  // empty = (B, 1, Sq, Skv) assumed when a mask is present
  bool causal = false;
  double dropout = 0;
  bool enable_gqa = false;
  bool requires_grad = false;  // any of q/k/v requires grad and grad mode is on
  bool nested = false;
  int64_t q_stride_last = 1, k_stride_last = 1, v_stride_last = 1;
};

// Which SDPA backends are enabled (torch.backends.cuda.enable_*_sdp / sdpa_kernel([...])).
struct EnabledBackends {
  bool flash = true, efficient = true, cudnn = true, math = true;
};

struct Env {
  Version torch{2, 11, 0};
  Version cudnn{9, 19, 0};   // {0,0,0} = no cuDNN
  Device device;
  EnabledBackends enabled;
  bool deterministic = false;     // torch.use_deterministic_algorithms(True)
  bool cudnn_env_enabled = false;  // TORCH_CUDNN_SDPA_ENABLED=1 (needed before 2.5)
};

// Kernels the rules know. The first five are SDPA backends, the rest are libraries the
// advice can point to.
enum class Backend { kFlash, kEfficient, kCudnn, kMath, kCpuFlash, kFa2, kFa3, kXformers, kFlex };
const char* backend_name(Backend b);           // Report spelling: "flash", "fa3", ...
const char* sdp_backend_enum(Backend b);       // "FLASH_ATTENTION", ... ("" for non-SDPA)

// One named check. `fails` is the condition under which the backend is rejected.
struct RuleContext;
struct Rule {
  const char* id;                // "flash.head_dim_max"
  Backend backend;
  const char* pytorch_function;  // PyTorch/library function holding the check ("" if none)
  Version torch_min;             // applicable torch versions, inclusive ({0,0,0} = any)
  Version torch_max;             // inclusive ({99,0,0} = open)
  unsigned devices;              // bit set of DeviceKind (1 << int(kind))
  bool (*fails)(const RuleContext&);
  const char* message;           // PyTorch's words with {placeholders} (docs/rules.md)
  const char* value;             // the failing value, with {placeholders}
  const char* fix;               // what to change, with {placeholders}
  const char* source;            // where the fact comes from (reference section)
};

// All rules, per backend in the order the library checks them.
std::span<const Rule> all_rules();
const Rule* find_rule(std::string_view id);

struct Verdict {
  Backend backend;
  bool eligible = true;
  std::vector<RuleCheck> failed;   // every failing rule, in check order
  std::vector<std::string> why;    // what PyTorch prints (first failure, "... (function f)")
};

struct Decision {
  std::vector<Backend> order;       // SDPA priority order for this env
  std::vector<Verdict> sdpa;        // one per SDPA backend of the device, in `order`
  std::vector<Verdict> libraries;   // FA2, FA3, xFormers, FlexAttention
  std::string choice = "ERROR";     // FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH, ERROR
  Backend chosen = Backend::kMath;  // meaningful unless choice == "ERROR"
  std::string error;                // PyTorch's error text when choice == "ERROR"
  const Verdict* verdict(Backend b) const;
};

// SDPA's default order on CUDA for one range of torch releases (cpp/src/rules/priority_table.cpp,
// reference §1.3): `order`, with cuDNN moved to the front where check_prefer_cudnn_attention
// holds (on the listed archs with a new enough cuDNN).
struct PriorityRow {
  Version torch_min, torch_max;        // inclusive
  std::array<Backend, 4> order;        // when cuDNN is not preferred
  std::array<int, 3> cudnn_first_sms;  // archs where cuDNN is preferred (0 = unused slot)
  int cudnn_min_code;                  // runtime cuDNN at least this (cudnn_code), 0 = any
  std::string_view source;             // where the row comes from

  bool cudnn_first(int sm, int cudnn_code) const;
  std::array<Backend, 4> order_on(int sm, int cudnn_code) const;
  std::string torch_range() const;     // "2.5.1-2.8", "<= 2.4", ">= 2.10" (docs/rules.md)
  Version last_release() const;        // torch_max without its patch: 2.8
};
std::span<const PriorityRow> priority_table();
// The row of a torch version.
const PriorityRow& priority_row(const Version& torch);
// The newest row in which cuDNN never leads (flash first on every arch): the older default a
// trace of flash-only calls may come from.
const PriorityRow& newest_flash_first_row();
// "flash > efficient > math > cudnn"
std::string order_text(std::span<const Backend> order);

// The SDPA priority order of an Env: the row of its torch version on CUDA; ROCm runs the
// cuDNN-last order (no cuDNN), CPU cpu_flash > math.
std::vector<Backend> priority_order(const Env& env);

// Evaluates every rule for the input and picks what SDPA would dispatch to.
Decision decide(const SdpaInput& input, const Env& env);

// A measured before/after pair from /work/shared/fixtures/h200-torch2.11/ground_truth.json
// (whole-model forward latency median and peak activation bytes); pinned by a test.
struct MeasuredPair {
  const char* from_backend;  // backend of the slow run ("eager", "math", "efficient", ...)
  const char* to_backend;    // backend of the fast run
  const char* from_dtype;    // "" = the pair holds for half types; "fp32" = the dtype fix
  int64_t seq_len;
  const char* from_run;      // ground_truth.json run names
  const char* to_run;
  double from_latency_ms, to_latency_ms;
  int64_t from_peak_activation, to_peak_activation;
};
std::span<const MeasuredPair> measured_pairs();

// Expected gain of moving a call from `from` to the best fused choice, from measured fixture
// numbers where the situation matches, else 0 with the basis saying so.
struct Gain {
  double speedup = 0;
  double memory_ratio = 0;
  std::string basis;
};
Gain expected_gain(std::string_view from_backend, std::string_view to_backend, int64_t seq_len,
                   std::string_view dtype);

// A gain attnprof.verify measured on the user's own model (a --gains FILE entry, docs/verify.md):
// the fix, the backend and dtype it started from, the device and the sequence length.
struct MeasuredGain {
  std::string fix;           // fix::k*
  std::string from_backend;  // the calls' backend before the fix ("eager", "math")
  std::string dtype;
  std::string device;        // the Report's device: SourceInfo::device_name, else its arch ("cpu")
  int64_t seq_len = 0;
  double speedup = 0;
  std::vector<double> speedup_ci;
  double memory_ratio = 0;   // peak memory before / after; 0 = not measured
  std::string model;         // the model's class, for the basis text
};

// The user's measurement for a call: same fix, starting backend, dtype and device, at the
// nearest measured sequence length within a factor of 2; nullopt when none matches.
std::optional<Gain> user_gain(std::span<const MeasuredGain> gains, std::string_view fix, std::string_view from_backend,
                              int64_t seq_len, std::string_view dtype, std::string_view device);

struct ExplainOptions {
  std::string torch_version;  // "" = unknown
  std::string cudnn_version;
  std::string arch;
  std::vector<MeasuredGain> gains;  // preferred over the fixture table where they match
};

// What the rules say about a run's calls: the Explanation of each SDPA / eager call (parallel
// to the calls; nullopt for the calls no rule judges) and one Finding per distinct fallback
// cause (layers grouped).
struct ExplanationsSection {
  std::vector<std::optional<Explanation>> calls;
  std::vector<Finding> findings;
};

// Versions/arch come from `options`, else from `source`, else assumptions (listed in each
// Explanation::assumptions); `has_gpu` picks the assumed arch (GPU default or cpu).
ExplanationsSection explain_calls(const std::vector<Call>& calls, const SourceInfo& source, bool has_gpu,
                                  const ExplainOptions& options);

// `base` followed by `more`, where a finding of `more` with the same cause and layers as one
// already there (the unfused-backend finding, say) is folded into it instead of repeating it:
// its title and fix lead, the other's numbers follow.
std::vector<Finding> merge_findings(std::vector<Finding> base, std::vector<Finding> more);

// Explanation for one input (used by explain_calls and `attnprof explain`).
Explanation explanation_from(const SdpaInput& input, const Env& env, const Decision& decision);

}  // namespace attnprof::rules
