// Evaluating the rule table and SDPA's backend selection (select_sdp_backend), §1.3.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "attnprof/report.h"
#include "attnprof/rules.h"
#include "attnprof/vocabulary.h"
#include "rules/context.h"

namespace attnprof::rules {
namespace {

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool applies(const Rule& r, const Env& env) {
  const unsigned bit = 1u << static_cast<int>(env.device.kind);
  return (r.devices & bit) != 0 && env.torch >= r.torch_min && env.torch <= r.torch_max;
}

Verdict evaluate(Backend b, const RuleContext& ctx, bool sdpa) {
  Verdict v{b};
  for (const Rule& r : all_rules()) {
    if (r.backend != b || !applies(r, ctx.env) || !r.fails(ctx)) continue;
    v.eligible = false;
    RuleCheck check{r.id, expand(r.message, ctx), expand(r.value, ctx), expand(r.fix, ctx)};
    // PyTorch stops at its first failing check and prints only that one.
    if (sdpa && v.why.empty()) {
      v.why.push_back(*r.pytorch_function ? check.message + " (function " + r.pytorch_function + ")"
                                          : check.message);
    }
    v.failed.push_back(std::move(check));
  }
  return v;
}

bool enabled(Backend b, const EnabledBackends& e) {
  switch (b) {
    case Backend::kFlash:
    case Backend::kCpuFlash: return e.flash;
    case Backend::kEfficient: return e.efficient;
    case Backend::kCudnn: return e.cudnn;
    case Backend::kMath: return e.math;
    default: return false;
  }
}

// check_prefer_cudnn_attention per version (§1.3 table).
bool cudnn_first(const Env& env) {
  const int sm = env.device.sm;
  const int code = cudnn_code(env.cudnn);
  if (env.torch < Version{2, 5, 0}) return true;  // constexpr order, cuDNN gated by the env rule
  if (env.torch == Version{2, 5, 0}) return sm == 90;
  if (env.torch < Version{2, 9, 0}) return false;
  if (env.torch < Version{2, 10, 0}) return code >= 90900 && (sm == 90 || sm == 100);
  return code > 91500 && (sm / 10 == 9 || sm / 10 == 10) && (sm % 10 == 0 || sm % 10 == 3);
}

}  // namespace

std::string Version::str() const {
  return patch ? fmt::format("{}.{}.{}", major, minor, patch) : fmt::format("{}.{}", major, minor);
}

Result<Version> parse_version(std::string_view text) {
  const std::string_view original = text;
  auto bad = [&] {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("bad version '{}' (expected e.g. 2.11, 2.11.0+cu130, 9.19 or 91900)", original));
  };
  text = text.substr(0, text.find_first_of("+ ab"));  // drop local/pre-release suffixes
  if (text.find('.') == std::string_view::npos) {
    int code = 0;  // cuDNN integer form
    if (!parse_int(text, code) || code < 1000) return bad();
    return Version{code / 10000, code / 100 % 100, code % 100};
  }
  Version v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  size_t i = 0;
  while (!text.empty()) {
    if (i == 3) return bad();
    const size_t dot = text.find('.');
    if (!parse_int(text.substr(0, dot), *parts[i++])) return bad();
    if (dot == std::string_view::npos) break;
    text = text.substr(dot + 1);
    if (text.empty()) return bad();
  }
  if (i < 2) return bad();
  // No release numbers its parts beyond 9999; larger ones would overflow cudnn_code and arch codes.
  for (int* part : parts)
    if (*part < 0 || *part > 9999) return bad();
  return v;
}

int cudnn_code(const Version& v) { return v.major * 10000 + v.minor * 100 + v.patch; }

std::string Device::str() const {
  switch (kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kRocm: return gfx;
    case DeviceKind::kCuda: break;
  }
  return fmt::format("sm{}", sm);
}

namespace {

// The number of "sm90", "sm_80" or "sm90a" after its "sm"; 0 when it is not one.
int sm_number(std::string_view digits) {
  if (!digits.empty() && digits[0] == '_') digits.remove_prefix(1);
  if (!digits.empty() && digits.back() == 'a') digits.remove_suffix(1);  // sm90a
  int sm = 0;
  return parse_int(digits, sm) ? sm : 0;
}

}  // namespace

Result<Device> parse_arch(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  auto bad = [&] {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("bad arch '{}' (expected e.g. sm90, sm_80, 9.0, gfx942, rocm or cpu)", text));
  };
  if (s == "cpu") return Device{DeviceKind::kCpu, 0, ""};
  if (s.rfind("gfx", 0) == 0 && s.size() > 3) return Device{DeviceKind::kRocm, 0, s};
  if (s == "rocm") return Device{DeviceKind::kRocm, 0, s};  // AMD GPU whose gfx target is unknown
  if (s.rfind("sm", 0) == 0) {
    const int sm = sm_number(std::string_view(s).substr(2));
    if (sm < 10) return bad();
    return Device{DeviceKind::kCuda, sm, ""};
  }
  const auto v = parse_version(s);
  if (!v || v->major < 1 || v->minor > 9 || s.find('.') == std::string::npos) return bad();
  return Device{DeviceKind::kCuda, v->major * 10 + v->minor, ""};
}

const char* mask_kind_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::kBool: return "bool";
    case MaskKind::kFloat: return "float";
    case MaskKind::kNone: break;
  }
  return "none";
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kFlash: return backend::kFlash;
    case Backend::kEfficient: return backend::kEfficient;
    case Backend::kCudnn: return backend::kCudnn;
    case Backend::kMath: return backend::kMath;
    case Backend::kCpuFlash: return backend::kCpuFlash;
    case Backend::kFa2: return backend::kFa2;
    case Backend::kFa3: return backend::kFa3;
    case Backend::kXformers: return backend::kXformers;
    case Backend::kFlex: return backend::kFlex;
  }
  return "";
}

const char* sdp_backend_enum(Backend b) {
  // Rows of the vocabulary are string literals, so the view is NUL-terminated.
  return sdp_backend_of(backend_name(b)).data();
}

std::vector<Backend> priority_order(const Env& env) {
  using B = Backend;
  if (env.device.kind == DeviceKind::kCpu) return {B::kCpuFlash, B::kMath};
  if (env.device.kind == DeviceKind::kCuda && cudnn_first(env))
    return {B::kCudnn, B::kFlash, B::kEfficient, B::kMath};
  return {B::kFlash, B::kEfficient, B::kMath, B::kCudnn};
}

const Verdict* Decision::verdict(Backend b) const {
  for (const auto* list : {&sdpa, &libraries})
    for (const Verdict& v : *list)
      if (v.backend == b) return &v;
  return nullptr;
}

Decision decide(const SdpaInput& input, const Env& env) {
  const RuleContext ctx{input, env};
  Decision d;
  d.order = priority_order(env);
  for (Backend b : d.order) d.sdpa.push_back(evaluate(b, ctx, /*sdpa=*/true));
  for (Backend b : {Backend::kFa2, Backend::kFa3, Backend::kXformers, Backend::kFlex})
    d.libraries.push_back(evaluate(b, ctx, /*sdpa=*/false));

  const bool any_enabled = std::any_of(d.order.begin(), d.order.end(),
                                       [&](Backend b) { return enabled(b, env.enabled); });
  if (!any_enabled) {
    d.error = env.device.kind == DeviceKind::kCpu
                  ? "No available kernel.  Aborting execution."
                  : "No viable backend for scaled_dot_product_attention was found. This is likely due to "
                    "turning off both the math kernel and the fused kernels.";
    return d;
  }
  for (const Verdict& v : d.sdpa) {
    if (v.eligible) {
      d.choice = sdp_backend_enum(v.backend);
      d.chosen = v.backend;
      return d;
    }
  }
  d.error = env.device.kind == DeviceKind::kCpu ? "No available kernel.  Aborting execution."
                                                : "No available kernel. Aborting execution.";
  return d;
}

}  // namespace attnprof::rules
