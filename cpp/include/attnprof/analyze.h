// The pipeline: trace file(s) -> Report. Runs the stages in order; each stage lives in its
// own folder under cpp/src and can be called and tested on its own. This stage owns every
// "load a file, then analyse" path: the stages below it never read a trace, a sidecar or git.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "attnprof/cpu_cores.h"
#include "attnprof/error.h"
#include "attnprof/hw.h"
#include "attnprof/ingest.h"
#include "attnprof/report.h"
#include "attnprof/rules.h"
#include "attnprof/trace.h"
#include "attnprof/trace_layout.h"

namespace attnprof {

struct AnalyzeOptions {
  // Environment facts the trace may lack; explicit values override what the trace says.
  std::optional<std::string> torch_version;  // "2.11"
  std::optional<std::string> cudnn_version;  // "9.19"
  std::optional<std::string> arch;           // "sm90", "gfx942", "cpu"
  std::string sidecar_path;                  // live-capture sidecar; "" = look beside the trace
  std::function<void(size_t, size_t)> progress;  // ingest progress (bytes done, total)
  size_t ingest_threads = 0;  // threads parsing one trace file (IngestOptions::threads; 0 = one per core)
  size_t tail_threads = 1;    // threads of the stages after ingest (trace index); analyze_file sets it (FreeCoresProbe)
  std::optional<MeasuredPeaks> measured_peaks;  // --gpu-spec FILE: replaces the datasheet's ceilings
  // --kernels FILE: kernel and op names added to the catalogs (load_catalog_extension). A run
  // with one keeps every op's recorded inputs at ingest: the user's ops are not in the
  // built-in list of what the analyses read (analysis_reads).
  std::optional<CatalogExtension> kernels;
  std::vector<rules::MeasuredGain> measured_gains;  // --gains FILE: the user's verified gains (docs/verify.md)
};

// A --gains document, as attnprof.verify(gains=FILE) writes it: {"gains": [{"fix", "from_backend",
// "dtype", "device", "seq_len", "speedup", "speedup_ci", "memory_ratio", "model"}, ...]}; an error
// names the first bad entry.
Result<std::vector<rules::MeasuredGain>> parse_measured_gains(std::string_view json_text, const std::string& path);
Result<std::vector<rules::MeasuredGain>> load_measured_gains(const std::string& path);

// A --gpu-spec document: {"name": "...", "bandwidth_gbs": N, "tflops": {"bf16": N, "fp16": N,
// "fp8": N, "tf32": N, "fp32": N}}, every number positive; an error names the first bad field.
// TOML (the same fields as keys and a [tflops] table) when `path` ends in ".toml", else JSON.
Result<MeasuredPeaks> parse_measured_peaks(std::string_view text, const std::string& path);
Result<MeasuredPeaks> load_measured_peaks(const std::string& path);

// A --kernels document (docs/cost.md, "Kernels and ops of your own"): {"kernels": [{"pattern",
// "match", "priority", "kind", "backend", "library", "vendor", "direction", "part", "phase"}],
// "ops": [{"name", "match", "backend", "library", "direction", "fused", "layout", "args":
// {"query": 0, "key": 1, "value": 2, ...}}]}; TOML ([[kernels]], [[ops]]) when `path` ends in
// ".toml". An error names the file and the first bad field ("kernels[0].match").
Result<CatalogExtension> parse_catalog_extension(std::string_view text, const std::string& path);
Result<CatalogExtension> load_catalog_extension(const std::string& path);

// A file the user names for the analysis: its path, and its text when someone already read it
// (the fleet driver sends each worker the text, so workers need no copy of the file).
struct UserFile {
  std::string path;  // "" = not given
  std::optional<std::string> text;
};
struct UserFiles {
  UserFile gpu_spec, kernels, gains;  // --gpu-spec, --kernels, --gains; gpu_spec=, kernels=, gains=
};
// Reads every given file into `options` (measured_peaks, kernels, measured_gains); the first bad
// one is the error, naming the file and the field.
Status apply_user_files(const UserFiles& files, AnalyzeOptions& options);

// The threads worth starting for the work after ingest (trace index, outputs): 1 for
// requested == 1 (the one-core pass starts no thread), `requested` for N > 1; for 0
// (automatic) the cores this process could have had: the cores it used (its CPU time over the
// wall time) plus the cores the machine left idle meanwhile, rounded, at least 1 and at most
// `usable`. Not the cores used alone: a parse that ran mostly on one thread (a trace of one
// or two chunks, a .gz paced by its inflate) uses one core of a quiet machine and leaves the
// other idle for the tail; a busy machine leaves none idle, and then one core's worth is all
// a thread more would get.
size_t threads_after_ingest(size_t requested, double cores_used, double idle_cores, size_t usable);

// Measures threads_after_ingest's inputs from construction on.
class FreeCoresProbe {
 public:
  FreeCoresProbe();
  size_t threads_for(size_t requested) const;

 private:
  IdleProbe idle_;  // and the wall time
  double cpu_start_s_ = 0;
};

// What a trace's surroundings say beyond its events: the live-capture sidecar beside it and
// the git commit of the work tree holding it. provenance_of finds them (reads the sidecar
// file, runs git); analyze_trace takes them as given and itself reads and runs nothing.
struct Provenance {
  std::optional<LoadedSidecar> sidecar;
  std::string sidecar_error;     // a sidecar is there but unreadable: why ("" = none)
  std::optional<CodeInfo> code;  // commit, dirty state, root; analyze_trace adds the source files
};
Provenance provenance_of(const Trace& trace, const AnalyzeOptions& options = {});

// Builds the Report of one already-loaded trace (all stages) from its events and `provenance`.
Report analyze_trace(const Trace& trace, const AnalyzeOptions& options = {}, const Provenance& provenance = {});

// analyze_trace with the trace's own provenance_of: what a loaded trace file says.
Report analyze_loaded_trace(const Trace& trace, const AnalyzeOptions& options = {});

// Loads and analyses one file (load_trace + analyze_loaded_trace).
Result<Report> analyze_file(const std::string& path, const AnalyzeOptions& options = {});

// A Report and the trace it came from, kept for the outputs that copy the trace.
struct AnalyzedFile {
  Report report;
  KeptTrace trace;  // trace_layout.h: the text as inflated, and where the Report's kernels lie in it
};

// analyze_file for a run that writes the annotated trace or a TensorBoard run (--chrome,
// --tensorboard): the file is read and inflated once (load_trace_keeping_text), the text kept
// and located (scan_trace_layout for the Report's kernels) after the Trace is freed, so the
// outputs copy it without opening the file again. Holds the inflated text through the analysis:
// only for such a run.
Result<AnalyzedFile> analyze_file_keeping_trace(const std::string& path, const AnalyzeOptions& options = {});

// Loads, analyses and fits a set of traces (the `attnprof scale` pipeline, also used by the
// Python bindings; fits in cpp/src/analysis). The Report carries source info of the first
// trace, all file names, and the scaling and advice sections.
// `alloc_conf`: a PYTORCH_CUDA_ALLOC_CONF string to simulate ("" = PyTorch's defaults).
Result<Report> scale_traces(const std::vector<std::string>& paths, const std::string& memory_cap,
                            const std::string& gpu, const std::string& alloc_conf = "");

// Code provenance of the run a trace came from: git commit, dirty state and root of the work
// tree holding the trace file (source files left empty). nullopt outside a git work tree.
std::optional<CodeInfo> code_info_beside(const std::string& trace_path);

// Same, for a directory (live capture: the user's cwd).
std::optional<CodeInfo> detect_code_info_in(const std::string& dir);

// The source files of the python_function frames that enclose the Report's attention calls
// (with_stack traces), so `diff` can name the commits that touched them.
std::vector<std::string> attention_source_files(const Trace& trace, const Report& report);

// What `options` asks of ingest (progress callback, threads), for callers that load the
// trace themselves.
IngestOptions ingest_options_of(const AnalyzeOptions& options);

}  // namespace attnprof
