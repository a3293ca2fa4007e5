// `attnprof matrix`: which attention kernels can run per GPU and dtype (kernel_matrix.h, shared
// with attnprof.matrix).
#include <memory>

#include "attnprof/kernel_matrix.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct Options {
  MatrixRequest request;
  std::string gpus = kDefaultMatrixGpus, dtypes = "fp16,bf16,fp32";
  std::string old_out;  // -o/--out FILE: the old spelling of --text FILE (of --md FILE after a bare --markdown)
  OutputOptions outputs;
};

void apply_old_out(Options& o, const CLI::Option* out) {
  if (out->count() == 0) return;
  auto& markdown = o.outputs.paths["markdown"];
  (markdown && markdown->empty() ? markdown : o.outputs.paths["text"]) = o.old_out;
}

void run(Options& o, const CLI::Option* out) {
  apply_old_out(o, out);
  o.request.gpus = comma_list(o.gpus);
  o.request.dtypes = comma_list(o.dtypes);
  Result<Table> table = kernel_matrix(o.request);
  if (!table) fail("matrix", table.error());
  if (Status s = write_document_outputs(o.outputs, table_document(std::move(*table))); !s) fail("matrix", s.error());
  exit_with(kExitOk);
}

const Registration kRegistration{41, [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  MatrixRequest& r = o->request;
  CLI::App* cmd = app.add_subcommand("matrix", "Which attention kernels run per GPU and dtype (from the rules)");
  add_word(*cmd, kGpuFlag, o->gpus)->capture_default_str();  // a comma list here
  add_word(*cmd, kDtypeFlag, o->dtypes)->capture_default_str();
  cmd->add_option("--head-dim", r.head_dim, "head dim of the probe input (default 128)");
  cmd->add_option("--seq-len", r.seq_len, "sequence length of the probe input (default 2048)");
  cmd->add_option("--mask", r.mask, "none, bool or float (default none)");
  cmd->add_flag("--grad", r.grad, "training (inputs require grad)");
  add_word(*cmd, kTorchFlag, r.torch)->capture_default_str();
  add_word(*cmd, kCudnnFlag, r.cudnn)->capture_default_str();
  add_document_options(*cmd, o->outputs, "the table", true);
  CLI::Option* out = cmd->add_option("-o,--out", o->old_out, "old spelling of --text FILE")->group("");
  add_deprecated(o->outputs, out, "--text FILE (or --md FILE)");
  cmd->callback([o, out] { run(*o, out); });
}};

}  // namespace
}  // namespace attnprof::cli
