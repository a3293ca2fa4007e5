// The facade: trace -> Report. A readable list of stage calls; each stage lives in its own
// folder under cpp/src and is tested on its own. To add a stage, add ONE call below.
#include "attnprof/analyze.h"

#include <fmt/format.h>

#include <algorithm>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "attnprof/diff.h"
#include "attnprof/heads.h"
#include "attnprof/cost.h"
#include "attnprof/hw.h"
#include "attnprof/ingest.h"
#include "attnprof/rules.h"
#include "attnprof/trace_index.h"

namespace attnprof {
namespace {

SourceInfo describe_source(const Trace& trace, const AnalyzeOptions& options) {
  SourceInfo source;
  source.files.push_back(trace.path);
  source.event_count = trace.event_count;
  if (!trace.meta.devices.empty()) {
    const DeviceProperties& d = trace.meta.devices.front();
    source.device_name = d.name;
    source.device_memory_bytes = d.total_global_mem;
    source.arch = gpu_arch(d.name, d.compute_major, d.compute_minor);
  }
  source.versions = trace.meta.versions;
  if (options.torch_version) source.versions.emplace_back("torch", *options.torch_version);
  if (options.cudnn_version) source.versions.emplace_back("cudnn", *options.cudnn_version);
  if (options.arch) source.arch = *options.arch;
  return source;
}

// One readable line per ingest issue (Trace::issues, docs/ingest.md) for SourceInfo::missing:
// what was done to the events and, where obvious, which numbers it weakens.
std::string describe_ingest_issue(const IngestIssue& issue) {
  std::string what;
  if (issue.kind == "negative_duration")
    what = "events with negative duration were kept with duration 0 (device times and fused share may be low)";
  else if (issue.kind == "missing_duration")
    what = "events without a duration were kept with duration 0 (device times and fused share may be low)";
  else if (issue.kind == "missing_ts")
    what = "events without a timestamp were ignored (calls and layers may be missing)";
  else if (issue.kind == "duplicate_correlation")
    what = "runtime events share one CUPTI correlation id (kernel-to-call attribution may be wrong)";
  else if (issue.kind == "ignored_begin_end_event")
    what = "B/E phase events were ignored (only complete X events are read)";
  else if (issue.kind == "non_utf8_text")
    what = "invalid UTF-8 bytes were replaced by '?' (names holding them may not match kernel patterns)";
  else
    what = fmt::format("events had a {} problem and were kept or skipped as docs/ingest.md says", issue.kind);
  std::string line = fmt::format("{} {}", issue.count, what);
  if (!issue.samples.empty()) line += fmt::format(" (e.g. {})", issue.samples.front());
  return line;
}

// What the trace lacks and what that weakens, for SourceInfo::missing.
void note_missing(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls, SourceInfo& source) {
  if (index.gpu_slices.empty())
    source.missing.push_back("no GPU activity: device time of a call is the CPU time of its op");
  // The live capture (merged before this runs) gives module paths a trace alone lacks.
  const bool calls_lack_modules =
      std::any_of(calls.begin(), calls.end(), [](const Call& c) { return c.module.empty(); });
  if (!index.has_python_tree && calls_lack_modules)
    source.missing.push_back("no python_function events (with_stack=False): no module paths, layers by execution order");
  if (!trace.meta.record_shapes && !calls.empty() && calls.front().shape.Sq == 0)
    source.missing.push_back("no shapes (record_shapes=False): no B/H/S/D, FLOPs or TFLOP/s");
  size_t orphans = 0;
  for (const uint32_t g : index.orphan_gpu_slices) {
    const KernelPattern* p = classify_kernel(trace.name_of(trace.slices[g]));
    if (p && p->kind == KernelKind::kFusedAttention) ++orphans;
  }
  if (orphans)
    source.missing.push_back(fmt::format(
        "{} attention kernel(s) have no CPU launch in the trace (started before the profiling window); "
        "they are not counted as calls", orphans));
  for (const IngestIssue& issue : trace.issues) source.missing.push_back(describe_ingest_issue(issue));
}

// Only verdicts that say something: a FlexAttention call, masked work the trace proves, or a
// mask whose kind is known (its fix).
void add_window_verdicts(Report& report, const Trace& trace) {
  std::vector<WindowEffectiveness> verdicts;
  for (WindowEffectiveness& w : sliding_window_effectiveness(report, &trace))
    if (w.mask == "block_mask" || w.masked_fraction >= 0 || w.masked_fraction_min > 0 || w.mask_kind != "unknown")
      verdicts.push_back(std::move(w));
  if (verdicts.empty()) return;
  for (Finding& f : sliding_window_findings(verdicts)) report.findings.push_back(std::move(f));
  report.heads.emplace();
  report.heads->sliding_window = std::move(verdicts);
  report.heads->notes.push_back(
      "per-head statistics need Q/K: attnprof.profile(heads=True), or attnprof heads FILE.safetensors");
}

}  // namespace

Report analyze_trace(const Trace& trace, const AnalyzeOptions& options) {
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.source = describe_source(trace, options);
  const TraceIndex index = build_trace_index(trace);

  // The live-capture sidecar (cpp/src/capture), when the run wrote one.
  auto sidecar = find_sidecar(trace, options.sidecar_path);
  if (!sidecar) report.source.missing.push_back(sidecar.error().message);
  const LoadedSidecar* capture = sidecar && sidecar->has_value() ? &**sidecar : nullptr;

  // Attention extraction (cpp/src/attention), plus the calls only the capture can name
  // (work that ran in a torch.compile'd graph).
  report.calls = extract_attention_calls(trace, index);
  if (capture) add_compiled_graph_calls(report.calls, trace, index, capture->sidecar);
  attribute_layers(trace, index, report.calls);
  report.layers = build_layers(report.calls);
  report.summary = summarize_attention(trace, index, report.calls);
  report.source.code = detect_code_info(trace, report);  // git commit of the traced project (cpp/src/diff)

  // Later stages: one call each, in this order.
  // Live capture (cpp/src/capture): module paths, PyTorch's own choice; before the rules.
  if (capture) {
    merge_capture(report, trace, capture->sidecar);
    report.source.files.push_back(capture->path);
  }
  note_missing(trace, index, report.calls, report.source);  // after the capture filled what it could

  report.findings = core_findings(report);
  // Backend eligibility (cpp/src/rules): Call::explanation + one finding per fallback cause;
  // after core_findings, which replaces the list.
  rules::explain_calls(report, {options.torch_version.value_or(""), options.cudnn_version.value_or(""),
                                options.arch.value_or("")});
  // Cost (cpp/src/analysis): Call::cost, Layer::cost (roofline, memory during each call) and
  // a roofline finding per backend; after core_findings, which replaces the list.
  add_cost_analysis(report, trace);
  // Sliding-window effectiveness (cpp/src/heads): whether the kernel of a masked or windowed
  // call skips the masked work; per-head statistics need Q/K and are added by attach_heads.
  add_window_verdicts(report, trace);
  return report;
}

IngestOptions ingest_options_of(const AnalyzeOptions& options) {
  IngestOptions ingest;
  ingest.progress = options.progress;
  ingest.threads = options.ingest_threads;
  return ingest;
}

Result<Report> analyze_file(const std::string& path, const AnalyzeOptions& options) {
  Result<Trace> trace = load_trace(path, ingest_options_of(options));
  if (!trace) return trace.error();
  return analyze_trace(*trace, options);
}

}  // namespace attnprof
