#pragma once

#include <simdjson.h>

#include <cstddef>
#include <string>

#include "attnprof/error.h"
#include "attnprof/trace.h"

namespace attnprof::ingest {

inline constexpr size_t kNoOffset = SIZE_MAX;
// Why a JSON array whose first element is not an object is not a trace.
inline constexpr const char* kNotArrayOfEvents = "a JSON array, but not of trace events";

// "LABEL: malformed JSON near byte N (what simdjson found)", N being the byte offset in the
// (decompressed) JSON text, left out when unknown.
Error malformed_json(const std::string& label, size_t offset, simdjson::error_code e);

// Reads a whole JSON document held in memory (capacity - size >= simdjson padding; invalid
// UTF-8 is repaired in place), keeping what `reads` asks for. Errors: kEmptyInput,
// kMalformedJson, kNotATrace.
Result<Trace> parse_whole_document(char* data, size_t size, size_t capacity, const std::string& label,
                                   const TraceReads& reads);

}  // namespace attnprof::ingest
