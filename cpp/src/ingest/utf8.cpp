#include "ingest/utf8.h"

#include <simdjson.h>

#include <string_view>

#include "attnprof/utf8.h"

namespace attnprof::ingest {

size_t replace_invalid_utf8(char* data, size_t size, std::vector<size_t>* positions, size_t max_positions) {
  if (simdjson::validate_utf8(data, size)) return 0;
  const std::string_view text(data, size);
  size_t replaced = 0;
  for (size_t i = 0; i < size;) {
    const size_t n = utf8_sequence_length(text, i);
    if (n > 0) {
      i += n;
      continue;
    }
    if (positions && positions->size() < max_positions) positions->push_back(i);
    data[i++] = '?';
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
