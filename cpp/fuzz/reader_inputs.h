// One function per input reader: the bytes a user could hand attnprof, through the reader and
// everything the command does with what it read (no file written). The libFuzzer targets
// (fuzz_<reader>.cpp) call them on generated inputs and cpp/tests/fuzz/reader_regressions_test.cpp
// on the saved ones, so both run exactly the same steps.
//
// Each returns the reader's error message ("" when the input was read): the contract is that
// nothing escapes as an exception, crashes or is undefined, and every error names the input
// (kLabel).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "attnprof/allocator_sim.h"
#include "attnprof/capture.h"
#include "attnprof/cost_render.h"
#include "attnprof/diff.h"
#include "attnprof/explain_input.h"
#include "attnprof/heads.h"
#include "attnprof/hw.h"
#include "attnprof/predict.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/scaling.h"

namespace attnprof::fuzz {

// The file name every reader is told; errors must name it.
inline const std::string kLabel = "fuzz-input";

template <typename T>
std::string error_of(const Result<T>& r) {
  return r ? std::string() : r.error().message;
}

// `attnprof heads FILE.safetensors`: read, every layer's statistics, the summary.
inline std::string heads_input(std::string_view bytes) {
  auto saved = parse_heads_safetensors(bytes, kLabel);
  if (!saved) return saved.error().message;
  HeadOptions options;
  options.threads = 1;
  options.max_query_blocks = 2;  // bounded work per input; the sampling path is the CLI's too
  return error_of(analyze_saved_heads(*saved, kLabel, options));
}

// The live-capture sidecar beside a trace (docs/capture-sidecar.md).
inline std::string sidecar_input(std::string_view bytes) {
  auto sidecar = parse_sidecar(bytes, kLabel);
  if (!sidecar) return sidecar.error().message;
  for (const CapturedCall& call : sidecar->calls) (void)backend_of_sdp_choice(call.pytorch_choice, call.device);
  return {};
}

// `attnprof diff A.json B.json` on Reports (one, or a JSON array of runs): compared with
// itself and first run against last, rendered as the command renders a verdict; and the
// Report renderers the Python binding offers for a Report JSON.
inline std::string report_input(std::string_view bytes) {
  auto runs = reports_from_text(kLabel, std::string(bytes));
  if (!runs) return runs.error().message;
  DiffSection diff;
  const DiffSide all{kLabel, *runs};
  diff.pairs.push_back(compare_reports(all, all, diff.thresholds));
  const DiffSide first{kLabel, {runs->front()}}, last{kLabel, {runs->back()}};
  diff.pairs.push_back(compare_reports(first, last, diff.thresholds));
  const Report verdict = diff_report(std::move(diff));
  (void)render_text(verdict);
  (void)render_markdown(verdict);
  (void)report_from_json(report_to_json(verdict));
  for (const Report& r : *runs) {
    (void)render_text(r);
    (void)render_markdown(r);
    (void)report_to_json(r);
  }
  return {};
}

// `attnprof predict --config config.json` (eager and SDPA, with a GPU and a budget) and
// `attnprof whatif --config config.json`.
inline std::string model_config_input(std::string_view bytes) {
  auto model = model_config_from_json(bytes, kLabel);
  if (!model) return model.error().message;
  (void)parameter_count(*model);
  for (const char* attn : {"sdpa", "eager"}) {
    PredictOptions options;
    options.attn = attn;
    options.use_cache = true;
    options.lengths = {1, 4096, 131072};
    options.gpu = find_gpu_spec("H200");
    options.budget = {int64_t{141} << 30, "fuzz"};
    auto prediction = predict(*model, options);
    if (!prediction) return prediction.error().message;
    (void)render_cost_text(prediction_report(*model, options, *prediction));
  }
  const std::vector<LengthBin> bins = {{1, 1}, {4096, 10}, {131072, 2}};
  Report report;
  report.whatif = what_if(*model, bins, 4096, 4, "bf16");
  (void)render_cost_text(report);
  return {};
}

// `attnprof explain --batch FILE.jsonl` on the default environment (torch 2.11, sm90).
inline std::string explain_batch_input(std::string_view bytes) {
  return error_of(rules::explain_batch(bytes, kLabel, rules::Env{}));
}

// `attnprof whatif --lengths FILE --model llama-3-8b --window 4096 --global-tokens 4`.
inline std::string whatif_lengths_input(std::string_view bytes) {
  auto bins = parse_length_distribution(bytes);
  if (!bins) return kLabel + ": " + bins.error().message;
  Report report;
  report.whatif = what_if(*find_known_model("llama-3-8b"), *bins, 4096, 4, "bf16");
  (void)render_cost_text(report);
  (void)report_to_json(report);
  return {};
}

// Command-line values: the input is one argument, read by every parser that reads one (memory
// sizes, shapes, percentages, versions, architectures, dtypes, masks, the allocator settings
// of `scale --alloc-conf`, PYTORCH_CUDA_ALLOC_CONF). Errors are joined.
inline std::string arguments_input(std::string_view bytes) {
  const std::string text(bytes);
  std::string errors;
  auto note = [&](const std::string& e) {
    if (!e.empty()) errors += (errors.empty() ? "" : "; ") + e;
  };
  note(error_of(parse_byte_size(text)));
  note(error_of(rules::parse_dims(text, "--q", 4)));
  note(error_of(rules::parse_dims(text, "--mask-shape", 0)));
  note(error_of(parse_percent(text)));
  note(error_of(rules::parse_version(text)));
  note(error_of(rules::parse_arch(text)));
  note(error_of(rules::parse_dtype(text)));
  note(error_of(rules::parse_mask(text)));
  note(error_of(parse_allocator_config(text)));
  return errors;
}

struct ReaderTarget {
  const char* name;  // attnprof_fuzz_<name>, cpp/fuzz/seeds/<name>, cpp/tests/fuzz/regressions/<name>
  std::string (*run)(std::string_view bytes);
  bool names_file;  // errors name kLabel (files); arguments' errors name the flag or value instead
};

inline constexpr ReaderTarget kReaderTargets[] = {
    {"heads", heads_input, true},
    {"sidecar", sidecar_input, true},
    {"report", report_input, true},
    {"model_config", model_config_input, true},
    {"explain_batch", explain_batch_input, true},
    {"whatif_lengths", whatif_lengths_input, true},
    {"arguments", arguments_input, false},
};

// What is wrong with an error message ("" when nothing): it must name the file. (Quoted input
// may hold a newline; the CLI's one catch escapes control characters, so stderr stays one line.)
inline std::string contract_violation(const ReaderTarget& target, const std::string& error) {
  if (!error.empty() && target.names_file && error.find(kLabel) == std::string::npos)
    return "the error does not name the file: " + error;
  return {};
}

inline const ReaderTarget* find_reader_target(std::string_view name) {
  for (const ReaderTarget& t : kReaderTargets)
    if (name == t.name) return &t;
  return nullptr;
}

}  // namespace attnprof::fuzz
