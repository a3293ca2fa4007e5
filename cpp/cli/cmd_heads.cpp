// attnprof heads FILE : head utilisation and sparsity.
//   FILE.safetensors  saved Q/K(/V, o_proj) per layer (naming: docs/heads.md) -> per-head
//                     statistics, kinds, pruning / streaming-KV / block-sparse candidates;
//   a trace          -> kernel-level sliding-window verdicts of its attention calls.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "attnprof/analyze.h"
#include "attnprof/dashboard.h"
#include "attnprof/heads.h"
#include "attnprof/ingest.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "command.h"
#include "flags.h"
#include "outputs.h"

namespace attnprof::cli {
namespace {

struct HeadsCliOptions {
  std::string path;
  OutputOptions outputs;
  HeadOptions heads;
  int64_t window = 0;  // sliding window the user knows (traces do not record it)
};

bool is_safetensors(const std::string& path) {
  return path.size() >= 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0;
}

Report heads_report_from_tensors(const HeadsCliOptions& o) {
  HeadOptions opt = o.heads;
  if (o.window > 0) opt.model_window = o.window;
  auto section = analyze_heads_file(o.path, opt);
  if (!section) fail("heads", section.error());
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.source.files.push_back(o.path);
  report.heads = std::move(section).value();
  return report;
}

Report heads_report_from_trace(const HeadsCliOptions& o) {
  auto trace = load_trace(o.path, ingest_options_of({}));
  if (!trace) fail("heads", trace.error());
  Report report = analyze_loaded_trace(*trace);
  HeadsSection section;
  section.sliding_window = sliding_window_effectiveness(report, &trace.value(), o.window);
  if (section.sliding_window.empty())
    section.notes.push_back("no attention call with a materialised Sq x Skv mask or a FlexAttention BlockMask");
  section.notes.push_back("per-head statistics need Q/K: save them with attnprof.heads.save_safetensors()");
  report.heads = std::move(section);
  return report;
}

int run_heads(const HeadsCliOptions& o) {
  const Report report = is_safetensors(o.path) ? heads_report_from_tensors(o) : heads_report_from_trace(o);
  Document doc = report_document(report, {.labels = {}, .sections = {"heads"}});
  // A trace has no per-head statistics: the header alone.
  doc.csv = [&report] { return table_csv(heads_table(*report.heads)); };
  if (Status s = write_document_outputs(o.outputs, doc); !s) fail("heads", s.error());
  return kExitOk;
}

void setup_heads(CLI::App& app) {
  auto o = std::make_shared<HeadsCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "heads", "Head utilisation and sparsity from saved Q/K (.safetensors), or sliding-window verdicts of a trace");
  cmd->add_option("file", o->path, "Q/K tensors (.safetensors, see docs/heads.md) or a trace (.json/.json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  add_document_options(*cmd, o->outputs, "the Report (heads)", true);
  cmd->add_option("--block-size", o->heads.block_size, "block size of the coverage statistics: 64 or 128")
      ->check(CLI::IsMember({64, 128}));
  cmd->add_option("--sink-tokens", o->heads.sink_tokens, "first tokens counted as attention sinks")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--special-tail", o->heads.trailing_special_tokens,
                  "last tokens also counted as special ([SEP]: 1)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--recall-window", o->heads.recall_window, "recent window of the sink+window recall")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--window", o->window, "the model's sliding window in tokens (a trace does not record it)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-query-blocks", o->heads.max_query_blocks,
                  "sample this many query blocks per batch row and head (0 = all; reports the error)")
      ->check(CLI::NonNegativeNumber);
  add_word(*cmd, kThreadsFlag, o->heads.threads)->check(CLI::NonNegativeNumber);
  cmd->callback([o] { exit_with(run_heads(*o)); });
}

const Registration kRegistration(55, setup_heads);

}  // namespace
}  // namespace attnprof::cli
