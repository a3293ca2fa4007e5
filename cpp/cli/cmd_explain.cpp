// `attnprof explain`: why SDPA picks a backend for given inputs, what the others lack, and
// the fix. One call from flags, or a batch of JSON lines (the fields of the grid rows in
// shared/fixtures/h200-torch2.11/sdpa_grid_cuda_sample.json).
#include <fmt/format.h>

#include <iostream>
#include <iterator>
#include <sstream>

#include "attnprof/explain_input.h"
#include "attnprof/io.h"
#include "attnprof/rules.h"
#include "attnprof/vocabulary.h"
#include "command.h"

namespace attnprof::cli {
namespace {

using rules::Backend;
using rules::Decision;
using rules::Env;
using rules::SdpaInput;
using rules::parse_dims;
using rules::parse_dtype;
using rules::parse_mask;

struct Options {
  std::string q, k, v, dtype = "bf16", mask = "none", mask_shape, backends;
  bool causal = false, gqa = false, grad = false, nested = false, deterministic = false, json = false;
  double dropout = 0;
  std::string arch = "sm90", torch = "2.11", cudnn = "9.19";
  std::string batch, out = "-";
};

Error bad(std::string message) { return make_error(ErrorCode::kInvalidArgument, std::move(message)); }

Result<rules::EnabledBackends> parse_backends(const std::string& list) {
  if (list.empty()) return rules::EnabledBackends{};
  rules::EnabledBackends e{false, false, false, false};
  std::stringstream ss(list);
  std::string b;
  while (std::getline(ss, b, ',')) {
    if (b == "flash") e.flash = true;
    else if (b == "efficient") e.efficient = true;
    else if (b == "cudnn") e.cudnn = true;
    else if (b == "math") e.math = true;
    else return bad(fmt::format("backend '{}': expected flash, efficient, cudnn or math", b));
  }
  return e;
}

Result<Env> parse_env(const Options& o) {
  Env env;
  auto t = rules::parse_version(o.torch);
  if (!t) return t.error();
  env.torch = *t;
  auto d = rules::parse_arch(o.arch);
  if (!d) return d.error();
  env.device = *d;
  if (env.device.kind == rules::DeviceKind::kCuda) {
    auto c = rules::parse_version(o.cudnn);
    if (!c) return c.error();
    env.cudnn = *c;
  } else {
    env.cudnn = {};
  }
  auto e = parse_backends(o.backends);
  if (!e) return e.error();
  env.enabled = *e;
  env.deterministic = o.deterministic;
  return env;
}

Result<SdpaInput> input_from_flags(const Options& o) {
  auto q = parse_dims(o.q, "--q", 4);
  if (!q) return q.error();
  auto k = o.k.empty() ? q : parse_dims(o.k, "--k", 4);
  if (!k) return k.error();
  auto v = o.v.empty() ? k : parse_dims(o.v, "--v", 4);
  if (!v) return v.error();
  SdpaInput in;
  in.B = (*q)[0], in.Hq = (*q)[1], in.Sq = (*q)[2], in.D = (*q)[3];
  in.Hkv = (*k)[1], in.Skv = (*k)[2], in.Dv = (*v)[3];
  if ((*k)[3] != in.D) return bad("--k head dim must equal --q head dim (SDPA needs q and k alike)");
  if ((*k)[0] != in.B || (*v)[0] != in.B) return bad("--q, --k and --v must have the same batch size");
  if ((*v)[1] != in.Hkv || (*v)[2] != in.Skv) return bad("--k and --v must have the same heads and length");
  auto dt = parse_dtype(o.dtype);
  if (!dt) return dt.error();
  in.dtype = *dt;
  auto m = parse_mask(o.mask);
  if (!m) return m.error();
  in.mask = *m;
  if (!o.mask_shape.empty()) {
    auto md = parse_dims(o.mask_shape, "--mask-shape", 0);
    if (!md) return md.error();
    in.mask_dims = *md;
  }
  if (o.dropout < 0 || o.dropout >= 1) return bad("--dropout must be in [0, 1)");
  in.causal = o.causal;
  in.dropout = o.dropout;
  in.enable_gqa = o.gqa;
  in.requires_grad = o.grad;
  in.nested = o.nested;
  if (Status st = rules::check_shapes(in); !st) return st.error();
  return in;
}

// --- batch mode (explain_input.h reads the lines) -------------------------------------------

Result<std::string> run_batch(const Options& o, const Env& base) {
  std::string text;
  if (o.batch == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    auto r = read_text_file(o.batch);
    if (!r) return r.error();
    text = std::move(*r);
  }
  return rules::explain_batch(text, o.batch == "-" ? std::string("<stdin>") : o.batch, base);
}

// --- single call, text ---------------------------------------------------------------------

std::string order_text(const Decision& d) {
  std::vector<std::string> names;
  for (Backend b : d.order) names.push_back(rules::backend_name(b));
  return fmt::format("{}", fmt::join(names, " > "));
}

void verdict_lines(std::string& out, const rules::Verdict& v) {
  if (v.eligible) {
    out += fmt::format("  {:<10} eligible\n", rules::backend_name(v.backend));
    return;
  }
  out += fmt::format("  {:<10} rejected\n", rules::backend_name(v.backend));
  for (const RuleCheck& c : v.failed) {
    out += fmt::format("      {} [{}]: {}\n", c.rule, c.value, c.message);
    out += fmt::format("      fix: {}\n", c.fix);
  }
}

std::string explain_text(const SdpaInput& in, const Env& env, const Decision& d) {
  std::string out = fmt::format(
      "SDPA decision: {}  (torch {}, {}{}; order {})\n", d.choice, env.torch.str(), env.device.str(),
      env.device.kind == rules::DeviceKind::kCuda ? ", cuDNN " + env.cudnn.str() : std::string(), order_text(d));
  if (!d.error.empty()) out += "  error: " + d.error + "\n";
  out += "SDPA backends:\n";
  for (const auto& v : d.sdpa) verdict_lines(out, v);
  out += "Other kernels (not chosen by SDPA):\n";
  for (const auto& v : d.libraries) verdict_lines(out, v);
  const Explanation e = rules::explanation_from(in, env, d);
  out += "Fix: " + (e.fix.empty() ? std::string("none needed: the first backend of the order runs") : e.fix) + "\n";
  if (e.expected_speedup > 0)
    out += fmt::format("Expected: ~{:.1f}x faster, ~{:.1f}x less activation memory ({})\n", e.expected_speedup,
                       e.expected_memory_ratio, e.gain_basis);
  else if (!e.gain_basis.empty())
    out += "Expected gain: " + e.gain_basis + "\n";
  return out;
}

Status write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    return Ok{};
  }
  return write_file_atomic(path, content);
}

void run(const Options& o) {
  auto env = parse_env(o);
  if (!env) fail("explain", env.error());
  std::string content;
  if (!o.batch.empty()) {
    auto r = run_batch(o, *env);
    if (!r) fail("explain", r.error());
    content = std::move(*r);
  } else {
    if (o.q.empty()) fail("explain", bad("give --q B,H,S,D (or --batch FILE.jsonl)"));
    auto in = input_from_flags(o);
    if (!in) fail("explain", in.error());
    const Decision d = rules::decide(*in, *env);
    if (o.json) {
      content = rules::decision_json_text(d, *env, rules::explanation_from(*in, *env, d).fix);
    } else {
      content = explain_text(*in, *env, d);
    }
  }
  if (auto s = write_output(o.out, content); !s) fail("explain", s.error());
  exit_with(kExitOk);
}

const Registration kRegistration{40, [](CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("explain", "Why SDPA picks a backend for given inputs, and the fix");
  cmd->add_option("--q", opts->q, "query shape B,H,S,D");
  cmd->add_option("--k", opts->k, "key shape B,H,S,D (default: like --q)");
  cmd->add_option("--v", opts->v, "value shape B,H,S,D (default: like --k)");
  cmd->add_option("--dtype", opts->dtype, "fp16, bf16, fp32, fp64, fp8_e4m3");
  cmd->add_option("--mask", opts->mask, "attn_mask kind: none, bool, float");
  cmd->add_option("--mask-shape", opts->mask_shape, "attn_mask shape, e.g. 2,1,256,256");
  cmd->add_flag("--causal", opts->causal, "is_causal=True");
  cmd->add_option("--dropout", opts->dropout, "dropout_p");
  cmd->add_flag("--gqa", opts->gqa, "enable_gqa=True");
  cmd->add_flag("--grad", opts->grad, "inputs require grad (training)");
  cmd->add_flag("--nested", opts->nested, "nested (jagged) inputs");
  cmd->add_flag("--deterministic", opts->deterministic, "torch.use_deterministic_algorithms(True)");
  cmd->add_option("--backends", opts->backends, "enabled SDPA backends, as sdpa_kernel([...]): flash,efficient,cudnn,math");
  cmd->add_option("--arch", opts->arch, "sm90, sm80, gfx942, cpu, ... (default sm90)");
  cmd->add_option("--torch", opts->torch, "torch version (default 2.11)");
  cmd->add_option("--cudnn", opts->cudnn, "cuDNN version (default 9.19)");
  cmd->add_option("--batch", opts->batch, "JSON lines of grid rows ('-' = stdin); writes one JSON line per row");
  cmd->add_option("-o,--out", opts->out, "output file ('-' = stdout)");
  cmd->add_flag("--json", opts->json, "JSON output for a single call");
  cmd->callback([opts] { run(*opts); });
}};

}  // namespace
}  // namespace attnprof::cli
