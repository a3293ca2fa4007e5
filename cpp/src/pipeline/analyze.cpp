// The pipeline: trace -> Report. A readable list of stage calls; each stage lives in its own
// folder under cpp/src, is tested on its own and returns what it found (the calls, the layers,
// a typed section); analyze_trace assembles the sections into the Report, so the order of the
// calls below is the data flow. To add a stage, add ONE call and its assembly line below.
// Reading files (the trace, the sidecar) and running git happen here, outside analyze_trace.
#include "attnprof/analyze.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <utility>

#include "attnprof/attention.h"
#include "attnprof/call_facts.h"
#include "attnprof/capture.h"
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
  source.versions = trace.meta.versions;
  if (options.torch_version) source.versions.emplace_back("torch", *options.torch_version);
  if (options.cudnn_version) source.versions.emplace_back("cudnn", *options.cudnn_version);
  source.measured_peaks = options.measured_peaks;
  return source;
}

// Vendor and model from deviceProperties and the kernel names (cpp/src/hw identify_device).
void identify_source_device(const Trace& trace, const TraceIndex& index, const AnalyzeOptions& options,
                            SourceInfo& source) {
  DeviceEvidence evidence;
  if (!trace.meta.devices.empty()) {
    const DeviceProperties& d = trace.meta.devices.front();
    evidence = {d.name, d.total_global_mem, d.compute_major, d.compute_minor, d.num_sms, d.warp_size, "", false};
  }
  evidence.has_gpu_activity = !index.gpu_slices.empty();
  if (evidence.has_gpu_activity) evidence.kernel_vendor = gpu_vendor_of_kernels(trace, index);
  const DeviceIdentity id = identify_device(evidence);
  source.device_name = id.name;
  source.device_vendor = id.vendor;
  source.device_identified_by = id.identified_by;
  source.device_memory_bytes = evidence.memory_bytes;
  source.arch = id.arch;
  if (options.arch) source.arch = *options.arch;
}

// One readable line per ingest issue (Trace::issues, docs/ingest.md) for SourceInfo::missing:
// what was done to the events and, where obvious, which numbers it weakens.
std::string describe_ingest_issue(const IngestIssue& issue) {
  const IngestIssueWord* word = ingest_issue_word(issue.kind);
  const std::string what =
      word ? std::string(word->effect)
           : fmt::format("events had a {} problem and were kept or skipped as docs/ingest.md says", issue.kind);
  std::string line = fmt::format("{} {}", issue.count, what);
  if (!issue.samples.empty()) line += fmt::format(" (e.g. {})", issue.samples.front());
  return line;
}

// What the trace lacks and what that weakens, for SourceInfo::missing.
void note_missing(const Trace& trace, const TraceIndex& index, const std::vector<Call>& calls,
                  const CatalogExtension* extension, SourceInfo& source) {
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
    const KernelPattern* p = classify_kernel(trace.name_of(trace.slices[g]), extension);
    if (p && p->kind == KernelKind::kFusedAttention) ++orphans;
  }
  if (orphans)
    source.missing.push_back(fmt::format(
        "{} attention kernel(s) have no CPU launch in the trace (started before the profiling window); "
        "they are not counted as calls", orphans));
  for (const IngestIssue& issue : trace.issues) source.missing.push_back(describe_ingest_issue(issue));
}

// The sliding-window stage's output: its verdicts (as the Report's heads section) and findings.
struct WindowSection {
  std::optional<HeadsSection> heads;
  std::vector<Finding> findings;
};

// Only verdicts that say something: a FlexAttention call, masked work the trace proves, or a
// mask whose kind is known (its fix). Per-head statistics need Q/K and are added by attach_heads.
WindowSection window_verdicts(const Report& report, const Trace& trace) {
  std::vector<WindowEffectiveness> verdicts;
  for (WindowEffectiveness& w : sliding_window_effectiveness(report, &trace))
    if (w.mask == mask_kind::kBlockMask || w.masked_fraction >= 0 || w.masked_fraction_min > 0 || w.mask_kind != mask_pattern::kUnknown)
      verdicts.push_back(std::move(w));
  WindowSection section;
  if (verdicts.empty()) return section;
  section.findings = sliding_window_findings(verdicts);
  section.heads.emplace();
  section.heads->sliding_window = std::move(verdicts);
  section.heads->notes.push_back(
      "per-head statistics need Q/K: attnprof.profile(heads=True), or attnprof heads FILE.safetensors");
  return section;
}

// The live capture's versions (torch, transformers) where the trace named none.
void add_versions_if_missing(SourceInfo& source, const std::vector<std::pair<std::string, std::string>>& versions) {
  for (const auto& version : versions) {
    const bool known = std::any_of(source.versions.begin(), source.versions.end(),
                                   [&](const auto& kv) { return kv.first == version.first; });
    if (!known) source.versions.push_back(version);
  }
}

template <typename T>
void append(std::vector<T>& to, std::vector<T> more) {
  for (T& item : more) to.push_back(std::move(item));
}

}  // namespace

size_t threads_after_ingest(size_t requested, double cores_used, double idle_cores, size_t usable) {
  if (requested > 0) return requested;
  const double free_cores = std::max(0.0, cores_used) + std::max(0.0, idle_cores);
  return std::clamp<size_t>(static_cast<size_t>(std::floor(free_cores + 0.5)), 1, std::max<size_t>(usable, 1));
}

FreeCoresProbe::FreeCoresProbe() : cpu_start_s_(process_cpu_seconds()) {}

size_t FreeCoresProbe::threads_for(size_t requested) const {
  const double wall_s = idle_.elapsed_seconds();
  const double cores_used = wall_s > 0 ? (process_cpu_seconds() - cpu_start_s_) / wall_s : 0;
  return threads_after_ingest(requested, cores_used, idle_.idle_cores().value_or(0), usable_cores());
}

namespace {

// The sidecar part of provenance_of; the git part (`code`) comes as given.
Provenance provenance_with(const Trace& trace, const AnalyzeOptions& options, std::optional<CodeInfo> code) {
  Provenance provenance;
  auto sidecar = find_sidecar(trace, options.sidecar_path);
  if (!sidecar) provenance.sidecar_error = sidecar.error().message;
  else if (sidecar->has_value()) provenance.sidecar = std::move(**sidecar);
  provenance.code = std::move(code);
  return provenance;
}

}  // namespace

Provenance provenance_of(const Trace& trace, const AnalyzeOptions& options) {
  return provenance_with(trace, options, code_info_beside(trace.path));
}

namespace {

// The stages that read the TraceIndex: the calls, their layers and summary, and what the
// trace lacks. The index lives only here: the analyses after these read the calls and the
// Trace's own tables, and their memory would otherwise come on top of the index's (~12 KB a
// copy of the LLaMA fixture: at 20 GB, the peak).
// Returns, when no call was recognised, what still resembles attention (attention_candidates).
std::optional<Finding> add_calls(const Trace& trace, const AnalyzeOptions& options, const Provenance& provenance,
                                 const LoadedSidecar* capture, Report& report) {
  const TraceIndex index = build_trace_index(trace, options.tail_threads);
  identify_source_device(trace, index, options, report.source);
  const CatalogExtension* extension = options.kernels ? &*options.kernels : nullptr;

  // The names no catalog knows need the index only: with a second thread, found beside the calls.
  std::future<std::vector<UnrecognisedName>> unrecognised =
      std::async(options.tail_threads > 1 ? std::launch::async : std::launch::deferred,
                 [&] { return unrecognised_attention_names(trace, index, extension); });

  // Attention extraction (cpp/src/attention), plus the calls only the capture can name
  // (work that ran in a torch.compile'd graph).
  report.calls = extract_attention_calls(trace, index, extension);
  if (capture) add_compiled_graph_calls(report.calls, trace, index, capture->sidecar);
  report.steps = attribute_layers(trace, index, report.calls);  // steps, layers, phases, pairs

  // Live capture (cpp/src/capture): module paths, PyTorch's own choice, exact arguments. It
  // reads the forward/backward pairs; what it adds (module paths, shapes a trace without
  // record_shapes lacks) then tells the steps, layers and phases again.
  if (capture) {
    CaptureSection merged = merge_capture(report.calls, report.layers, trace, capture->sidecar);
    add_versions_if_missing(report.source, merged.versions);
    append(report.source.missing, std::move(merged.missing));
    report.source.files.push_back(capture->path);
    for (Call& call : report.calls) finish_call(call, !index.gpu_slices.empty(), nullptr, extension);
    report.steps = attribute_layers(trace, index, report.calls);
  }
  summarize_steps(trace, index, report.calls, report.steps);
  apply_step_lengths(report.steps, report.calls);  // exact FLOPs where the engine's annotation gives lengths
  detect_tensor_parallel(trace, index, report.calls, report.source);
  report.layers = build_layers(report.calls);
  report.summary = summarize_attention(trace, index, report.calls);
  report.summary.phases = summarize_phases(report.calls, report.steps);
  if (auto names = unrecognised.get(); !names.empty()) report.unrecognised = std::move(names);
  if (provenance.code) {  // git commit of the traced project, and the files of its attention modules
    report.source.code = provenance.code;
    report.source.code->source_files = attention_source_files(trace, report);
  }
  note_missing(trace, index, report.calls, extension, report.source);
  return attention_candidates(trace, index, report.calls);
}

}  // namespace

Report analyze_trace(const Trace& trace, const AnalyzeOptions& options, const Provenance& provenance) {
  Report report;
  report.tool_version = ATTNPROF_VERSION;
  report.source = describe_source(trace, options);
  // The live-capture sidecar (cpp/src/capture), when the run wrote one.
  if (!provenance.sidecar_error.empty()) report.source.missing.push_back(provenance.sidecar_error);
  const LoadedSidecar* capture = provenance.sidecar ? &*provenance.sidecar : nullptr;
  // the calls, layers, summary and what is missing
  std::optional<Finding> candidates = add_calls(trace, options, provenance, capture, report);

  // The analyses read the calls as extracted and merged; each returns its section and writes
  // nothing else, so with a second thread the rules and the windows run beside the cost model.
  std::future<std::pair<rules::ExplanationsSection, WindowSection>> beside_cost =
      std::async(options.tail_threads > 1 ? std::launch::async : std::launch::deferred, [&] {
        return std::pair{rules::explain_calls(  // backend eligibility (cpp/src/rules)
                             report.calls, report.source, report.summary.has_gpu,
                             {options.torch_version.value_or(""), options.cudnn_version.value_or(""),
                              options.arch.value_or(""), options.measured_gains}),
                         window_verdicts(report, trace)};  // sliding-window effectiveness (cpp/src/heads)
      });
  CostSection cost =  // roofline, memory during each call (cpp/src/analysis)
      analyze_cost(report.calls, report.layers, report.source, report.summary.has_gpu, trace);
  auto [explanations, windows] = beside_cost.get();

  // The Report: each section where it belongs; findings in the order the sections come, the
  // rules' folded into the core finding of the same cause.
  for (size_t i = 0; i < report.calls.size(); ++i) {
    report.calls[i].explanation = std::move(explanations.calls[i]);
    report.calls[i].cost = std::move(cost.calls[i]);
  }
  for (size_t i = 0; i < report.layers.size(); ++i) report.layers[i].cost = std::move(cost.layers[i]);
  report.summary.shape_groups = std::move(cost.shape_groups);
  report.findings = rules::merge_findings(core_findings(report, std::move(candidates)), std::move(explanations.findings));
  append(report.findings, std::move(cost.findings));
  append(report.findings, std::move(windows.findings));
  append(report.findings, step_findings(report));
  report.heads = std::move(windows.heads);
  return report;
}

IngestOptions ingest_options_of(const AnalyzeOptions& options) {
  IngestOptions ingest;
  ingest.progress = options.progress;
  ingest.threads = options.ingest_threads;
  ingest.reads = analysis_reads();
  if (options.kernels) {  // the user's ops read inputs the built-in list does not name: keep every op's
    ingest.reads.op_inputs = nullptr;
    ingest.reads.nested_op_read = nullptr;
  }
  return ingest;
}

Report analyze_loaded_trace(const Trace& trace, const AnalyzeOptions& options) {
  return analyze_trace(trace, options, provenance_of(trace, options));
}

namespace {

// analyze_file's steps around `load` (the ingest): git runs beside it; the Trace is freed on
// return, before the caller's next step.
template <typename Load>
Result<Report> analyze_ingested(const std::string& path, const AnalyzeOptions& options, Load load) {
  const FreeCoresProbe cores;
  // git runs beside the trace while ingest parses it: its thread waits on git's process, it
  // takes no core from the parse. The one-core pass (--threads 1) runs it after, in turn.
  const auto policy = options.ingest_threads == 1 ? std::launch::deferred : std::launch::async;
  std::future<std::optional<CodeInfo>> code = std::async(policy, code_info_beside, path);
  Result<Trace> trace = load();
  if (!trace) return trace.error();
  AnalyzeOptions tail = options;
  tail.tail_threads = cores.threads_for(options.ingest_threads);
  const Provenance provenance = provenance_with(*trace, options, code.get());
  // Only a trace in a git checkout has its source files read (attention_source_files): the
  // frames kept for them are freed before the index and the analyses, where the peak is.
  if (!provenance.code) std::vector<SourceFrame>().swap(trace->source_frames);
  return analyze_trace(*trace, tail, provenance);
}

}  // namespace

Result<Report> analyze_file(const std::string& path, const AnalyzeOptions& options) {
  return analyze_ingested(path, options, [&] { return load_trace(path, ingest_options_of(options)); });
}

Result<AnalyzedFile> analyze_file_keeping_trace(const std::string& path, const AnalyzeOptions& options) {
  KeptTrace kept{path, {}, {}};
  Result<Report> report = analyze_ingested(path, options, [&]() -> Result<Trace> {
    Result<TraceAndText> loaded = load_trace_keeping_text(path, ingest_options_of(options));
    if (!loaded) return loaded.error();
    kept.text = std::move(loaded->text);
    return std::move(loaded->trace);
  });
  if (!report) return report.error();
  Result<TraceEventsLayout> layout = scan_trace_layout(kept.text, kernel_correlations(*report));
  if (!layout) return make_error(layout.error().code, path + ": " + layout.error().message);
  kept.layout = std::move(*layout);
  return AnalyzedFile{std::move(*report), std::move(kept)};
}

}  // namespace attnprof
