// kernel_names.h: how a kernel's name reads, from the name alone.
#include "attnprof/kernel_names.h"

#include <algorithm>
#include <charconv>
#include <iterator>

namespace attnprof {
namespace {

// Templates whose meaning is their first type argument: CUTLASS 3's kernel entry
// (cutlass/device_kernel.h), its 2.x entry points, FA3's arch guards (hopper/utils.h) and
// CK-tile's kernel entry (ck_tile/host/kernel_launch.hpp: kentry<MaxThreads, MinBlocks, Kernel, ...>).
constexpr std::string_view kWrappers[] = {"cutlass::device_kernel", "cutlass::Kernel",  "cutlass::Kernel2",
                                          "flash::enable_sm90_or_later", "flash::enable_sm80_to_sm89",
                                          "ck_tile::kentry"};

}  // namespace

std::string_view kernel_function_name(std::string_view name) {
  // "void " is how CUPTI prints demangled function templates; it carries no meaning.
  if (name.starts_with("void ")) name.remove_prefix(5);
  constexpr std::string_view kAnonymous = "(anonymous namespace)";
  int angle = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
    else if (c == '(' && angle == 0) {
      if (name.substr(i).starts_with(kAnonymous)) i += kAnonymous.size() - 1;
      else return name.substr(0, i);
    }
  }
  return name;
}

namespace kernel_names {

std::vector<std::string_view> template_args(std::string_view name) {
  std::vector<std::string_view> args;
  const size_t open = name.find('<');
  if (open == std::string_view::npos) return args;
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (--depth == 0) {
        args.push_back(name.substr(start, i - start));
        break;
      }
    } else if (c == ',' && depth == 1) {
      args.push_back(name.substr(start, i - start));
      start = i + 1;
    }
  }
  for (std::string_view& a : args) {
    while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
    while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
  }
  return args;
}

std::optional<int64_t> number(std::string_view text) {
  if (text.starts_with('(')) text.remove_prefix(std::min(text.size(), text.find(')') + 1));
  while (!text.empty() && (text.back() == 'u' || text.back() == 'l' || text.back() == 'U' || text.back() == 'L'))
    text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

int8_t flag(std::string_view text) { return text == "true" ? 1 : text == "false" ? 0 : -1; }

std::string_view unwrapped(std::string_view function) {
  for (int guard = 0; guard < 8; ++guard) {
    const std::string_view head = function.substr(0, function.find('<'));
    if (std::find(std::begin(kWrappers), std::end(kWrappers), head) == std::end(kWrappers)) return function;
    const std::vector<std::string_view> args = template_args(function);
    auto type = std::find_if(args.begin(), args.end(),
                             [](std::string_view a) { return !a.empty() && !number(a) && flag(a) < 0; });
    if (type == args.end()) return function;
    function = *type;
  }
  return function;
}

std::string_view cute_dsl_class(std::string_view name) {
  const size_t marker = name.find(kCuteDslMarker);
  if (marker == std::string_view::npos) return {};
  const std::string_view rest = name.substr(marker + kCuteDslMarker.size());
  const size_t end = rest.find("_object_at_");
  const size_t start = rest.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ");
  if (end == std::string_view::npos || start >= end) return {};
  return rest.substr(start, end - start);
}

}  // namespace kernel_names

std::string kernel_display_name(std::string_view kernel_name) {
  if (const std::string_view cls = kernel_names::cute_dsl_class(kernel_name); !cls.empty()) return std::string(cls);
  const std::string_view meaningful = kernel_names::unwrapped(kernel_function_name(kernel_name));
  const std::string_view head = meaningful.substr(0, meaningful.find('<'));
  return std::string(head.empty() ? kernel_name : head);
}

}  // namespace attnprof
