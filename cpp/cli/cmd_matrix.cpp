// `attnprof matrix`: which attention kernels can run per GPU and dtype, from the rule data
// (the same rules as `explain` and `analyze`). GPU -> arch comes from the spec table (hw.h).
#include <fmt/format.h>

#include <sstream>

#include "attnprof/explain_input.h"
#include "attnprof/hw.h"
#include "attnprof/io.h"
#include "attnprof/rules.h"
#include "command.h"

namespace attnprof::cli {
namespace {

using rules::Backend;

constexpr const char* kDefaultGpus = "A100,H100,H200,B200,L4,RTX 4090,MI300X,MI350X,CPU";

struct Options {
  std::string gpus = kDefaultGpus;
  std::string dtypes = "fp16,bf16,fp32";
  std::string torch = "2.11", cudnn = "9.19", mask = "none";
  int64_t head_dim = 128, seq_len = 2048;
  bool causal = true, grad = false, markdown = false;
  std::string out = "-";
};

// The dtypes the rules reason about, comma-separated (the vocabulary's rows).
std::string rule_dtype_names() {
  std::string names;
  for (const DtypeWord& w : kDtypeWords)
    if (w.rules) names += (names.empty() ? "" : ",") + std::string(w.name);
  return names;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string p;
  while (std::getline(ss, p, ','))
    if (!p.empty()) parts.push_back(p);
  return parts;
}

constexpr Backend kColumns[] = {Backend::kFlash, Backend::kEfficient, Backend::kCudnn, Backend::kCpuFlash,
                                Backend::kFa2, Backend::kFa3, Backend::kXformers, Backend::kFlex};

std::string cell(const rules::Decision& d, Backend b) {
  const rules::Verdict* v = d.verdict(b);
  if (!v) return "-";
  if (v->eligible) return "yes";
  return "no: " + v->failed.front().rule.substr(v->failed.front().rule.find('.') + 1);
}

void run(const Options& o) {
  auto torch = rules::parse_version(o.torch);
  if (!torch) fail("matrix", torch.error());
  auto cudnn = rules::parse_version(o.cudnn);
  if (!cudnn) fail("matrix", cudnn.error());
  if (o.mask != "none" && o.mask != "bool" && o.mask != "float")
    fail("matrix", make_error(ErrorCode::kInvalidArgument, "--mask: expected none, bool or float"));
  if (o.head_dim <= 0 || o.seq_len <= 0)
    fail("matrix", make_error(ErrorCode::kInvalidArgument, "--head-dim and --seq-len must be positive"));
  std::vector<std::string> dtypes;
  for (const auto& given : split(o.dtypes)) {
    auto dt = rules::parse_dtype(given);  // the dtypes the rules reason about (vocabulary.h)
    if (!dt) fail("matrix", make_error(ErrorCode::kInvalidArgument, "--dtype: " + dt.error().message));
    dtypes.push_back(*dt);
  }

  std::vector<std::string> header = {"GPU", "arch", "dtype", "SDPA picks"};
  for (Backend b : kColumns) header.push_back(rules::backend_name(b));
  std::vector<std::vector<std::string>> rows;
  for (const auto& gpu : split(o.gpus)) {
    const GpuSpec* spec = find_gpu_spec(gpu);
    if (!spec)
      fail("matrix", make_error(ErrorCode::kInvalidArgument,
                                fmt::format("unknown GPU '{}' (known: {})", gpu, gpu_spec_names())));
    auto device = rules::parse_arch(spec->arch);
    if (!device) fail("matrix", device.error());
    rules::Env env;
    env.torch = *torch;
    env.device = *device;
    env.cudnn = device->kind == rules::DeviceKind::kCuda ? *cudnn : rules::Version{};
    for (const auto& dt : dtypes) {
      rules::SdpaInput in;
      in.B = 1, in.Hq = in.Hkv = 32, in.Sq = in.Skv = o.seq_len, in.D = in.Dv = o.head_dim;
      in.dtype = dt;
      in.causal = o.causal && o.mask == "none";
      in.mask = o.mask == "bool" ? rules::MaskKind::kBool : o.mask == "float" ? rules::MaskKind::kFloat : rules::MaskKind::kNone;
      in.requires_grad = o.grad;
      const rules::Decision d = rules::decide(in, env);
      std::vector<std::string> row = {gpu, spec->arch, dt, d.choice};
      for (Backend b : kColumns) row.push_back(cell(d, b));
      rows.push_back(std::move(row));
    }
  }

  std::string out = fmt::format(
      "Kernel availability (torch {}, cuDNN {} on NVIDIA; B=1, H=32, S={}, head_dim={}, mask={}{}{})\n", torch->str(),
      cudnn->str(), o.seq_len, o.head_dim, o.mask, o.causal && o.mask == "none" ? ", causal" : "",
      o.grad ? ", training" : ", inference");
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    width[i] = header[i].size();
    for (const auto& r : rows) width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::string s = o.markdown ? "|" : "";
    for (size_t i = 0; i < r.size(); ++i)
      s += o.markdown ? fmt::format(" {} |", r[i]) : fmt::format("{:<{}}  ", r[i], width[i]);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(header);
  if (o.markdown) out += line(std::vector<std::string>(header.size(), "---"));
  for (const auto& r : rows) out += line(r);
  out += "\"no: X\" names the first failing rule (docs/rules.md); `attnprof explain` shows all of them.\n";
  Status s = o.out == "-" ? Status(Ok{}) : write_file_atomic(o.out, out);
  if (!s) fail("matrix", s.error());
  if (o.out == "-") std::fwrite(out.data(), 1, out.size(), stdout);
  exit_with(kExitOk);
}

const Registration kRegistration{41, [](CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("matrix", "Which attention kernels run per GPU and dtype (from the rules)");
  cmd->add_option("--gpu", opts->gpus, "comma-separated GPU names (default: " + std::string(kDefaultGpus) + ")");
  cmd->add_option("--dtype", opts->dtypes,
                  "comma-separated dtypes, any of " + rule_dtype_names() + " (default fp16,bf16,fp32)");
  cmd->add_option("--head-dim", opts->head_dim, "head dim of the probe input (default 128)");
  cmd->add_option("--seq-len", opts->seq_len, "sequence length of the probe input (default 2048)");
  cmd->add_option("--mask", opts->mask, "none, bool or float (default none)");
  cmd->add_flag("--grad", opts->grad, "training (inputs require grad)");
  cmd->add_option("--torch", opts->torch, "torch version (default 2.11)");
  cmd->add_option("--cudnn", opts->cudnn, "cuDNN version (default 9.19)");
  cmd->add_flag("--markdown", opts->markdown, "Markdown table");
  cmd->add_option("-o,--out", opts->out, "output file ('-' = stdout)");
  cmd->callback([opts] { run(*opts); });
}};

}  // namespace
}  // namespace attnprof::cli
