// torch.compile's own ranges in a trace, in one place (names from torch/_dynamo and
// torch/_inductor as recorded by torch 2.13; see docs/backends.md "torch.compile").
#include <array>

#include "attnprof/attention.h"

namespace attnprof {
namespace {

// dynamo_timed() records each phase twice: "<phase>" and "<phase> (dynamo_timed)".
std::string_view without_timer_suffix(std::string_view name) {
  constexpr std::string_view kSuffix = " (dynamo_timed)";
  if (name.ends_with(kSuffix)) name.remove_suffix(kSuffix.size());
  return name;
}

}  // namespace

bool is_compile_phase(std::string_view range_name) {
  // The outermost range of a frame compile, and Inductor's compile of one graph (the lazy
  // backward graph is compiled under it alone, during the first backward).
  constexpr std::array<std::string_view, 3> kPhases = {"entire_frame_compile", "_compile.compile_inner",
                                                       "compile_fx_inner"};
  const std::string_view name = without_timer_suffix(range_name);
  for (const std::string_view p : kPhases)
    if (name == p) return true;
  return false;
}

bool is_compiled_graph_run(std::string_view range_name) {
  return range_name.starts_with("## Call CompiledFxGraph") || range_name.starts_with("Torch-Compiled Region");
}

bool is_compiled_fx_graph_call(std::string_view range_name) {
  return range_name.starts_with("## Call CompiledFxGraph");
}

}  // namespace attnprof
