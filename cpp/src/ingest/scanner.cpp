#include "ingest/scanner.h"

#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__PCLMUL__)
#include <wmmintrin.h>
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
// '[' and '{' (0x5B, 0x7B) differ only in bit 0x20, as do ']' and '}': one compare of the
// byte with that bit set finds both.
BlockMasks classify(const char* p) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  const __m256i bit = _mm256_set1_epi8(0x20);
  const __m256i lo_folded = _mm256_or_si256(lo, bit), hi_folded = _mm256_or_si256(hi, bit);
  return {eq_mask(lo, hi, '"'), eq_mask(lo, hi, '\\'), eq_mask(lo_folded, hi_folded, '{'), eq_mask(lo_folded, hi_folded, '}')};
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
#if defined(__PCLMUL__)
  // Carry-less multiplication by all ones is the prefix xor (the simdjson stage-1 trick).
  const __m128i product = _mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)), _mm_set1_epi8(-1), 0);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(product));
#else
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
#endif
}

}  // namespace

size_t line_break_boundary(const char* data, size_t size) {
  for (size_t end = size; end > 0;) {
    const void* found = memrchr(data, '\n', end);
    if (found == nullptr) return EventScanner::kNone;
    const size_t line_break = static_cast<size_t>(static_cast<const char*>(found) - data);
    end = line_break;
    size_t next = line_break + 1;
    while (next < size && is_json_space(data[next])) ++next;
    if (next == size || data[next] != '{') continue;  // at the end: the next element is not all here
    size_t before = line_break;
    while (before > 0 && is_json_space(data[before - 1])) --before;
    if (before == 0 || data[before - 1] != ',') continue;
    --before;
    while (before > 0 && is_json_space(data[before - 1])) --before;
    if (before > 0 && data[before - 1] == '}') return before;
  }
  return EventScanner::kNone;
}

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

// The brackets outside strings of one 64-byte block, given the string and escape state at
// its start (updated to the state at its end).
EventScanner::Brackets EventScanner::brackets_of(const char* block, bool& in_string, bool& escaped_next) {
  const BlockMasks m = classify(block);
  // Bytes preceded by an odd run of backslashes are escaped; backslashes are rare in
  // traces, so this walks only the backslash bits.
  uint64_t escaped = 0;
  if (m.backslash != 0 || escaped_next) {
    uint64_t b = m.backslash;
    if (escaped_next) {
      escaped |= 1;
      b &= ~uint64_t{1};
      escaped_next = false;
    }
    while (b != 0) {
      const int i = __builtin_ctzll(b);
      if (i == 63) {
        escaped_next = true;
        break;
      }
      escaped |= uint64_t{1} << (i + 1);
      b &= ~(uint64_t{3} << i);
    }
  }
  const uint64_t quotes = m.quote & ~escaped;
  const uint64_t strings = prefix_xor(quotes) ^ (in_string ? ~uint64_t{0} : 0);
  in_string = (strings >> 63) != 0;
  return {m.open & ~strings, m.close & ~strings};
}

// Where in a block depth returns to 1 (last) and to 0 (first), walking its bracket bits from
// the depth at its start. Returns the depth at the end of the walk.
int64_t EventScanner::walk_brackets(Brackets b, int64_t depth, size_t pos, size_t& boundary, size_t& end) {
  for (uint64_t s = b.open | b.close; s != 0; s &= s - 1) {
    const int i = __builtin_ctzll(s);
    if ((b.open >> i) & 1) {
      ++depth;
      continue;
    }
    --depth;
    if (depth == 1) boundary = pos + static_cast<size_t>(i) + 1;
    if (depth == 0) {
      end = pos + static_cast<size_t>(i);
      return depth;
    }
  }
  return depth;
}

// Depth moves by the bracket counts alone; only a block where it may come back to 1 is
// remembered, and only the last such block with a real boundary is walked bit by bit
// (resolve_boundary), once per scan() instead of once per event.
void EventScanner::scan_block(const char* block, size_t pos) {
  const bool in_string = in_string_, escaped_next = escaped_;
  const Brackets b = brackets_of(block, in_string_, escaped_);
  if ((b.open | b.close) == 0) return;
  const int64_t lowest_possible = depth_ - __builtin_popcountll(b.close);
  if (lowest_possible <= 0) {  // the array may end here: find out now
    resolve_boundary(block - pos);
    depth_ = walk_brackets(b, depth_, pos, last_boundary_, array_end_);
    return;
  }
  if (lowest_possible == 1) candidates_.push_back({pos, depth_, in_string, escaped_next});
  depth_ += __builtin_popcountll(b.open) - __builtin_popcountll(b.close);
}

// The last boundary among the remembered blocks, latest first; earlier blocks cannot hold a
// later one.
void EventScanner::resolve_boundary(const char* data) {
  for (size_t k = candidates_.size(); k-- > 0;) {
    const Candidate& c = candidates_[k];
    bool in_string = c.in_string, escaped_next = c.escaped_next;
    size_t boundary = kNone, end = kNone;
    walk_brackets(brackets_of(data + c.pos, in_string, escaped_next), c.depth, c.pos, boundary, end);
    if (boundary != kNone) {
      if (last_boundary_ == kNone || boundary > last_boundary_) last_boundary_ = boundary;
      break;
    }
  }
  candidates_.clear();
}

void EventScanner::scan(const char* data, size_t from, size_t to) {
  size_t pos = from;
  for (; pos + 64 <= to && array_end_ == kNone; pos += 64) scan_block(data + pos, pos);
  resolve_boundary(data);  // before the bytes after the last block, which may hold a later one
  for (; pos < to && array_end_ == kNone; ++pos) scan_byte(data[pos], pos);
}

}  // namespace attnprof::ingest
