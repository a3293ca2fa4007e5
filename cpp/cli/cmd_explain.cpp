// `attnprof explain`: why SDPA picks a backend for given inputs, what the others lack, and
// the fix (rules::explain_request, shared with attnprof.explain). One call from flags, or
// JSON lines of them (the fields of the grid rows in
// shared/fixtures/h200-torch2.11/sdpa_grid_cuda_sample.json).
#include <iostream>
#include <iterator>
#include <memory>

#include "attnprof/explain_input.h"
#include "attnprof/io.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct Options {
  rules::ExplainRequest request;
  std::string inputs;          // --inputs FILE.jsonl ('-' = stdin)
  std::string old_out;         // -o/--out, the old spelling of --json/--text FILE
  CLI::Option* out_option = nullptr;
  OutputOptions outputs;
};

Result<std::string> read_inputs(const std::string& path) {
  if (path != "-") return read_text_file(path);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// JSON lines in, JSON lines out: every form is the same lines (Markdown fences them).
Document batch_document(std::string lines) {
  auto shared = std::make_shared<const std::string>(std::move(lines));
  Document doc;
  doc.title = "attnprof explain";
  doc.text = doc.json = [shared] { return *shared; };
  doc.markdown = [shared] { return "```json\n" + *shared + "```\n"; };
  return doc;
}

Result<Document> explain(const Options& o) {
  if (o.inputs.empty()) {
    auto answer = rules::explain_request(o.request);
    if (!answer) return answer.error();
    return explain_document(std::move(*answer));
  }
  auto env = rules::env_of(o.request);
  if (!env) return env.error();
  auto text = read_inputs(o.inputs);
  if (!text) return text.error();
  auto lines = rules::explain_batch(*text, o.inputs == "-" ? std::string("<stdin>") : o.inputs, *env);
  if (!lines) return lines.error();
  return batch_document(std::move(*lines));
}

// `-o FILE` wrote what was printed: the JSON with the old bare --json or with JSON lines in,
// else the text.
void apply_old_out(Options& o) {
  if (o.out_option == nullptr || o.out_option->count() == 0) return;
  auto& json = o.outputs.paths["json"];
  const bool as_json = !o.inputs.empty() || (json && json->empty());
  (as_json ? json : o.outputs.paths["text"]) = o.old_out;
}

void run(Options& o) {
  apply_old_out(o);
  Result<Document> doc = explain(o);
  if (!doc) fail("explain", doc.error());
  if (Status s = write_document_outputs(o.outputs, *doc); !s) fail("explain", s.error());
  exit_with(kExitOk);
}

void add_request_options(CLI::App* cmd, rules::ExplainRequest& r) {
  cmd->add_option("--q", r.q, "query shape B,H,S,D");
  cmd->add_option("--k", r.k, "key shape B,H,S,D (default: like --q)");
  cmd->add_option("--v", r.v, "value shape B,H,S,D (default: like --k)");
  add_word(*cmd, kDtypeFlag, r.dtype);
  cmd->add_option("--mask", r.mask, "attn_mask kind: none, bool, float");
  cmd->add_option("--mask-shape", r.mask_shape, "attn_mask shape, e.g. 2,1,256,256");
  cmd->add_flag("--causal", r.causal, "is_causal=True");
  cmd->add_option("--dropout", r.dropout, "dropout_p");
  cmd->add_flag("--gqa", r.gqa, "enable_gqa=True");
  cmd->add_flag("--grad", r.grad, "inputs require grad (training)");
  cmd->add_flag("--nested", r.nested, "nested (jagged) inputs");
  cmd->add_flag("--deterministic", r.deterministic, "torch.use_deterministic_algorithms(True)");
  cmd->add_option("--backends", r.backends, "enabled SDPA backends, as sdpa_kernel([...]): flash,efficient,cudnn,math");
  add_word(*cmd, kArchFlag, r.arch)->capture_default_str();
  add_word(*cmd, kTorchFlag, r.torch)->capture_default_str();
  add_word(*cmd, kCudnnFlag, r.cudnn)->capture_default_str();
}

const Registration kRegistration{40, [](CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("explain", "Why SDPA picks a backend for given inputs, and the fix");
  add_request_options(cmd, o->request);
  CLI::Option* inputs = cmd->add_option(
      "--inputs", o->inputs, "JSON lines of grid rows ('-' = stdin): one decision per row, as JSON lines");
  add_document_options(*cmd, o->outputs, "the decision", true);
  add_deprecated(o->outputs, cmd->add_option("--batch", o->inputs, "old spelling of --inputs")->excludes(inputs)->group(""),
                 "--inputs");
  o->out_option = cmd->add_option("-o,--out", o->old_out, "old spelling of --json/--text FILE")->group("");
  add_deprecated(o->outputs, o->out_option, "--json FILE or --text FILE");
  cmd->callback([o] { run(*o); });
}};

}  // namespace
}  // namespace attnprof::cli
