// Kernel-level sliding-window effectiveness (docs/heads.md section 4): does the attention
// kernel skip the scores a window/causal mask removes, or compute all Sq x Skv and mask them?
//
// A trace records the mask's shape and dtype (Input Dims / Input type) but not its values,
// and transformers passes the window to the mask builder as a 0-d tensor whose value is not
// recorded either. What the trace does prove is how the mask was built: an outer comparison
// `kv_idx <= q_idx` (aten::le of a [.., 1, Skv] and a [.., Sq, 1] index tensor) is the causal
// part, `kv_idx > q_idx - W` (aten::gt, same shapes) the window part.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "attnprof/heads.h"

namespace attnprof {
namespace {

struct MaskEvidence {
  bool causal_compare = false;  // aten::le / aten::ge outer index comparison
  bool window_compare = false;  // aten::gt / aten::lt outer index comparison
};

// True when the op compares a key-index row [.., 1, N] with a query-index column [.., M, 1].
bool is_outer_index_compare(const OpArgs& args) {
  if (args.inputs.size() < 2) return false;
  const auto& a = args.inputs[0].dims;
  const auto& b = args.inputs[1].dims;
  if (a.size() < 2 || b.size() < 2) return false;
  const bool row_col = a[a.size() - 2] == 1 && b.back() == 1 && a.back() > 1 && b[b.size() - 2] > 1;
  const bool col_row = b[b.size() - 2] == 1 && a.back() == 1 && b.back() > 1 && a[a.size() - 2] > 1;
  return row_col || col_row;
}

MaskEvidence scan_mask_building(const Trace& trace) {
  MaskEvidence ev;
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kCpuOp) continue;
    const std::string_view name = trace.name_of(s);
    const bool causal_op = name == "aten::le" || name == "aten::ge";
    const bool window_op = name == "aten::gt" || name == "aten::lt";
    if (!causal_op && !window_op) continue;
    const OpArgs* args = trace.op_args_of(s);
    if (args == nullptr || !is_outer_index_compare(*args)) continue;
    ev.causal_compare |= causal_op;
    ev.window_compare |= window_op;
  }
  return ev;
}

bool is_flex(const Call& c) { return c.backend == backend::kFlex; }

// FlexAttention skips blocks only when compiled (Triton/Inductor template); eager flex
// materialises the full score matrix (PyTorch's own warning, sdpa-backend-rules.md 4.4).
bool flex_is_compiled(const Call& c) {
  for (const auto& k : c.kernels)
    if (k.name.find("flex_attention") != std::string::npos || k.name.find("flex_decoding") != std::string::npos)
      return true;
  return c.fused;
}

bool mask_covers_scores(const Call& c) {
  const auto& d = c.mask.dims;
  return c.mask.present && d.size() >= 2 && d[d.size() - 2] == c.shape.Sq && d.back() == c.shape.Skv;
}

// FlexAttention: compiled, it walks only the blocks the BlockMask keeps (the rest of the work
// is masked scores inside partly-kept blocks); unfused, it computes every score.
WindowEffectiveness flex_verdict(const Call& c, WindowEffectiveness w) {
  const int64_t Sq = c.shape.Sq, Skv = c.shape.Skv;
  const double sparsity = c.mask.block_sparsity;  // -1 when the capture did not see the mask
  w.mask = "block_mask";
  w.skips_masked_work = flex_is_compiled(c);
  if (w.window > 0) w.masked_fraction = masked_score_fraction(Sq, Skv, true, w.window);
  if (sparsity >= 0) w.masked_fraction_min = sparsity;  // fully masked blocks hold only masked scores
  if (w.skips_masked_work) {
    // Computed share of the scores = 1 - sparsity; of those, 1 - masked_fraction are kept.
    if (sparsity >= 0 && w.masked_fraction >= 0 && sparsity < 1)
      w.wasted_flops_share = std::max(0.0, 1.0 - (1.0 - w.masked_fraction) / (1.0 - sparsity));
    w.verdict = sparsity >= 0
                    ? fmt::format("FlexAttention (compiled) with a BlockMask skips the {:.1f}% of blocks that are "
                                  "fully masked{}",
                                  100 * sparsity,
                                  w.masked_fraction >= 0
                                      ? fmt::format("; {:.1f}% of the scores it does compute are masked inside "
                                                    "partly kept blocks",
                                                    100 * w.wasted_flops_share)
                                      : std::string())
                    : "FlexAttention (compiled) with a BlockMask: fully masked blocks are skipped";
    return w;
  }
  const double share = w.masked_fraction >= 0 ? w.masked_fraction : w.masked_fraction_min;
  w.wasted_flops_share = std::max(0.0, share);
  w.verdict = fmt::format(
      "FlexAttention without torch.compile: the unfused path materialises all {}x{} scores, {}{:.1f}% of its "
      "QK/AV FLOPs are masked away; torch.compile(flex_attention) would skip the masked blocks",
      Sq, Skv, w.masked_fraction >= 0 ? "" : "at least ", 100 * w.wasted_flops_share);
  return w;
}

}  // namespace

std::vector<WindowEffectiveness> sliding_window_effectiveness(const Report& report, const Trace* trace,
                                                              int64_t window_hint) {
  std::vector<WindowEffectiveness> out;
  const MaskEvidence ev = trace != nullptr ? scan_mask_building(*trace) : MaskEvidence{};
  for (const Call& c : report.calls) {
    if (c.direction == "backward" || c.decode) continue;
    const int64_t Sq = c.shape.Sq, Skv = c.shape.Skv;
    WindowEffectiveness w;
    w.call_id = c.id;
    w.layer = c.layer;
    w.backend = c.backend;
    // A window the user gives wins over the one the capture read from the mask.
    w.window = window_hint > 0 ? window_hint : c.mask.window;
    w.window_source = window_hint > 0 ? "given" : (c.mask.window > 0 ? "capture" : "unknown");

    if (is_flex(c)) {
      out.push_back(flex_verdict(c, std::move(w)));
      continue;
    }
    if (!mask_covers_scores(c)) continue;  // no materialised Sq x Skv mask: nothing to judge

    // A dense kernel (cuDNN, memory-efficient, math, CPU flash, eager) with a materialised
    // mask reads every score: the work is Sq x Skv whatever the mask holds.
    w.mask = "materialised";
    w.skips_masked_work = false;
    if (ev.causal_compare || c.causal) {
      w.masked_fraction_min = masked_score_fraction(Sq, Skv, true, 0);
      w.assumptions.push_back(
          "the mask is at least causal: the trace shows it built by an outer kv_idx <= q_idx comparison (aten::le)");
    }
    if (ev.window_compare)
      w.assumptions.push_back(
          "the mask also has a sliding window (an outer kv_idx > q_idx - W comparison, aten::gt); its W is a "
          "0-d tensor whose value the trace does not record");
    if (w.window > 0) {
      // Sliding windows of decoders (Mistral, Gemma) are causal: kv_idx in (q_idx - W, q_idx].
      w.masked_fraction = masked_score_fraction(Sq, Skv, true, w.window);
      w.assumptions.push_back(fmt::format("window W = {} ({}), causal sliding window (q_idx - W, q_idx]", w.window,
                                          w.window_source == "given" ? "given" : "read from the captured mask"));
    }
    const double share = w.masked_fraction >= 0 ? w.masked_fraction : w.masked_fraction_min;
    w.wasted_flops_share = std::max(0.0, share);
    w.verdict = fmt::format(
        "{} computes all {}x{} scores of a materialised mask: {}{:.1f}% of its QK/AV FLOPs are masked away{}",
        c.backend.empty() ? "the kernel" : c.backend, Sq, Skv, w.masked_fraction >= 0 ? "" : "at least ",
        100 * w.wasted_flops_share,
        ev.window_compare && w.masked_fraction < 0
            ? " (more with the window; pass the window size for the exact share). FlexAttention with a BlockMask "
              "or FlashAttention-2's window_size would skip them"
            : "; FlexAttention with a BlockMask or FlashAttention-2's window_size would skip them");
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<WindowVerdictGroup> group_window_verdicts(const std::vector<WindowEffectiveness>& verdicts) {
  std::vector<WindowVerdictGroup> groups;
  for (const WindowEffectiveness& w : verdicts) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const WindowVerdictGroup& g) { return g.first->verdict == w.verdict; });
    if (it == groups.end()) it = groups.insert(groups.end(), WindowVerdictGroup{&w, {}});
    it->layers.push_back(w.layer);
  }
  return groups;
}

std::vector<Finding> sliding_window_findings(const std::vector<WindowEffectiveness>& verdicts) {
  std::vector<WindowEffectiveness> wasteful;
  std::copy_if(verdicts.begin(), verdicts.end(), std::back_inserter(wasteful),
               [](const WindowEffectiveness& w) { return w.wasted_flops_share > 0; });
  std::vector<Finding> out;
  for (const WindowVerdictGroup& g : group_window_verdicts(wasteful)) {
    const WindowEffectiveness& w = *g.first;
    Finding f;
    f.rule = "heads.sliding_window";
    f.severity = w.wasted_flops_share >= 0.5 ? "medium" : "low";
    f.title = fmt::format("{}: {:.0f}% of the attention FLOPs go to masked scores",
                          w.backend.empty() ? std::string("masked attention") : w.backend, 100 * w.wasted_flops_share);
    f.detail = w.verdict;
    f.layers = g.layers;
    if (w.wasted_flops_share < 1) f.expected_gain = 1.0 / (1.0 - w.wasted_flops_share);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace attnprof
