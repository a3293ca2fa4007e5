// Reading JSON that a user hands us (Reports, capture sidecars, config.json files, JSON lines,
// safetensors headers): every way such a file can be wrong becomes one Error naming the field.
//
// Include this header before <nlohmann/json.hpp> (it errors out otherwise). It turns on
// nlohmann's JSON_DIAGNOSTICS, so a type error says where it happened ("/calls/0/id"), and
// makes every conversion to an integer check the range first: nlohmann would cast a float
// such as 1e300 to int64_t, which is undefined behaviour. Both only change the diagnostic
// copy of nlohmann (it lives in its own ABI namespace), so the writers elsewhere are untouched.
#pragma once

#ifdef INCLUDE_NLOHMANN_JSON_HPP_
#error "include attnprof/json_input.h before <nlohmann/json.hpp>"
#endif
// GCC before 15 reports a false -Warray-bounds in std::map code once JSON_DIAGNOSTICS adds parent
// pointers (nlohmann/json issues #3808 and #4819: "fixed with GCC 15"). The warning is located in
// the standard headers, so it is silenced before any of them is included (this header comes first).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 15
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#define JSON_DIAGNOSTICS 1
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "attnprof/error.h"

namespace attnprof {

// Deeper nesting than any file of ours has; also bounds nlohmann's recursive dump().
inline constexpr int kMaxJsonInputDepth = 64;

// True when `j` is a number that converts to T without overflow (a float is truncated).
template <typename T, typename Json>
bool json_number_fits(const Json& j) {
  using limits = std::numeric_limits<T>;
  if (j.is_number_unsigned())
    return j.template get_ref<const typename Json::number_unsigned_t&>() <= static_cast<uint64_t>(limits::max());
  if (j.is_number_integer()) {
    const auto v = j.template get_ref<const typename Json::number_integer_t&>();
    return v >= static_cast<typename Json::number_integer_t>(limits::min()) &&
           (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(limits::max()));
  }
  if (j.is_number_float()) {
    const double v = j.template get_ref<const typename Json::number_float_t&>();
    const double bound = std::ldexp(1.0, limits::digits);  // 2^63 for int64_t, 2^31 for int
    return std::isfinite(v) && v < bound && (limits::is_signed ? v >= -bound : v > -1.0);
  }
  return true;  // not a number: nlohmann's own type error names the field
}

// PyTorch's limit on a tensor: non-negative dimensions whose product (numel) fits int64_t.
inline bool numel_fits(std::span<const int64_t> dims) {
  int64_t numel = 1;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (d > 0 && numel > std::numeric_limits<int64_t>::max() / d) return false;
    if (d > 0) numel *= d;
  }
  return true;
}

// The whole document, or the first problem: not JSON (with the byte offset), a duplicate key,
// nesting deeper than kMaxJsonInputDepth. Messages read "<label>: <what> ..." ("" = no label).
Result<nlohmann::json> parse_json_input(std::string_view text, const std::string& label, std::string_view what);

// "field /calls/0/id: type must be number, but is string" for an exception of nlohmann's
// conversions (the "[json.exception...]" prefix dropped, the path spelt out).
std::string json_error_text(const nlohmann::json::exception& e);

}  // namespace attnprof

NLOHMANN_JSON_NAMESPACE_BEGIN
template <typename T>
struct adl_serializer<T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>> {
  template <typename BasicJsonType>
  static void to_json(BasicJsonType& j, T value) {
    ::nlohmann::to_json(j, value);
  }
  template <typename BasicJsonType>
  static void from_json(const BasicJsonType& j, T& value) {
    if (!::attnprof::json_number_fits<T>(j))
      throw detail::out_of_range::create(406, "number out of range for an integer field", &j);
    ::nlohmann::from_json(j, value);
  }
};
NLOHMANN_JSON_NAMESPACE_END
