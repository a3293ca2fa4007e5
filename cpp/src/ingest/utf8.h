// UTF-8 repair for traces written by tools that copy raw bytes into JSON strings
// (kernel names from old Kineto, HTA PR #324). simdjson refuses invalid UTF-8 anywhere in
// a document, so each invalid byte is replaced in place before parsing.
#pragma once

#include <cstddef>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof::ingest {

// Replaces every byte that is not part of a valid UTF-8 sequence by '?'. Returns how many
// invalid sequences were found (0 on valid input, checked first with simdjson's fast path);
// the positions of the first `max_positions` go to `positions` when given.
size_t replace_invalid_utf8(char* data, size_t size, std::vector<size_t>* positions = nullptr, size_t max_positions = 0);

// Repairs data[0, size), which starts at byte `stream_offset` of the trace, and counts one
// `non_utf8_text` issue per invalid byte, the samples naming where the first ones are (so the
// issue does not depend on how the stream was cut into chunks).
void repair_utf8(Trace& trace, char* data, size_t size, size_t stream_offset);

}  // namespace attnprof::ingest
