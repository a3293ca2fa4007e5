// attnprof predict --model NAME | --config config.json ... : per-S memory and time and the
// OOM threshold from a model config alone (nothing is run).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/cost_render.h"
#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/predict.h"
#include "attnprof/report_json.h"
#include "attnprof/text_format.h"
#include "command.h"

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
  std::vector<int64_t> lengths = {512, 1024, 2048, 4096, 8192, 16384, 32768};
  bool use_cache = false;
  std::string json_path;
  std::string html_path;
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
  options.lengths = o.lengths;
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
  if (!o.json_path.empty())
    if (Status s = write_file_atomic(o.json_path, report_to_json(report)); !s) fail("predict", s.error());
  if (!o.html_path.empty()) {
    const DashboardOptions view{.labels = {}, .sections = {"scaling"}, .diff_json = ""};
    if (Status s = write_file_atomic(o.html_path, render_html({report}, view)); !s) fail("predict", s.error());
  }
  std::fputs(fmt::format("{}: {} parameters, weights {}\n", model->name, parameter_count(*model),
                         bytes_text(static_cast<double>(prediction->rows.empty() ? 0 : prediction->rows[0].weights_bytes)))
                 .c_str(),
             stdout);
  std::fputs(render_cost_text(report).c_str(), stdout);
  return kExitOk;
}

void setup_predict(CLI::App& app) {
  auto o = std::make_shared<PredictCliOptions>();
  CLI::App* cmd = app.add_subcommand("predict", "Predict memory, time and the OOM threshold per sequence length "
                                                "from a model config, without running anything");
  auto* model = cmd->add_option("--model", o->model, "a known model: llama-2-7b, llama-3-8b, mistral-7b, gpt2, ...");
  auto* config = cmd->add_option("--config", o->config_path, "a Hugging Face config.json")->check(CLI::ExistingFile);
  model->excludes(config);
  cmd->add_option("--batch", o->batch, "batch size")->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", o->dtype, "bf16, fp16, fp32");
  cmd->add_option("--attn", o->attn, "eager (materialised scores) or sdpa (fused)")->check(CLI::IsMember({"eager", "sdpa"}));
  cmd->add_option("--gpu", o->gpu, "GPU for the time estimate and the memory budget, e.g. A100-80GB");
  cmd->add_option("--memory-cap", o->memory_cap, "memory budget, e.g. 24GiB (overrides the GPU's memory)");
  cmd->add_option("--lengths", o->lengths, "sequence lengths")->delimiter(',');
  cmd->add_flag("--use-cache", o->use_cache, "count the KV cache the pass keeps (generation prefill)");
  cmd->add_option("--json", o->json_path, "write the Report as JSON");
  cmd->add_option("--html", o->html_path, "write memory and time against S as a self-contained HTML page");
  cmd->callback([o, model, config] {
    if (model->count() + config->count() == 0)
      fail("predict", make_error(ErrorCode::kInvalidArgument, "give --model NAME or --config config.json"));
    exit_with(run_predict(*o));
  });
}

const Registration kRegistration(61, setup_predict);

}  // namespace
}  // namespace attnprof::cli
