#include "ingest/utf8.h"

#include <simdjson.h>

#include <cstdint>

namespace attnprof::ingest {
namespace {

// Length of the valid UTF-8 sequence starting at p (1..4), or 0 when invalid (RFC 3629:
// no overlongs, no surrogates, nothing above U+10FFFF).
size_t valid_sequence_length(const unsigned char* p, size_t left) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](size_t i) { return i < left && (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

size_t replace_invalid_utf8(char* data, size_t size, std::vector<size_t>* positions, size_t max_positions) {
  if (simdjson::validate_utf8(data, size)) return 0;
  auto* p = reinterpret_cast<unsigned char*>(data);
  size_t replaced = 0;
  for (size_t i = 0; i < size;) {
    const size_t n = valid_sequence_length(p + i, size - i);
    if (n > 0) {
      i += n;
      continue;
    }
    if (positions && positions->size() < max_positions) positions->push_back(i);
    p[i++] = '?';
    ++replaced;
  }
  return replaced;
}

void repair_utf8(Trace& trace, char* data, size_t size, size_t stream_offset) {
  std::vector<size_t> positions;
  const size_t replaced = replace_invalid_utf8(data, size, &positions, IngestIssue::kMaxSamples);
  for (const size_t at : positions)
    trace.add_issue("non_utf8_text", "invalid UTF-8 byte replaced by '?' at byte " + std::to_string(stream_offset + at));
  if (replaced > positions.size()) trace.issue_of("non_utf8_text").count += static_cast<int64_t>(replaced - positions.size());
}

}  // namespace attnprof::ingest
