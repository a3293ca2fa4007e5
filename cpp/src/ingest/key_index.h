// Key -> position lookup for the fixed key sets ingest compares against (kineto_keys.h).
// find_key<Keys>(key) compares the key with each of the set's keys as a constant: a length
// check, and for a key of the same length an inline compare of that many bytes. Every event
// of a trace spells its keys in one order, so these are branches the predictor learns. A
// hash probe (length and three bytes -> a slot -> one compare) was tried first: perf moved
// (add_event's own share 14.8% with it, 8.8% without), the total did not (paired runs: CPU
// 1.03, 0.93 - 1.17), and this is the simpler of the two.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

namespace attnprof::ingest {

namespace detail {
// Always inlined: a call per key of every event costs more than the compares (callgrind).
template <const auto& Keys, size_t... I>
[[gnu::always_inline]] constexpr size_t find_key(std::string_view key, std::index_sequence<I...>) {
  size_t found = Keys.size();
  static_cast<void>(((key == Keys[I] ? (found = I, true) : false) || ...));
  return found;
}
}  // namespace detail

// Position of `key` in the constexpr array of string_views `Keys`; Keys.size() when it is
// none of them.
template <const auto& Keys>
[[gnu::always_inline]] constexpr size_t find_key(std::string_view key) {
  return detail::find_key<Keys>(key, std::make_index_sequence<std::size(Keys)>{});
}

}  // namespace attnprof::ingest
