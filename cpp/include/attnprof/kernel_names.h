// How a kernel's name reads, from the name alone: its function (no "void ", no parameter list),
// the template arguments it spells, the type a wrapper template wraps, and the library's own
// name for it. In the report stage because a Report's kernels are names: every output names a
// kernel by kernel_display_name, and the attention stage reads a kernel's facts
// (cpp/src/attention/kernel_template.cpp) from the same pieces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attnprof {

// The part of a kernel name patterns are matched against: no "void ", no parameter list.
std::string_view kernel_function_name(std::string_view kernel_name);

// The library's own name of a kernel: its function less "void ", parameters and template
// arguments, a wrapper (cutlass::device_kernel<X>, FA3's arch guards, ck_tile::kentry) named by
// what it wraps: "flash::FlashAttnFwdSm90", "pytorch_flash::flash_fwd_kernel"; a CuTe DSL
// kernel by its class.
std::string kernel_display_name(std::string_view kernel_name);

namespace kernel_names {

// The top-level template arguments of the first template in `name` ("a<b<c>, d>" -> {"b<c>", "d"}).
std::vector<std::string_view> template_args(std::string_view name);

// A template argument's integer as a demangler prints it: "128", "128u", "64ul", or an enum
// value cast to its type, "(flashinfer::MaskMode)1".
std::optional<int64_t> number(std::string_view text);

// A template argument's bool: 1 for "true", 0 for "false", -1 for anything else.
int8_t flag(std::string_view text);

// The first type argument of a wrapper (not a number, not a bool), else the name itself.
std::string_view unwrapped(std::string_view function);

// Kernels the CuTe DSL emits (FlashAttention 4, flash_attn/cute/): "kernel_cutlass_kernel_" + the
// Python module path without dots + the class + "_object_at_" + the argument layouts, e.g.
// kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100FlashAttentionForwardSm100_object_at__tensor...
// Newer builds put a readable prefix first (Dao-AILab/flash-attention#2564): flash_fwd_sm100_bf16_
// head_dim128_tile128x128_threads384_causal_..._kernel_cutlass_kernel_...
inline constexpr std::string_view kCuteDslMarker = "kernel_cutlass_kernel_";

// The class a CuTe DSL kernel name spells ("FlashAttentionForwardSm100"); "" for other names.
std::string_view cute_dsl_class(std::string_view name);

}  // namespace kernel_names
}  // namespace attnprof
