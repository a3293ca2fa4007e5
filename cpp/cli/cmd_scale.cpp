// attnprof scale TRACE... : one trace per sequence length (and/or per forced backend) ->
// time/memory fits per backend, OOM threshold for a budget, backend advice.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/analyze.h"
#include "attnprof/cost_render.h"
#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/report_json.h"
#include "attnprof/scaling.h"
#include "command.h"

namespace attnprof::cli {
namespace {

struct ScaleOptions {
  std::vector<std::string> traces;
  std::string memory_cap;  // "24GiB"
  std::string gpu;         // "A100-80GB"
  std::string alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF to simulate
  std::string json_path;
  std::string markdown_path;
  std::string html_path;
};

int run_scale(const ScaleOptions& o) {
  Result<Report> report = scale_traces(o.traces, o.memory_cap, o.gpu, o.alloc_conf);
  if (!report) fail("scale", report.error());
  if (!o.json_path.empty())
    if (Status s = write_file_atomic(o.json_path, report_to_json(*report)); !s) fail("scale", s.error());
  if (!o.markdown_path.empty())
    if (Status s = write_file_atomic(o.markdown_path, render_cost_markdown(*report)); !s) fail("scale", s.error());
  if (!o.html_path.empty()) {
    const DashboardOptions view{.labels = {}, .sections = {"scaling", "advice"}, .diff_json = ""};
    if (Status s = write_file_atomic(o.html_path, render_html({*report}, view)); !s) fail("scale", s.error());
  }
  std::fputs(render_cost_text(*report).c_str(), stdout);
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
  auto* cap = cmd->add_option("--memory-cap", o->memory_cap, "memory budget, e.g. 24GiB or 80GB");
  cmd->add_option("--gpu", o->gpu, "budget = this GPU's memory, e.g. A100-80GB, H100-SXM, MI300X")->excludes(cap);
  cmd->add_option("--alloc-conf", o->alloc_conf,
                  "PYTORCH_CUDA_ALLOC_CONF of the run to simulate, e.g. expandable_segments:True");
  cmd->add_option("--json", o->json_path, "write the Report (scaling + advice sections) as JSON");
  cmd->add_option("--markdown", o->markdown_path, "write the tables as Markdown");
  cmd->add_option("--html", o->html_path, "write the scaling charts and backend advice as a self-contained HTML page");
  cmd->callback([o] { exit_with(run_scale(*o)); });
}

const Registration kRegistration(60, setup_scale);

}  // namespace
}  // namespace attnprof::cli
