// One `explain` question (explain_input.h): read from its front-end spelling, decided, and
// written as text, Markdown or JSON. The CLI and attnprof.explain both call these, so the two
// give the same answer.
#include <fmt/format.h>

#include <sstream>

#include "attnprof/explain_input.h"
#include "attnprof/vocabulary.h"
#include "attnprof/text_format.h"

namespace attnprof::rules {
namespace {

Error bad(std::string message) { return make_error(ErrorCode::kInvalidArgument, std::move(message)); }

Result<Version> cudnn_of(const ExplainRequest& r, const Device& device) {
  if (device.kind != DeviceKind::kCuda) return Version{};
  return parse_version(r.cudnn);
}

Result<std::vector<int64_t>> dims_or(const std::string& text, const char* name, const Result<std::vector<int64_t>>& fallback) {
  return text.empty() ? fallback : parse_dims(text, name, 4);
}

Status check_alike(const std::vector<int64_t>& q, const std::vector<int64_t>& k, const std::vector<int64_t>& v) {
  if (k[3] != q[3]) return bad("k's head dim must equal q's (SDPA needs q and k alike)");
  if (k[0] != q[0] || v[0] != q[0]) return bad("q, k and v must have the same batch size");
  if (v[1] != k[1] || v[2] != k[2]) return bad("k and v must have the same heads and length");
  return Ok{};
}

Status read_options(const ExplainRequest& r, SdpaInput& in) {
  auto dt = parse_dtype(r.dtype);
  if (!dt) return dt.error();
  in.dtype = *dt;
  auto m = parse_mask(r.mask);
  if (!m) return m.error();
  in.mask = *m;
  if (!r.mask_shape.empty()) {
    auto md = parse_dims(r.mask_shape, "mask shape", 0);
    if (!md) return md.error();
    in.mask_dims = *md;
  }
  if (r.dropout < 0 || r.dropout >= 1) return bad("dropout must be in [0, 1)");
  in.causal = r.causal;
  in.dropout = r.dropout;
  in.enable_gqa = r.gqa;
  in.requires_grad = r.grad;
  in.nested = r.nested;
  return Ok{};
}

std::string order_text(const Decision& d) {
  std::vector<std::string> names;
  for (Backend b : d.order) names.push_back(backend_name(b));
  return fmt::format("{}", fmt::join(names, " > "));
}

std::string environment_text(const Env& env) {
  return fmt::format("torch {}, {}{}", env.torch.str(), env.device.str(),
                     env.device.kind == DeviceKind::kCuda ? ", cuDNN " + env.cudnn.str() : std::string());
}

void verdict_lines(std::string& out, const Verdict& v) {
  out += fmt::format("  {:<10} {}\n", backend_name(v.backend), v.eligible ? "eligible" : "rejected");
  for (const RuleCheck& c : v.failed) {
    out += fmt::format("      {} [{}]: {}\n", c.rule, c.value, c.message);
    out += fmt::format("      fix: {}\n", c.fix);
  }
}

std::string fix_text(const Explanation& e) {
  return e.fix.empty() ? std::string("none needed: the first backend of the order runs") : e.fix;
}

std::string gain_text(const Explanation& e) {
  if (e.expected_speedup > 0)
    return fmt::format("{} faster, {} less activation memory ({})", estimated_ratio_text(e.expected_speedup),
                       estimated_ratio_text(e.expected_memory_ratio), e.gain_basis);
  return e.gain_basis;
}

void verdict_rows(Table& t, const Verdict& v) {
  if (v.eligible) t.rows.push_back({backend_name(v.backend), "eligible", "", "", "", ""});
  for (const RuleCheck& c : v.failed)
    t.rows.push_back({backend_name(v.backend), "rejected", c.rule, c.value, c.message, c.fix});
}

Table verdict_table(const Decision& d) {
  Table t{"SDPA decision: " + d.choice, {"backend", "verdict", "rule", "value", "why", "fix"}, {}, {}};
  for (const auto& v : d.sdpa) verdict_rows(t, v);
  for (const auto& v : d.libraries) verdict_rows(t, v);
  return t;
}

}  // namespace

Result<EnabledBackends> parse_backends(std::string_view list) {
  if (list.empty()) return EnabledBackends{};
  EnabledBackends e{false, false, false, false};
  std::stringstream ss{std::string(list)};
  std::string b;
  while (std::getline(ss, b, ',')) {
    if (b == backend::kFlash) e.flash = true;
    else if (b == backend::kEfficient) e.efficient = true;
    else if (b == backend::kCudnn) e.cudnn = true;
    else if (b == backend::kMath) e.math = true;
    else return bad(fmt::format("backend '{}': expected {}, {}, {} or {}", b, backend::kFlash, backend::kEfficient,
                                backend::kCudnn, backend::kMath));
  }
  return e;
}

Result<Env> env_of(const ExplainRequest& r) {
  Env env;
  auto t = parse_version(r.torch);
  if (!t) return t.error();
  env.torch = *t;
  auto d = parse_arch(r.arch);
  if (!d) return d.error();
  env.device = *d;
  auto c = cudnn_of(r, env.device);
  if (!c) return c.error();
  env.cudnn = *c;
  auto e = parse_backends(r.backends);
  if (!e) return e.error();
  env.enabled = *e;
  env.deterministic = r.deterministic;
  return env;
}

Result<SdpaInput> input_of(const ExplainRequest& r) {
  if (r.q.empty()) return bad("give the query shape q as B,H,S,D");
  auto q = parse_dims(r.q, "q", 4);
  if (!q) return q.error();
  auto k = dims_or(r.k, "k", q);
  if (!k) return k.error();
  auto v = dims_or(r.v, "v", k);
  if (!v) return v.error();
  if (Status s = check_alike(*q, *k, *v); !s) return s.error();
  SdpaInput in;
  in.B = (*q)[0], in.Hq = (*q)[1], in.Sq = (*q)[2], in.D = (*q)[3];
  in.Hkv = (*k)[1], in.Skv = (*k)[2], in.Dv = (*v)[3];
  if (Status s = read_options(r, in); !s) return s.error();
  if (Status s = check_shapes(in); !s) return s.error();
  return in;
}

Result<ExplainAnswer> explain_request(const ExplainRequest& request) {
  auto env = env_of(request);
  if (!env) return env.error();
  auto in = input_of(request);
  if (!in) return in.error();
  ExplainAnswer a{*in, *env, decide(*in, *env), {}, {}};
  a.explanation = explanation_from(a.input, a.env, a.decision);
  a.verdicts = verdict_table(a.decision);
  return a;
}

std::string explain_text(const ExplainAnswer& a) {
  const Decision& d = a.decision;
  std::string out = fmt::format("SDPA decision: {}  ({}; order {})\n", d.choice, environment_text(a.env), order_text(d));
  if (!d.error.empty()) out += "  error: " + d.error + "\n";
  out += "SDPA backends:\n";
  for (const auto& v : d.sdpa) verdict_lines(out, v);
  out += "Other kernels (not chosen by SDPA):\n";
  for (const auto& v : d.libraries) verdict_lines(out, v);
  out += "Fix: " + fix_text(a.explanation) + "\n";
  const std::string gain = gain_text(a.explanation);
  if (!gain.empty()) out += (a.explanation.expected_speedup > 0 ? "Expected: " : "Expected gain: ") + gain + "\n";
  return out;
}

std::string explain_markdown(const ExplainAnswer& a) {
  const Decision& d = a.decision;
  std::string out = fmt::format("**SDPA decision: {}** ({}; order {})\n\n", d.choice, environment_text(a.env), order_text(d));
  if (!d.error.empty()) out += "Error: " + markdown_escape(d.error) + "\n\n";
  out += table_markdown(a.verdicts);
  out += "\n**Fix:** " + markdown_escape(fix_text(a.explanation)) + "\n";
  const std::string gain = gain_text(a.explanation);
  if (!gain.empty()) out += "\n**Expected:** " + markdown_escape(gain) + "\n";
  return out;
}

std::string explain_json(const ExplainAnswer& a) { return decision_json_text(a.decision, a.env, a.explanation.fix); }

}  // namespace attnprof::rules
