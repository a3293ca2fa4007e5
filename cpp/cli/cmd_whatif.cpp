// attnprof whatif --lengths FILE --model NAME --window W [--global-tokens G] : attention FLOPs
// and KV memory of a request-length distribution, full attention vs a sliding window.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/predict.h"
#include "attnprof/report_json.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct WhatIfOptions {
  std::string lengths_path;
  std::string model;
  std::string config_path;
  int64_t window = 0;
  int64_t global_tokens = 0;
  std::string dtype = "bf16";
  OutputOptions outputs;
};

int run_whatif(const WhatIfOptions& o) {
  ModelConfig model;
  if (!o.config_path.empty()) {
    auto text = read_text_file(o.config_path);
    if (!text) fail("whatif", text.error());
    auto parsed = model_config_from_json(*text, o.config_path);
    if (!parsed) fail("whatif", parsed.error());
    model = *parsed;
  } else if (const ModelConfig* known = find_known_model(o.model)) {
    model = *known;
  } else {
    fail("whatif", make_error(ErrorCode::kInvalidArgument, fmt::format("unknown model '{}'", o.model)));
  }
  if (dtype_bytes(o.dtype) == 0)
    fail("whatif", make_error(ErrorCode::kInvalidArgument, fmt::format("unknown dtype '{}'", o.dtype)));
  auto bins = lengths_argument(o.lengths_path);
  if (!bins) fail("whatif", bins.error());
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.source.files.push_back(o.lengths_path);
  report.whatif = what_if(model, *bins, o.window, o.global_tokens, o.dtype);
  const Document doc = cost_document(report, "", {.labels = {}, .sections = {"whatif"}});
  if (Status s = write_document_outputs(o.outputs, doc); !s) fail("whatif", s.error());
  return kExitOk;
}

void setup_whatif(CLI::App& app) {
  auto o = std::make_shared<WhatIfOptions>();
  CLI::App* cmd = app.add_subcommand("whatif", "Attention FLOPs and KV memory of a request-length distribution: "
                                               "full attention vs a sliding window");
  add_word(*cmd, kLengthsFlag, o->lengths_path)->required();
  auto* model = add_word(*cmd, kModelFlag, o->model);
  add_word(*cmd, kConfigFlag, o->config_path)->check(CLI::ExistingFile)->excludes(model);
  cmd->add_option("--window", o->window, "sliding window in tokens")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--global-tokens", o->global_tokens, "tokens every query also attends to (sinks)")
      ->check(CLI::NonNegativeNumber);
  add_word(*cmd, kDtypeFlag, o->dtype)->capture_default_str();  // of the KV cache
  add_document_options(*cmd, o->outputs, "the Report (what-if)", true);
  cmd->callback([o] {
    if (o->model.empty() && o->config_path.empty())
      fail("whatif", make_error(ErrorCode::kInvalidArgument, "give --model NAME or --config config.json"));
    exit_with(run_whatif(*o));
  });
}

const Registration kRegistration(62, setup_whatif);

}  // namespace
}  // namespace attnprof::cli
