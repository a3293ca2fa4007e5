// attnprof whatif --lengths FILE --model NAME --window W [--global-tokens G] : attention FLOPs
// and KV memory of a request-length distribution, full attention vs a sliding window.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/cost_render.h"
#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/predict.h"
#include "attnprof/report_json.h"
#include "command.h"

namespace attnprof::cli {
namespace {

struct WhatIfOptions {
  std::string lengths_path;
  std::string model;
  std::string config_path;
  int64_t window = 0;
  int64_t global_tokens = 0;
  std::string dtype = "bf16";
  std::string json_path;
  std::string html_path;
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
  auto text = read_text_file(o.lengths_path);
  if (!text) fail("whatif", text.error());
  auto bins = parse_length_distribution(*text);
  if (!bins) fail("whatif", make_error(bins.error().code, o.lengths_path + ": " + bins.error().message));
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.source.files.push_back(o.lengths_path);
  report.whatif = what_if(model, *bins, o.window, o.global_tokens, o.dtype);
  if (!o.json_path.empty())
    if (Status s = write_file_atomic(o.json_path, report_to_json(report)); !s) fail("whatif", s.error());
  if (!o.html_path.empty()) {
    DashboardOptions view{.labels = {}, .sections = {"whatif"}, .diff_json = "", .request_lengths = {}};
    for (const LengthBin& bin : *bins) view.request_lengths.emplace_back(bin.tokens, bin.count);
    if (Status s = write_file_atomic(o.html_path, render_html({report}, view)); !s) fail("whatif", s.error());
  }
  std::fputs(render_cost_text(report).c_str(), stdout);
  return kExitOk;
}

void setup_whatif(CLI::App& app) {
  auto o = std::make_shared<WhatIfOptions>();
  CLI::App* cmd = app.add_subcommand("whatif", "Attention FLOPs and KV memory of a request-length distribution: "
                                               "full attention vs a sliding window");
  cmd->add_option("--lengths", o->lengths_path, "token counts: one per line, CSV length,count, or JSONL")
      ->required()
      ->check(CLI::ExistingFile);
  auto* model = cmd->add_option("--model", o->model, "a known model (llama-2-7b, mistral-7b, ...)");
  cmd->add_option("--config", o->config_path, "a Hugging Face config.json")->check(CLI::ExistingFile)->excludes(model);
  cmd->add_option("--window", o->window, "sliding window in tokens")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--global-tokens", o->global_tokens, "tokens every query also attends to (sinks)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--dtype", o->dtype, "KV cache dtype: bf16, fp16, fp32, fp8");
  cmd->add_option("--json", o->json_path, "write the Report (whatif section) as JSON");
  cmd->add_option("--html", o->html_path, "write the length distribution and the savings as a self-contained HTML page");
  cmd->callback([o] {
    if (o->model.empty() && o->config_path.empty())
      fail("whatif", make_error(ErrorCode::kInvalidArgument, "give --model NAME or --config config.json"));
    exit_with(run_whatif(*o));
  });
}

const Registration kRegistration(62, setup_whatif);

}  // namespace
}  // namespace attnprof::cli
