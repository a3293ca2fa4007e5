// attnprof predict --model NAME | --config config.json ... : per-S memory and time and the
// OOM threshold from a model config alone (nothing is run).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/predict.h"
#include "attnprof/report_json.h"
#include "attnprof/text_format.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct PredictCliOptions {
  std::string model;
  std::string config_path;
  int64_t batch = 1;
  std::string dtype = "bf16";
  std::string attn = "sdpa";
  std::string gpu;
  std::string memory_cap;
  std::string lengths = "512,1024,2048,4096,8192,16384,32768";
  bool use_cache = false;
  OutputOptions outputs;
};

Result<ModelConfig> load_model(const PredictCliOptions& o) {
  if (!o.config_path.empty()) {
    auto text = read_text_file(o.config_path);
    if (!text) return text.error();
    return model_config_from_json(*text, o.config_path);
  }
  if (const ModelConfig* known = find_known_model(o.model)) return *known;
  std::string names;
  for (const auto& m : known_models()) names += (names.empty() ? "" : ", ") + m.name;
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("unknown model '{}' (known: {}; or pass --config config.json)", o.model, names));
}

int run_predict(const PredictCliOptions& o) {
  auto model = load_model(o);
  if (!model) fail("predict", model.error());
  PredictOptions options;
  options.batch = o.batch;
  options.dtype = o.dtype;
  options.attn = o.attn;
  options.use_cache = o.use_cache;
  auto lengths = lengths_argument(o.lengths);
  if (!lengths) fail("predict", lengths.error());
  for (const LengthBin& bin : *lengths)
    if (std::find(options.lengths.begin(), options.lengths.end(), bin.tokens) == options.lengths.end())
      options.lengths.push_back(bin.tokens);
  std::sort(options.lengths.begin(), options.lengths.end());
  if (!o.gpu.empty()) {
    options.gpu = find_gpu_spec(o.gpu);
    if (options.gpu == nullptr)
      fail("predict", make_error(ErrorCode::kInvalidArgument,
                                 fmt::format("unknown GPU '{}' (known: {})", o.gpu, gpu_spec_names())));
  }
  auto budget = choose_memory_budget(o.memory_cap, o.gpu, SourceInfo{});
  if (!budget) fail("predict", budget.error());
  options.budget = *budget;
  auto prediction = predict(*model, options);
  if (!prediction) fail("predict", prediction.error());
  const Report report = prediction_report(*model, options, *prediction);
  const std::string model_line =
      fmt::format("{}: {} parameters, weights {}", model->name, parameter_count(*model),
                  bytes_text(static_cast<double>(prediction->rows.empty() ? 0 : prediction->rows[0].weights_bytes)));
  const Document doc = cost_document(report, model_line, {.labels = {}, .sections = {"scaling"}});
  if (Status s = write_document_outputs(o.outputs, doc); !s) fail("predict", s.error());
  return kExitOk;
}

void setup_predict(CLI::App& app) {
  auto o = std::make_shared<PredictCliOptions>();
  CLI::App* cmd = app.add_subcommand("predict", "Predict memory, time and the OOM threshold per sequence length "
                                                "from a model config, without running anything");
  auto* model = add_word(*cmd, kModelFlag, o->model);
  auto* config = add_word(*cmd, kConfigFlag, o->config_path)->check(CLI::ExistingFile);
  model->excludes(config);
  cmd->add_option("--batch", o->batch, "batch size")->check(CLI::PositiveNumber);
  add_word(*cmd, kDtypeFlag, o->dtype)->capture_default_str();
  cmd->add_option("--attn", o->attn, "eager (materialised scores) or sdpa (fused)")->check(CLI::IsMember({"eager", "sdpa"}));
  add_word(*cmd, kGpuFlag, o->gpu);
  add_word(*cmd, kMemoryCapFlag, o->memory_cap);
  add_word(*cmd, kLengthsFlag, o->lengths)->capture_default_str();
  cmd->add_flag("--use-cache", o->use_cache, "count the KV cache the pass keeps (generation prefill)");
  add_document_options(*cmd, o->outputs, "the Report (memory and time against S)", true);
  cmd->callback([o, model, config] {
    if (model->count() + config->count() == 0)
      fail("predict", make_error(ErrorCode::kInvalidArgument, "give --model NAME or --config config.json"));
    exit_with(run_predict(*o));
  });
}

const Registration kRegistration(61, setup_predict);

}  // namespace
}  // namespace attnprof::cli
