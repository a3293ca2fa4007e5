#include "attnprof/kernel_matrix.h"

#include <fmt/format.h>

#include <sstream>

#include "attnprof/explain_input.h"
#include "attnprof/hw.h"
#include "attnprof/rules.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

using rules::Backend;

constexpr Backend kColumns[] = {Backend::kFlash, Backend::kEfficient, Backend::kCudnn, Backend::kCpuFlash,
                                Backend::kFa2,   Backend::kFa3,       Backend::kXformers, Backend::kFlex};

Error bad(std::string message) { return make_error(ErrorCode::kInvalidArgument, std::move(message)); }

std::string cell(const rules::Decision& d, Backend b) {
  const rules::Verdict* v = d.verdict(b);
  if (!v) return "-";
  if (v->eligible) return "yes";
  return "no: " + v->failed.front().rule.substr(v->failed.front().rule.find('.') + 1);
}

Result<std::vector<std::string>> rule_dtypes(const std::vector<std::string>& given) {
  std::vector<std::string> dtypes;
  for (const auto& name : given.empty() ? std::vector<std::string>{"fp16", "bf16", "fp32"} : given) {
    auto dt = rules::parse_dtype(name);  // the dtypes the rules reason about (vocabulary.h)
    if (!dt) return bad("dtype: " + dt.error().message);
    dtypes.push_back(*dt);
  }
  return dtypes;
}

Result<rules::Env> env_for_gpu(const std::string& gpu, const rules::Version& torch, const rules::Version& cudnn) {
  const GpuSpec* spec = find_gpu_spec(gpu);
  if (!spec) return bad(fmt::format("unknown GPU '{}' (known: {})", gpu, gpu_spec_names()));
  auto device = rules::parse_arch(spec->arch);
  if (!device) return device.error();
  rules::Env env;
  env.torch = torch;
  env.device = *device;
  env.cudnn = device->kind == rules::DeviceKind::kCuda ? cudnn : rules::Version{};
  return env;
}

rules::SdpaInput probe(const MatrixRequest& r, const std::string& dtype, rules::MaskKind mask) {
  rules::SdpaInput in;
  in.B = 1, in.Hq = in.Hkv = 32, in.Sq = in.Skv = r.seq_len, in.D = in.Dv = r.head_dim;
  in.dtype = dtype;
  in.causal = r.causal && mask == rules::MaskKind::kNone;
  in.mask = mask;
  in.requires_grad = r.grad;
  return in;
}

Table empty_table(const MatrixRequest& r, const rules::Version& torch, const rules::Version& cudnn) {
  Table t;
  t.title = fmt::format("Kernel availability (torch {}, cuDNN {} on NVIDIA; B=1, H=32, S={}, head_dim={}, mask={}{}{})",
                        torch.str(), cudnn.str(), r.seq_len, r.head_dim, r.mask,
                        r.causal && r.mask == "none" ? ", causal" : "", r.grad ? ", training" : ", inference");
  t.header = {"GPU", "arch", "dtype", "SDPA picks"};
  for (Backend b : kColumns) t.header.push_back(rules::backend_name(b));
  t.notes.push_back("\"no: X\" names the first failing rule (docs/rules.md); `attnprof explain` shows all of them.");
  return t;
}

}  // namespace

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  std::string p;
  while (std::getline(ss, p, ','))
    if (!p.empty()) parts.push_back(p);
  return parts;
}

std::string rule_dtype_names() {
  std::string names;
  for (const DtypeWord& w : kDtypeWords)
    if (w.rules) names += (names.empty() ? "" : ",") + std::string(w.name);
  return names;
}

Result<Table> kernel_matrix(const MatrixRequest& r) {
  auto torch = rules::parse_version(r.torch);
  if (!torch) return torch.error();
  auto cudnn = rules::parse_version(r.cudnn);
  if (!cudnn) return cudnn.error();
  auto mask = rules::parse_mask(r.mask);
  if (!mask) return bad("mask: expected none, bool or float");
  if (r.head_dim <= 0 || r.seq_len <= 0) return bad("head dim and sequence length must be positive");
  auto dtypes = rule_dtypes(r.dtypes);
  if (!dtypes) return dtypes.error();
  Table t = empty_table(r, *torch, *cudnn);
  for (const auto& gpu : r.gpus.empty() ? comma_list(kDefaultMatrixGpus) : r.gpus) {
    auto env = env_for_gpu(gpu, *torch, *cudnn);
    if (!env) return env.error();
    for (const auto& dt : *dtypes) {
      const rules::Decision d = rules::decide(probe(r, dt, *mask), *env);
      std::vector<std::string> row = {gpu, find_gpu_spec(gpu)->arch, dt, d.choice};
      for (Backend b : kColumns) row.push_back(cell(d, b));
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

}  // namespace attnprof
