// Key -> position lookup for the fixed key sets ingest compares against (kineto_keys.h): one
// hash of the key's length and its first, middle and last bytes picks a slot, and one comparison
// confirms it, instead of a chain of string compares per field. The hash's multiplier is
// searched at compile time so that the set has no collisions; a key added to a set that
// cannot be separated fails the build (the consteval constructor does not finish).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

namespace attnprof::ingest {

template <size_t N>
class KeyIndex {
 public:
  static constexpr size_t kUnknown = N;

  consteval explicit KeyIndex(const std::array<std::string_view, N>& keys) : keys_(keys) {
    while (!try_multiplier()) multiplier_ += 2;
  }

  // Position of `key` in the set, kUnknown when it is none of them.
  constexpr size_t find(std::string_view key) const {
    if (key.empty()) return kUnknown;
    const uint8_t i = slots_[slot_of(key, multiplier_)];
    return i != kEmpty && same_text(keys_[i], key) ? i : kUnknown;
  }

 private:
  static constexpr size_t kSlots = 128;  // power of two, well above any set's size
  static constexpr uint8_t kEmpty = 0xff;
  static_assert(N < kEmpty && N <= kSlots / 2);

  static constexpr size_t slot_of(std::string_view key, uint32_t multiplier) {
    const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(key[i])); };
    const uint32_t h = static_cast<uint32_t>(key.size()) ^ (byte(0) << 8) ^ (byte(key.size() / 2) << 16) ^
                       (byte(key.size() - 1) << 24);
    const uint32_t mixed = h * multiplier;
    return (mixed >> 25) & (kSlots - 1);
  }

  // a == b for short keys without a call to memcmp (the keys are 2 - 20 bytes): two
  // overlapping 8-byte (or 4-byte) words from each end cover every byte; shorter keys ("ph",
  // "ts", "cat", half an event's keys) byte by byte.
  static constexpr bool same_text(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    const size_t n = a.size();
    if (std::is_constant_evaluated() || n > 16) return a == b;
    if (n >= 8) return word<uint64_t>(a, 0) == word<uint64_t>(b, 0) && word<uint64_t>(a, n - 8) == word<uint64_t>(b, n - 8);
    if (n >= 4) return word<uint32_t>(a, 0) == word<uint32_t>(b, 0) && word<uint32_t>(a, n - 4) == word<uint32_t>(b, n - 4);
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  template <typename Word>
  static Word word(std::string_view s, size_t at) {
    Word w;
    std::memcpy(&w, s.data() + at, sizeof(Word));
    return w;
  }

  consteval bool try_multiplier() {
    slots_.fill(kEmpty);
    for (size_t i = 0; i < N; ++i) {
      uint8_t& slot = slots_[slot_of(keys_[i], multiplier_)];
      if (slot != kEmpty) return false;
      slot = static_cast<uint8_t>(i);
    }
    return true;
  }

  std::array<std::string_view, N> keys_;
  std::array<uint8_t, kSlots> slots_{};
  uint32_t multiplier_ = 0x9E3779B1;
};

}  // namespace attnprof::ingest
