// Kernel-level sliding-window effectiveness (docs/heads.md section 4): does the attention
// kernel skip the scores a window/causal mask removes, or compute all Sq x Skv and mask them?
//
// A trace records the mask's shape and dtype (Input Dims / Input type) but not its values,
// and transformers passes the window to the mask builder as a 0-d tensor whose value is not
// recorded either. What the trace does prove is how the mask was built: an outer comparison
// `kv_idx <= q_idx` (aten::le of a [.., 1, Skv] and a [.., Sq, 1] index tensor) is the causal
// part, `kv_idx > q_idx - W` (aten::gt, same shapes) the window part, and an `and` with a
// per-sequence key row [B, 1, 1, Skv] (bool) the padding part. The mask kind decides the advice
// (docs/heads.md, mask kinds): only a window gets window advice; a kind neither the capture
// read nor the trace's ops prove is "unknown", never guessed.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "attnprof/call_facts.h"
#include "attnprof/heads.h"
#include "attnprof/vocabulary.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

struct MaskEvidence {
  bool causal_compare = false;  // aten::le / aten::ge outer index comparison
  bool window_compare = false;  // aten::gt / aten::lt outer index comparison
  bool key_padding = false;     // a bool key row [.., 1, 1, Skv] and-ed into the mask
};

// The fix that removes each mask pattern's masked work (its label is the vocabulary's).
struct MaskKindAdvice {
  std::string_view kind;     // mask_pattern::k*
  std::string_view fix;      // "" when the kind keeps every score (nothing to skip)
  std::string_view finding;  // finding::k* of its wasted work
};

constexpr MaskKindAdvice kMaskKindAdvice[] = {
    {mask_pattern::kSlidingWindow,
     "FlexAttention with a BlockMask or FlashAttention-2's window_size would skip them", finding::kSlidingWindow},
    {mask_pattern::kPadding,
     "unpad instead of masking: flash-attn's varlen kernels (flash_attn_varlen_func with cu_seqlens), "
     "transformers' padding-free collator (DataCollatorWithFlattening) with attn_implementation="
     "\"flash_attention_2\", or nested jagged tensors (torch.nested, layout=torch.jagged) with SDPA; where no "
     "row is padded, drop the mask and pass is_causal=True",
     finding::kPaddingMask},
    {mask_pattern::kCausal,
     "drop the mask and pass is_causal=True: SDPA's flash and memory-efficient kernels then skip the blocks "
     "above the diagonal",
     finding::kCausalMask},
    {mask_pattern::kBlock,
     "FlexAttention with a document BlockMask, or flash-attn's varlen kernels with one cu_seqlens entry per "
     "document, compute only the blocks inside each document",
     finding::kBlockMask},
    {mask_pattern::kArbitrary, "FlexAttention with a BlockMask of the same mask_mod skips the fully masked blocks",
     finding::kArbitraryMask},
    {mask_pattern::kBias,
     "FlashAttention-2's alibi_slopes or FlexAttention's score_mod add the bias inside a fused kernel that skips "
     "the masked blocks",
     finding::kBiasMask},
    {mask_pattern::kFull, "", finding::kFullMask},
    {mask_pattern::kUnknown, "", finding::kMaskedWork},
};

const MaskKindAdvice& advice_for(std::string_view kind) {
  for (const MaskKindAdvice& a : kMaskKindAdvice)
    if (a.kind == kind) return a;
  return kMaskKindAdvice[std::size(kMaskKindAdvice) - 1];
}

std::string_view label_of(std::string_view kind) {
  const MaskWord* w = mask_pattern_word(kind);
  return w ? w->label : mask_pattern_word(mask_pattern::kUnknown)->label;
}

// A bool key row [b, 1, 1, N] (N > 1): the same keys hidden from every query of a sequence.
bool is_key_row(const Trace& trace, const OpArgs& args, size_t i) {
  if (i >= args.inputs.size() || args.inputs[i].type == kNoStr || trace.strings.get(args.inputs[i].type) != kKinetoBoolType)
    return false;
  const auto& d = args.inputs[i].dims;
  return d.size() == 4 && d[1] == 1 && d[2] == 1 && d[3] > 1;
}

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
    const MaskBuildingOp* op = mask_building_op(trace.name_of(s));
    if (op == nullptr) continue;
    if (op->role == MaskBuildingRole::kAnd) {
      const OpArgs* args = trace.op_args_of(s);
      if (args != nullptr && (is_key_row(trace, *args, 0) || is_key_row(trace, *args, 1))) ev.key_padding = true;
      continue;
    }
    const bool causal_op = op->role == MaskBuildingRole::kCausalCompare;
    const bool window_op = op->role == MaskBuildingRole::kWindowCompare;
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

// A [.., 1, Skv] mask hides the same keys from every query row: a key-padding mask by shape.
bool mask_is_key_row(const Call& c) {
  const auto& d = c.mask.dims;
  return c.mask.present && c.shape.Sq > 1 && d.size() >= 2 && d[d.size() - 2] == 1 && d.back() == c.shape.Skv &&
         c.shape.Skv > 1;
}

// The mask's kind: what the capture read from its rows wins, then a window the user gave or
// the capture measured, then what the trace's mask-building ops prove; "unknown" otherwise.
std::string mask_kind_of(const Call& c, const MaskEvidence& ev, int64_t window) {
  if (!c.mask.pattern.empty()) return c.mask.pattern;
  if (window > 0 || ev.window_compare) return mask_pattern::kSlidingWindow;
  if (mask_is_key_row(c) || ev.key_padding) return mask_pattern::kPadding;
  if (ev.causal_compare) return mask_pattern::kCausal;
  return mask_pattern::kUnknown;
}

// FlexAttention: compiled, it walks only the blocks the BlockMask keeps (the rest of the work
// is masked scores inside partly-kept blocks); unfused, it computes every score.
WindowEffectiveness flex_verdict(const Call& c, WindowEffectiveness w) {
  const int64_t Sq = c.shape.Sq, Skv = c.shape.Skv;
  const double sparsity = c.mask.block_sparsity;  // -1 when the capture did not see the mask
  w.mask = mask_kind::kBlockMask;
  w.mask_kind = !c.mask.pattern.empty() ? c.mask.pattern : (w.window > 0 ? mask_pattern::kSlidingWindow : mask_pattern::kUnknown);
  w.skips_masked_work = flex_is_compiled(c);
  if (w.window > 0) w.masked_fraction = masked_score_fraction(Sq, Skv, true, w.window);
  if (sparsity >= 0) w.masked_fraction_min = sparsity;  // fully masked blocks hold only masked scores
  if (w.skips_masked_work) {
    // Computed share of the scores = 1 - sparsity; of those, 1 - masked_fraction are kept.
    if (sparsity >= 0 && w.masked_fraction >= 0 && sparsity < 1)
      w.wasted_flops_share = std::max(0.0, 1.0 - (1.0 - w.masked_fraction) / (1.0 - sparsity));
    w.verdict = sparsity >= 0
                    ? fmt::format("FlexAttention (compiled) with a BlockMask skips the {} of blocks that are "
                                  "fully masked{}",
                                  percent_text(sparsity),
                                  w.masked_fraction >= 0
                                      ? fmt::format("; {} of the scores it does compute are masked inside "
                                                    "partly kept blocks",
                                                    percent_text(w.wasted_flops_share))
                                      : std::string())
                    : "FlexAttention (compiled) with a BlockMask: fully masked blocks are skipped";
    return w;
  }
  const double share = w.masked_fraction >= 0 ? w.masked_fraction : w.masked_fraction_min;
  w.wasted_flops_share = std::max(0.0, share);
  w.verdict = fmt::format(
      "FlexAttention without torch.compile: the unfused path materialises all {}x{} scores, {}{} of its "
      "QK/AV FLOPs are masked away; torch.compile(flex_attention) would skip the masked blocks",
      Sq, Skv, w.masked_fraction >= 0 ? "" : "at least ", percent_text(w.wasted_flops_share));
  return w;
}

// The masked shares of a materialised mask and what they rest on: causal at least where the
// mask is known to be (and exactly so for a causal mask), the window's share where it is known.
void materialised_fractions(const Call& c, const MaskEvidence& ev, bool keeps_every_score, WindowEffectiveness& w) {
  const int64_t Sq = c.shape.Sq, Skv = c.shape.Skv;
  const bool causal = ev.causal_compare || c.causal || w.mask_kind == mask_pattern::kCausal;
  if (causal && !keeps_every_score) {
    w.masked_fraction_min = masked_score_fraction(Sq, Skv, true, 0);
    w.assumptions.push_back(ev.causal_compare ? "the mask is at least causal: the trace shows it built by an outer "
                                                "kv_idx <= q_idx comparison (aten::le)"
                                              : "the mask is at least causal (read from the captured mask rows)");
  }
  if (w.mask_kind == mask_pattern::kCausal) w.masked_fraction = w.masked_fraction_min;
  if (ev.key_padding)
    w.assumptions.push_back(
        "the mask hides padded keys: the trace shows a per-sequence bool key row [B, 1, 1, Skv] and-ed into it; "
        "which keys are padded the trace does not record");
  if (ev.window_compare)
    w.assumptions.push_back(
        "the mask also has a sliding window (an outer kv_idx > q_idx - W comparison, aten::gt); its W is a "
        "0-d tensor whose value the trace does not record");
  if (w.window > 0 && w.mask_kind == mask_pattern::kSlidingWindow) {
    // Sliding windows of decoders (Mistral, Gemma) are causal: kv_idx in (q_idx - W, q_idx].
    w.masked_fraction = masked_score_fraction(Sq, Skv, true, w.window);
    w.assumptions.push_back(fmt::format("window W = {} ({}), causal sliding window (q_idx - W, q_idx]", w.window,
                                        w.window_source == "given" ? "given" : "read from the captured mask"));
  }
  const double share = w.masked_fraction >= 0 ? w.masked_fraction : w.masked_fraction_min;
  w.wasted_flops_share = std::max(0.0, share);
}

// A dense kernel (cuDNN, memory-efficient, math, CPU flash, eager) with a materialised mask
// reads every score: the work is Sq x Skv whatever the mask holds; the kind names the fix.
WindowEffectiveness materialised_verdict(const Call& c, const MaskEvidence& ev, WindowEffectiveness w) {
  const int64_t Sq = c.shape.Sq, Skv = c.shape.Skv;
  w.mask = "materialised";
  w.mask_kind = mask_kind_of(c, ev, w.window);
  w.skips_masked_work = false;
  const MaskKindAdvice& advice = advice_for(w.mask_kind);
  const bool keeps_every_score = advice.fix.empty();
  materialised_fractions(c, ev, keeps_every_score, w);
  const std::string kernel = c.backend.empty() ? "the kernel" : c.backend;
  if (keeps_every_score) {
    w.verdict = fmt::format("{} computes all {}x{} scores of a {}{}", kernel, Sq, Skv, label_of(w.mask_kind),
                            w.mask_kind == mask_pattern::kUnknown ? ": neither the capture nor the trace shows which scores it "
                                                       "removes, so no masked share is claimed"
                                                     : "; no score is masked away, so there is no masked work to skip");
    return w;
  }
  std::string more;
  if (w.mask_kind == mask_pattern::kSlidingWindow && w.masked_fraction < 0)
    more = " (more with the window; pass the window size for the exact share)";
  else if (w.mask_kind == mask_pattern::kPadding)
    more = " (more on padded keys)";
  w.verdict = fmt::format("{} computes all {}x{} scores of a {}: {}{} of its QK/AV FLOPs are masked away{}; {}",
                          kernel, Sq, Skv, label_of(w.mask_kind), w.masked_fraction >= 0 ? "" : "at least ",
                          percent_text(w.wasted_flops_share), more, advice.fix);
  return w;
}

}  // namespace

std::vector<WindowEffectiveness> sliding_window_effectiveness(const Report& report, const Trace* trace,
                                                              int64_t window_hint) {
  std::vector<WindowEffectiveness> out;
  const MaskEvidence ev = trace != nullptr ? scan_mask_building(*trace) : MaskEvidence{};
  for (const Call& c : report.calls) {
    if (c.direction == direction::kBackward || c.decode) continue;
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
    if (!mask_covers_scores(c) && !mask_is_key_row(c)) continue;  // no mask over the scores: nothing to judge
    out.push_back(materialised_verdict(c, ev, std::move(w)));
  }
  return out;
}

std::vector<Finding> sliding_window_findings(const std::vector<WindowEffectiveness>& verdicts) {
  std::vector<WindowEffectiveness> wasteful;
  std::copy_if(verdicts.begin(), verdicts.end(), std::back_inserter(wasteful),
               [](const WindowEffectiveness& w) { return w.wasted_flops_share > 0; });
  std::vector<Finding> out;
  for (const WindowVerdictGroup& g : group_window_verdicts(wasteful)) {
    const WindowEffectiveness& w = *g.first;
    Finding f;
    f.rule = std::string(advice_for(w.mask_kind).finding);
    f.severity = w.wasted_flops_share >= 0.5 ? "medium" : "low";
    f.title = fmt::format("{}: {} of the attention FLOPs go to masked scores",
                          w.backend.empty() ? std::string("masked attention") : w.backend, percent_text(w.wasted_flops_share));
    f.detail = w.verdict;
    f.layers = g.layers;
    if (w.wasted_flops_share < 1) f.expected_gain = 1.0 / (1.0 - w.wasted_flops_share);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace attnprof
