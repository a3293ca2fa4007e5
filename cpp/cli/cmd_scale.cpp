// attnprof scale TRACE... : one trace per sequence length (and/or per forced backend) ->
// time/memory fits per backend, OOM threshold for a budget, backend advice.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/analyze.h"
#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/report_json.h"
#include "attnprof/scaling.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct ScaleOptions {
  std::vector<std::string> traces;
  std::string memory_cap;  // "24GiB"
  std::string gpu;         // "A100-80GB"
  std::string alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF to simulate
  OutputOptions outputs;
};

int run_scale(const ScaleOptions& o) {
  Result<Report> report = scale_traces(o.traces, o.memory_cap, o.gpu, o.alloc_conf);
  if (!report) fail("scale", report.error());
  const Document doc = cost_document(*report, "", {.labels = {}, .sections = {"scaling", "advice"}});
  if (Status s = write_document_outputs(o.outputs, doc); !s) fail("scale", s.error());
  return kExitOk;
}

void setup_scale(CLI::App& app) {
  auto o = std::make_shared<ScaleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scale", fmt::format("Fit time(S) and memory(S) per backend from one trace per sequence length; OOM threshold; "
                           "backend advice from forced-backend traces (*{}<backend>*)",
                           kForcedBackendMarker));
  cmd->add_option("traces", o->traces, "Kineto traces of the same model at different lengths/backends")
      ->required()
      ->check(CLI::ExistingFile);
  auto* cap = add_word(*cmd, kMemoryCapFlag, o->memory_cap);
  add_word(*cmd, kGpuFlag, o->gpu)->excludes(cap);
  cmd->add_option("--alloc-conf", o->alloc_conf,
                  "PYTORCH_CUDA_ALLOC_CONF of the run to simulate, e.g. expandable_segments:True");
  add_document_options(*cmd, o->outputs, "the Report (scaling and advice)", true);
  cmd->callback([o] { exit_with(run_scale(*o)); });
}

const Registration kRegistration(60, setup_scale);

}  // namespace
}  // namespace attnprof::cli
