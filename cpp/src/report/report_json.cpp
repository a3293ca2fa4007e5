#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp
#include "attnprof/report_json.h"

#include <algorithm>
#include <future>
#include <optional>

#include "attnprof/layer_ranges.h"

// std::optional, and a Call's Boxed sections, <-> null/absent. nlohmann 3.11 does not ship this.
NLOHMANN_JSON_NAMESPACE_BEGIN
template <typename Nullable, typename T>
struct nullable_serializer {
  static void to_json(json& j, const Nullable& v) {
    if (v) j = *v; else j = nullptr;
  }
  static void from_json(const json& j, Nullable& v) {
    if (j.is_null()) v.reset(); else v = j.get<T>();
  }
};
template <typename T>
struct adl_serializer<std::optional<T>> : nullable_serializer<std::optional<T>, T> {};
template <typename T>
struct adl_serializer<attnprof::Boxed<T>> : nullable_serializer<attnprof::Boxed<T>, T> {};
NLOHMANN_JSON_NAMESPACE_END

namespace attnprof {

// One line per type: adding a field to a struct means adding its name here.
// Sections (owned by their stages).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RuleCheck, rule, message, value, fix)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BackendVerdict, backend, eligible, failed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Explanation, predicted_backend, consistent,
                                                consistency_note, backends, assumptions, fix,
                                                expected_speedup, expected_memory_ratio, gain_basis)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CaptureInfo, pytorch_choice, module_path, interface,
                                                requires_grad, enable_gqa, last_dim_contiguous)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CodeInfo, git_commit, git_dirty, git_root, config_hash,
                                                source_files)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CallCost, peak_tflops, peak_fraction, bytes_moved, bytes_read,
                                                bytes_written, bytes_upper_bound, arithmetic_intensity,
                                                ridge_point, bound, attainable_tflops, attainable_share,
                                                bandwidth_gbs, peak_bytes_during, allocated_bytes,
                                                analytic_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Spread, count, mean, median, min, max, std)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SlowCall, call, step, layer, device_time_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ShapeGroup, backend, library, shape, mask, direction, phase, count,
                                                total_time_us, device_time_us, tflops, tflops_upper_bound, bandwidth_gbs, slowest)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LayerCost, achieved_tflops, peak_fraction, peak_bytes,
                                                bytes_per_q_head, bytes_per_kv_head, disproportionate)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FitTerm, c0, c1, c2, rel_rms_error, residuals, growth,
                                                quadratic_dominates_from)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FailingAllocation, op, layer, bytes, length, reserved_bytes,
                                                allocated_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AllocatorReplay, file, events, within_2mib_share,
                                                largest_difference_bytes, recorded_peak_reserved_bytes,
                                                simulated_peak_reserved_bytes, cannot_know)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ScalingSeries, backend, lengths, time_us,
                                                forward_pass_time_us, peak_bytes,
                                                time_fit, memory_fit, oom_threshold_tokens, oom_error_band,
                                                oom_threshold_low_tokens, oom_threshold_high_tokens,
                                                failing_allocation, fragmentation, exact_size_share,
                                                holdout_length, holdout_predicted_reserved_bytes,
                                                holdout_recorded_reserved_bytes, oom_method, oom_note,
                                                measured_oom_tokens, measured_oom_note, files)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ScalingSection, memory_budget_bytes, budget_source,
                                                allocator_limit_bytes, non_pytorch_memory, baseline_bytes,
                                                allocator_config, replays, series)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AdviceRow, shape, fastest_backend, heuristic_backend,
                                                gain, code, times_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AdviceSection, rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LengthBucket, from, to, requests, within_window)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WhatIfSection, model, window, global_tokens, requests,
                                                mean_tokens, covered_share, full_flops, window_flops,
                                                flops_saving, full_kv_bytes, window_kv_bytes,
                                                memory_saving, max_full_kv_bytes, max_window_kv_bytes,
                                                length_buckets)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HeadStats, layer, head, kv_head, query_rows,
                                                mean_keys, entropy, max_weight, sink_mass,
                                                special_mass, output_share, window_mass,
                                                window_dropped_mass, block_coverage_90,
                                                block_coverage_95, sink_window_recall,
                                                sampling_stderr, kind)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HeadCandidate, layer, head, action, reason,
                                                kv_bytes_per_token, expected_speedup)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WindowEffectiveness, call_id, layer, backend, mask, mask_kind,
                                                skips_masked_work, window, window_source,
                                                masked_fraction, masked_fraction_min,
                                                wasted_flops_share, verdict, assumptions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(HeadsSection, block_size, sink_tokens,
                                                recall_window, model_window,
                                                weights_look_trained, untrained_reason,
                                                sampling_note, heads, candidates, sliding_window,
                                                notes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankRejection, backend, rule, message)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankLayer, index, time_us, backend, kernel, shape, mask, dtype, phase,
                                                rejections)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankGroupRef, name, desc, size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankSummary, rank, file, error, trace_rank, world_size, stage, host,
                                                device, report_html, attention_device_time_us, attention_time_unknown,
                                                fused_time_fraction, step_time_us, attention_share, call_count,
                                                backend_time_us, libraries, shapes, layer_time_us, layers, groups)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Straggler, rank, layer, time_us, median_us, over_median, worst_layer)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Disagreement, layer, facet, majority, majority_ranks, rank, value,
                                                cause)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RankGroup, name, desc, ranks, slowest_rank, slowest_over_median)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RanksSection, ranks, failed, slowest_rank, slowest_over_median,
                                                median_attention_us, layer_median_us, straggler_threshold, stragglers, disagreements,
                                                groups)

// The diff section (sections/diff.h). Its JSON also carries values derived from the fields for
// the JSON's readers (a metric's relative change, whether a layer's backend changed, a layer
// range as text, the exit code): `put` writes them and the renamed keys, `take` reads the
// renamed keys back; the derived values are recomputed, never read.
#define ATTNPROF_JSON_WITH_DERIVED(Type, put, take, ...)                                     \
  void to_json(nlohmann::json& nlohmann_json_j, const Type& nlohmann_json_t) {                \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                  \
    put(nlohmann_json_j, nlohmann_json_t);                                                    \
  }                                                                                           \
  void from_json(const nlohmann::json& nlohmann_json_j, Type& nlohmann_json_t) {              \
    const Type nlohmann_json_default_obj{};                                                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__))    \
    take(nlohmann_json_j, nlohmann_json_t);                                                   \
  }
namespace diff_derived {
using J = nlohmann::json;
void nothing(const J&, const auto&) {}
void relative(J& j, const MetricDelta& d) { j["relative"] = d.relative(); }
void layers_text(J& j, const auto& change) { j["layers_text"] = format_layer_ranges(change.layers); }
void backend_changed(J& j, const RankLayerDelta& l) { j["backend_changed"] = l.backend_changed(); }
}  // namespace diff_derived
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DiffThresholds, max_fused_drop_pp, max_time_increase, max_memory_increase)
ATTNPROF_JSON_WITH_DERIVED(MetricDelta, diff_derived::relative, diff_derived::nothing, known, before, after, before_samples,
                           after_samples, before_unknown, after_unknown, noise, worsening, limit, gated, regression)
// These write and read a MetricDelta: after its to_json / from_json.
namespace diff_derived {
void put_layer(J& j, const LayerDelta& l) {
  j["backend_changed"] = l.backend_changed();
  j["device_time_us"] = l.time_us;
}
void take_layer(const J& j, LayerDelta& l) { l.time_us = j.value("device_time_us", MetricDelta{}); }
void put_rank(J& j, const RankDelta& r) { j["device_time_us"] = r.time_us; }
void take_rank(const J& j, RankDelta& r) { r.time_us = j.value("device_time_us", MetricDelta{}); }
void put_verdict(J& j, const DiffVerdict& v) { j["attention_device_time_us"] = v.attention_time_us; }
void take_verdict(const J& j, DiffVerdict& v) { v.attention_time_us = j.value("attention_device_time_us", MetricDelta{}); }
void put_section(J& j, const DiffSection& s) {
  j["regression"] = s.regression();
  j["exit_code"] = s.regression() ? 1 : 0;  // attnprof diff's exit status (docs/diff.md)
}
}  // namespace diff_derived
ATTNPROF_JSON_WITH_DERIVED(LayerDelta, diff_derived::put_layer, diff_derived::take_layer, layer, module, in_baseline,
                           in_candidate, backend_before, backend_after, class_before, class_after, fused_time_pct,
                           fused_calls_pct, tflops, peak_bytes, input_changes, fallback_explanation)
ATTNPROF_JSON_WITH_DERIVED(BackendChange, diff_derived::layers_text, diff_derived::nothing, layers, before, after, explanation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CodeCommit, hash, subject, files)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CodeChange, before_commit, after_commit, before_dirty, after_dirty,
                                                config_hash_before, config_hash_after, repo, history_available,
                                                filtered_by_files, files, commits, note)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CauseSummary, inputs, environment, code)
ATTNPROF_JSON_WITH_DERIVED(RankLayerDelta, diff_derived::backend_changed, diff_derived::nothing, layer, in_baseline,
                           in_candidate, before_us, after_us, backend_before, backend_after)
ATTNPROF_JSON_WITH_DERIVED(RankDelta, diff_derived::put_rank, diff_derived::take_rank, rank, file_before, file_after,
                           worst_layer, layers)
ATTNPROF_JSON_WITH_DERIVED(RankBackendChange, diff_derived::layers_text, diff_derived::nothing, rank, layers, before, after)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RanksDelta, ranks_before, ranks_after, failed_before, failed_after,
                                                median_us, slowest_over_median, ranks, only_baseline, only_candidate,
                                                backend_changes, new_stragglers)
ATTNPROF_JSON_WITH_DERIVED(DiffVerdict, diff_derived::put_verdict, diff_derived::take_verdict, name, baseline, candidate,
                           baseline_runs, candidate_runs, regression, reasons, calls_before, calls_after, fused_time_pct,
                           fused_calls_pct, tflops, peak_bytes, layers, backend_changes, causes, ranks, notes)
ATTNPROF_JSON_WITH_DERIVED(DiffSection, diff_derived::put_section, diff_derived::nothing, thresholds, noise_rule, pairs,
                           unmatched)
#undef ATTNPROF_JSON_WITH_DERIVED
// Core.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelRef, name, component, ts_ns, device_time_us,
                                                stream, correlation)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelTemplate, name, library, head_dim, head_dim_v, tile_m, tile_n,
                                                dtype, causal, split_kv, paged, varlen, local)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Step, index, marker, marker_kind, ts_ns, dur_ns, call_count,
                                                first_call_id, attention_device_time_us, overhead_time_us,
                                                gpu_time_us, attention_share, phase, phase_inferred,
                                                prefill_requests, prefill_tokens, decode_requests,
                                                decode_tokens, sum_sq_sk, tokens_from)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PhaseSummary, phase, calls, steps, device_time_us, share, tflops,
                                                backends, kernels, inferred)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LayerPhase, phase, calls, device_time_us)

// A dimension the trace did not record (0 in Shape) is null in the document: unknown, not zero.
void to_json(nlohmann::json& j, const Shape& s) {
  auto dim = [](int64_t v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j = nlohmann::json{{"B", dim(s.B)},   {"Hq", dim(s.Hq)}, {"Hkv", dim(s.Hkv)},     {"Sq", dim(s.Sq)},
                     {"Skv", dim(s.Skv)}, {"D", dim(s.D)},   {"Dv", dim(s.Dv)},       {"dtype", s.dtype},
                     {"tokens", s.tokens}, {"kv_cache", s.kv_cache}, {"skv_ceiling", s.skv_ceiling},
                     {"seqlens_q", s.seqlens_q}, {"seqlens_k", s.seqlens_k}, {"sum_sq_sk", s.sum_sq_sk},
                     {"lengths_from", s.lengths_from}};
}
void from_json(const nlohmann::json& j, Shape& s) {
  auto dim = [&](const char* key, int64_t& v) {
    auto it = j.find(key);
    v = it == j.end() || it->is_null() ? 0 : it->get<int64_t>();
  };
  dim("B", s.B), dim("Hq", s.Hq), dim("Hkv", s.Hkv), dim("Sq", s.Sq), dim("Skv", s.Skv), dim("D", s.D), dim("Dv", s.Dv);
  dim("tokens", s.tokens);
  s.dtype = j.value("dtype", std::string());
  s.kv_cache = j.value("kv_cache", std::vector<int64_t>());
  s.skv_ceiling = j.value("skv_ceiling", false);
  s.seqlens_q = j.value("seqlens_q", std::vector<int64_t>());
  s.seqlens_k = j.value("seqlens_k", std::vector<int64_t>());
  s.sum_sq_sk = j.value("sum_sq_sk", 0.0);
  s.lengths_from = j.value("lengths_from", std::string());
}
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MaskInfo, present, kind, dims, window, pattern,
                                                block_sparsity, block_size)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Call, id, layer, module, step, phase, phase_inferred, direction, recompute, pair_id,
                                                sequence_number,
                                                backend, library, fused, op, backend_op, cpu_ts_ns,
                                                cpu_dur_ns, kernels, device_time_us, device_time_unknown, shape, mask, causal,
                                                dropout, gqa, cross, decode, scale, flops_useful, flops_executed, flops,
                                                flops_granularity, causal_alignment, flops_upper_bound,
                                                flops_bound_reason, tflops, tflops_executed, kernel_time_us,
                                                other_time_us, kernel_tflops, source, device, overhead_time_us, unknown,
                                                kernel_template, explanation, capture, cost)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Layer, index, module, backends, call_ids,
                                                fused_time_fraction, device_time_us, device_time_unknown,
                                                recompute_time_us, phases, cost)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Finding, severity, title, detail, rule, layers,
                                                expected_gain, cause)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Summary, call_count, fused_call_count,
                                                fused_time_fraction, fused_call_fraction,
                                                attention_device_time_us, gpu_time_us, attention_share,
                                                has_gpu, unknown_time_call_count, overhead_time_us,
                                                recompute_call_count, recompute_time_us, phases, shape_groups)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(UnrecognisedName, name, kind, count, device_time_us)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MeasuredPeaks, file, name, bandwidth_gbs, bf16_tflops, fp16_tflops,
                                                fp8_tflops, tf32_tflops, fp32_tflops)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SourceInfo, files, device_name, arch, device_vendor,
                                                device_identified_by, device_memory_bytes, versions, assumptions, missing,
                                                code, tensor_parallel, tensor_parallel_evidence, event_count,
                                                measured_peaks)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FixVerification, fix, change, finding_rule, layers, applied, verdict,
                                                reason, manual, pairs, baseline_ms, fixed_ms, speedup, speedup_ci,
                                                peak_bytes_before, peak_bytes_after, max_abs_diff, max_rel_diff,
                                                tolerance, dtype, predicted_speedup, backends_before, backends_after,
                                                kernels_before, kernels_after)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerificationSection, device, timer, load_average, warmup, model, fixes)
// The calls are most of a Report (18 MiB of its 19 at 1 GB): report_to_json writes them one
// at a time and the other fields as one tree, so they are named apart here.
#define ATTNPROF_REPORT_FIELDS_BUT_CALLS \
  schema_version, tool_version, source, steps, layers, summary, findings, scaling, advice, heads, ranks, whatif, unrecognised, \
  verification, diff
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Report, calls, ATTNPROF_REPORT_FIELDS_BUT_CALLS)

namespace {

using Json = nlohmann::json;
constexpr unsigned kIndent = 2;

// Every field of the Report but its calls (nlohmann's own per-field step, as the macro above).
Json fields_but_calls(const Report& nlohmann_json_t) {
  Json nlohmann_json_j = Json::object();
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, ATTNPROF_REPORT_FIELDS_BUT_CALLS))
  return nlohmann_json_j;
}

// Appends `value` as Json::dump writes it `depth` levels deep in a document: the text is the
// same as one dump of the whole tree. nlohmann's serializer takes the starting indent that
// dump() does not expose; writing through it straight into `out` saves a copy of each item
// and the pass that indented its lines (the 1 GB trace's calls: 93-124 ms against 107-146 ms
// in three runs each; perf had memmove at 6% of the CPU after ingest).
// Invalid UTF-8 (kernel names from hostile traces) is replaced instead of throwing.
void append_json(std::string& out, const Json& value, bool pretty, unsigned depth) {
  static_assert(NLOHMANN_JSON_VERSION_MAJOR == 3, "detail::serializer's dump(value, pretty, ascii, step, indent)");
  nlohmann::detail::serializer<Json> writer(nlohmann::detail::output_adapter<char>(out), ' ',
                                            Json::error_handler_t::replace);
  writer.dump(value, pretty, false, kIndent, depth * kIndent);  // the indents count only when pretty
}

// How dump() opens the n-th item (n from 0) of an array or object `depth` levels deep.
void open_item(std::string& out, size_t n, bool pretty, unsigned depth) {
  if (n > 0) out += ',';
  if (pretty) out.append("\n").append(depth * kIndent, ' ');
}

// How dump() closes a non-empty array or object whose items are `depth` levels deep.
void close_items(std::string& out, char bracket, bool pretty, unsigned depth) {
  if (pretty) out.append("\n").append((depth - 1) * kIndent, ' ');
  out += bracket;
}

// Appends items [begin, end) of the calls array, each from its own small tree: one tree of
// every call held 5x the text and took longer to free than to write.
void append_call_items(std::string& out, const std::vector<Call>& calls, size_t begin, size_t end, bool pretty,
                       unsigned depth) {
  for (size_t i = begin; i < end; ++i) {
    open_item(out, i, pretty, depth);
    append_json(out, Json(calls[i]), pretty, depth);
  }
}

std::string calls_text(const std::vector<Call>& calls, size_t begin, size_t end, bool pretty, unsigned depth) {
  std::string out;
  append_call_items(out, calls, begin, end, pretty, depth);
  return out;
}

// The calls array; with threads > 1, runs of calls are written side by side and joined in
// order (an item's text depends on the call and its position only). The document is reserved
// for all of them from the first call's length, so it grows once instead of by doublings, each
// of which copied it into fresh pages (perf after ingest on the 1 GB trace: memmove 7%, page
// faults and clearing 15%).
void append_calls(std::string& out, const std::vector<Call>& calls, bool pretty, unsigned depth, size_t threads) {
  if (calls.empty()) return out.append("[]"), void();
  out += '[';
  const size_t before = out.size();
  append_call_items(out, calls, 0, 1, pretty, depth + 1);
  out.reserve(out.size() + (out.size() - before) * (calls.size() - 1) * 9 / 8);
  const size_t runs = std::clamp<size_t>(threads, 1, calls.size());
  std::vector<std::future<std::string>> later;
  for (size_t r = 1; r < runs; ++r)
    later.push_back(std::async(std::launch::async, calls_text, std::cref(calls), calls.size() * r / runs,
                               calls.size() * (r + 1) / runs, pretty, depth + 1));
  append_call_items(out, calls, 1, calls.size() / runs, pretty, depth + 1);
  for (std::future<std::string>& run : later) out += run.get();
  close_items(out, ']', pretty, depth + 1);
}

}  // namespace

std::string report_to_json(const Report& report, bool pretty, size_t threads) {
  Json fields = fields_but_calls(report);
  fields["calls"] = nullptr;  // its place among the keys (dump sorts them); its text comes from append_calls
  std::string out = "{";
  size_t n = 0;
  for (const auto& [key, value] : fields.items()) {
    open_item(out, n++, pretty, 1);
    append_json(out, Json(key), pretty, 1);
    out += pretty ? ": " : ":";
    if (key == "calls") append_calls(out, report.calls, pretty, 1, threads);
    else append_json(out, value, pretty, 1);
  }
  close_items(out, '}', pretty, 1);
  return out;
}

Result<Report> report_from_json(std::string_view text) {
  auto parsed = parse_json_input(text, "", "report");
  if (!parsed) return parsed.error();
  const nlohmann::json& j = *parsed;
  if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_string())
    return make_error(ErrorCode::kNotATrace, "not an attnprof report (no schema_version)");
  const std::string version = j["schema_version"].get<std::string>();
  const std::string ours = kReportSchemaVersion;
  if (version.substr(0, version.find('.')) != ours.substr(0, ours.find('.')))
    return make_error(ErrorCode::kUnsupported,
                      "field schema_version: report schema " + version + " is not readable by this attnprof (reads " +
                          ours + ")");
  try {
    return j.get<Report>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::kMalformedJson, "report has a bad " + json_error_text(e));
  }
}

namespace {

template <typename T>
Result<T> section_from_json(std::string_view text, const char* what) {
  auto parsed = parse_json_input(text, "", what);
  if (!parsed) return parsed.error();
  if (!parsed->is_object()) return make_error(ErrorCode::kMalformedJson, std::string(what) + " is not a JSON object");
  try {
    return parsed->template get<T>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::kMalformedJson, std::string(what) + " has a bad " + json_error_text(e));
  }
}

}  // namespace

Result<VerificationSection> verification_from_json(std::string_view text) {
  return section_from_json<VerificationSection>(text, "verification section");
}
std::string verification_to_json(const VerificationSection& section) { return Json(section).dump(); }
Result<FixVerification> fix_verification_from_json(std::string_view text) {
  return section_from_json<FixVerification>(text, "fix verification");
}
std::string fix_verification_to_json(const FixVerification& fix) { return Json(fix).dump(); }
Result<RankSummary> rank_summary_from_json(std::string_view text) {
  return section_from_json<RankSummary>(text, "rank summary");
}
std::string rank_summary_to_json(const RankSummary& summary) { return Json(summary).dump(); }
Result<DiffSection> diff_section_from_json(std::string_view text) {
  return section_from_json<DiffSection>(text, "diff section");
}
std::string diff_section_to_json(const DiffSection& section, bool pretty) {
  return Json(section).dump(pretty ? static_cast<int>(kIndent) : -1, ' ', false, Json::error_handler_t::replace);
}

bool looks_like_report(std::string_view text) {
  // Keys are written sorted, so "schema_version" is not at the start; a Kineto trace spells
  // its key "schemaVersion" and always has "traceEvents", which a Report never has.
  return text.find("\"schema_version\"") != std::string_view::npos &&
         text.find("\"traceEvents\"") == std::string_view::npos;
}

}  // namespace attnprof
