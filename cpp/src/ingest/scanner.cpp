#include "ingest/scanner.h"

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnprof::ingest {
namespace {

struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

#if defined(__AVX2__)
uint64_t eq_mask(__m256i lo, __m256i hi, char c) {
  const __m256i v = _mm256_set1_epi8(c);
  const auto a = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
  const auto b = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
  return a | (uint64_t{b} << 32);
}
BlockMasks classify(const char* p) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  return {eq_mask(lo, hi, '"'), eq_mask(lo, hi, '\\'), eq_mask(lo, hi, '{') | eq_mask(lo, hi, '['),
          eq_mask(lo, hi, '}') | eq_mask(lo, hi, ']')};
}
#elif defined(__SSE2__)
uint64_t eq_mask(const __m128i* v, char c) {
  const __m128i k = _mm_set1_epi8(c);
  uint64_t m = 0;
  for (int i = 0; i < 4; ++i)
    m |= uint64_t{static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v[i], k)))} << (16 * i);
  return m;
}
BlockMasks classify(const char* p) {
  __m128i v[4];
  for (int i = 0; i < 4; ++i) v[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
  return {eq_mask(v, '"'), eq_mask(v, '\\'), eq_mask(v, '{') | eq_mask(v, '['), eq_mask(v, '}') | eq_mask(v, ']')};
}
#else
BlockMasks classify(const char* p) {
  BlockMasks m{0, 0, 0, 0};
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    switch (p[i]) {
      case '"': m.quote |= bit; break;
      case '\\': m.backslash |= bit; break;
      case '{': case '[': m.open |= bit; break;
      case '}': case ']': m.close |= bit; break;
      default: break;
    }
  }
  return m;
}
#endif

// Bit i set when an odd number of quote bits are at or below i.
uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

void EventScanner::shift(size_t n) {
  if (last_boundary_ != kNone) last_boundary_ = last_boundary_ > n ? last_boundary_ - n : kNone;
  if (array_end_ != kNone) array_end_ -= n;
}

void EventScanner::scan_byte(char c, size_t pos) {
  if (in_string_) {
    if (escaped_) escaped_ = false;
    else if (c == '\\') escaped_ = true;
    else if (c == '"') in_string_ = false;
    return;
  }
  switch (c) {
    case '"': in_string_ = true; break;
    case '{': case '[': ++depth_; break;
    case '}': case ']':
      --depth_;
      if (depth_ == 1) last_boundary_ = pos + 1;
      if (depth_ == 0) array_end_ = pos;
      break;
    default: break;
  }
}

void EventScanner::scan_block(const char* block, size_t pos) {
  BlockMasks m = classify(block);
  // Bytes preceded by an odd run of backslashes are escaped; backslashes are rare in
  // traces, so this walks only the backslash bits.
  uint64_t escaped = 0;
  if (m.backslash != 0 || escaped_) {
    uint64_t b = m.backslash;
    if (escaped_) {
      escaped |= 1;
      b &= ~uint64_t{1};
      escaped_ = false;
    }
    while (b != 0) {
      const int i = __builtin_ctzll(b);
      if (i == 63) {
        escaped_ = true;
        break;
      }
      escaped |= uint64_t{1} << (i + 1);
      b &= ~(uint64_t{3} << i);
    }
  }
  const uint64_t quotes = m.quote & ~escaped;
  const uint64_t in_string = prefix_xor(quotes) ^ (in_string_ ? ~uint64_t{0} : 0);
  in_string_ = (in_string >> 63) != 0;
  const uint64_t open = m.open & ~in_string;
  const uint64_t close = m.close & ~in_string;
  if ((open | close) == 0) return;
  if (depth_ - __builtin_popcountll(close) > 1) {  // no element can end in this block
    depth_ += __builtin_popcountll(open) - __builtin_popcountll(close);
    return;
  }
  for (uint64_t s = open | close; s != 0; s &= s - 1) {
    const int i = __builtin_ctzll(s);
    if ((open >> i) & 1) {
      ++depth_;
      continue;
    }
    --depth_;
    if (depth_ == 1) last_boundary_ = pos + static_cast<size_t>(i) + 1;
    if (depth_ == 0) {
      array_end_ = pos + static_cast<size_t>(i);
      return;
    }
  }
}

void EventScanner::scan(const char* data, size_t from, size_t to) {
  size_t pos = from;
  for (; pos + 64 <= to && array_end_ == kNone; pos += 64) scan_block(data + pos, pos);
  for (; pos < to && array_end_ == kNone; ++pos) scan_byte(data[pos], pos);
}

}  // namespace attnprof::ingest
