// Renderers of the core Report: pure functions Report -> text. They never open a trace.
// Sections added by later stages are rendered by small additions to text.cpp / markdown.cpp,
// shown only when present.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/call_facts.h"  // shape_text, explanation_lines: the spellings every format uses
#include "attnprof/report.h"
#include "attnprof/table.h"

namespace attnprof {

struct TextOptions {
  bool color = false;     // ANSI colours (the CLI sets it when stdout is a terminal)
  size_t max_rows = 64;   // activation-map rows before "... N more layers"
};

struct ReportView;  // report_view.h

// Terminal output: header, summary, unfused calls first, activation map, findings.
std::string render_text(const Report& report, const TextOptions& options = {});
std::string render_text(const ReportView& view, const TextOptions& options = {});

// The same content as GitHub-flavoured Markdown (kernel names escaped).
std::string render_markdown(const Report& report);
std::string render_markdown(const ReportView& view);

// "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<...>>(Params)" ->
// "pytorch_flash::flash_fwd_kernel": no return type, template arguments or parameters.
std::string short_kernel_name(std::string_view name);

// The kernels of a fused call by name, of an unfused call by component
// ("qk gemm, softmax, av gemm (+4 more)"), shortened for one table cell.
std::string kernels_text(const Call& call, size_t max_chars = 70);

// What a file of SourceInfo::files is: "live capture" for a capture sidecar, else "trace".
std::string_view source_file_kind(std::string_view path);

// "NVIDIA H200 (sm90)", "MI300X (gfx942; identified from warpSize 64, ...)", "unknown device:
// warpSize 64, ... (rocm)", or "CPU only (no GPU events)" when the trace has no GPU activity.
std::string device_text(const SourceInfo& source, bool has_gpu);

// The story of the run, shared by the text and Markdown reports: one line naming the steps
// and how they were marked; one row per step (index, marker, phase, calls, attention time,
// overhead, GPU time, share), at most max_rows; one row per phase (phase, steps, calls, time,
// share, useful FLOP/s, backends, kernels). Rows are plain text cells; each format escapes its own.
std::string steps_line(const Report& report);
std::vector<std::vector<std::string>> step_rows(const Report& report, size_t max_rows);
std::vector<std::vector<std::string>> phase_rows(const Report& report);
// "prefill 1 call 12.0 us, decode 9 calls 40.1 us" for a layer of a run with several phases; "" otherwise.
std::string layer_phases_text(const Layer& layer);
// "Hq/Hkv per rank" note for tensor-parallel runs; "" otherwise.
std::string heads_scope_text(const SourceInfo& source);

// attnprof.verify's section, shared by the text and Markdown reports: one line on how it was
// measured, the column names and one row per fix (plain text cells); "" / none without one.
std::string verification_line(const Report& report);
std::vector<std::string> verification_columns();
std::vector<std::vector<std::string>> verification_rows(const Report& report);

// The multi-rank section (Report::ranks), shared by the text and Markdown reports and the
// dashboard (ranks_rows.cpp): plain text cells and lines; each format escapes its own.
// "8 ranks analysed, 1 failed; median attention device time 1.20 ms; slowest rank 5 at 1.31x the median; ..."
std::string ranks_line(const RanksSection& ranks);
// Each format lists at most this many stragglers and disagreement lines (the JSON has them all).
inline constexpr size_t kMaxRankLines = 10;
std::vector<std::string> straggler_columns();
// Overall stragglers first (their worst layer named), then per layer; at most max_rows.
std::vector<std::vector<std::string>> straggler_rows(const RanksSection& ranks, size_t max_rows);
// Disagreements merged where only their layers or their ranks differ, in the order of their
// first layer: "layer 3: rank 5 ran math (most ranks: flash, 7 of 8): flash rejected: ...".
std::vector<std::string> disagreement_lines(const RanksSection& ranks);
std::vector<std::string> group_columns();
std::vector<std::vector<std::string>> group_rows(const RanksSection& ranks);
// One row per rank that could not be analysed: its file and its error.
std::vector<std::vector<std::string>> failed_rank_rows(const RanksSection& ranks);

// "unknown" for a call or layer whose attention kernels were not recorded, else `time`.
std::string time_or_unknown(bool unknown, const std::string& time);

// "cudnn" or "cudnn+math": the backends a layer ran, in first-seen order.
std::string backends_text(const Layer& layer);

// Sliding-window verdicts with the same text merged: ("layers 0-31", verdict), in first-seen order.
std::vector<std::pair<std::string, std::string>> grouped_window_verdicts(const std::vector<WindowEffectiveness>& verdicts);

// The per-head statistics as one table (no rows without them), built once for the text and
// Markdown reports and `heads --csv`.
Table heads_table(const HeadsSection& heads);

// The tables of the diff section as its Markdown shows them, for every pair in order: the gated
// metrics, the ranks (fleet Reports only) and the per-layer deltas; titled "<pair>: metrics",
// "<pair>: ranks", "<pair>: per layer" (pair "attention" when it has no name). `diff --csv`.
std::vector<Table> diff_tables(const DiffSection& diff);

}  // namespace attnprof
