// UTF-8 repair for traces written by tools that copy raw bytes into JSON strings
// (kernel names from old Kineto, HTA PR #324). simdjson refuses invalid UTF-8 anywhere in
// a document, so each invalid byte is replaced in place before parsing.
#pragma once

#include <cstddef>

namespace attnprof::ingest {

// Replaces every byte that is not part of a valid UTF-8 sequence by '?'. Returns how many
// invalid sequences were found (0 on valid input, checked first with simdjson's fast path).
size_t replace_invalid_utf8(char* data, size_t size);

}  // namespace attnprof::ingest
