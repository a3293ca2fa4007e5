// The general path: one on-demand walk over a whole document in memory. Used when the
// streaming path (ingest.cpp) meets a layout it does not split (no "traceEvents" array
// found in the header), so that non-traces and odd JSON get the same checks and messages.
#include "ingest/document.h"

#include <simdjson.h>

#include <string>

#include "ingest/input.h"
#include "ingest/trace_builder.h"
#include "ingest/utf8.h"

namespace attnprof::ingest {
namespace {

using ingest::od::json_type;
namespace od = ingest::od;

bool only_whitespace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// A document that is one scalar: "42" is valid JSON (not a trace), "not json" is not JSON.
bool is_valid_scalar_document(od::document& doc, json_type type) {
  switch (type) {
    case json_type::null: {
      bool null = false;
      return doc.is_null().get(null) == simdjson::SUCCESS && null;
    }
    case json_type::boolean: return doc.get_bool().error() == simdjson::SUCCESS;
    case json_type::number: return doc.get_double().error() == simdjson::SUCCESS;
    case json_type::string: return doc.get_string().error() == simdjson::SUCCESS;
    default: return false;
  }
}

}  // namespace

Error malformed_json(const std::string& label, size_t offset, simdjson::error_code e) {
  std::string msg = label + ": malformed JSON";
  if (offset != kNoOffset) msg += " near byte " + std::to_string(offset);
  msg += " (" + std::string(simdjson::error_message(e)) + ")";
  return make_error(ErrorCode::kMalformedJson, msg);
}

namespace {

// On-demand parsing checks only what it reads: before calling a document "valid JSON" that
// is not a trace, validate all of it (a full DOM parse, on this error path only).
Error not_a_trace(const char* data, size_t size, const std::string& label, const std::string& what) {
  simdjson::dom::parser validator;
  if (auto e = validator.parse(data, size, /*realloc_if_needed=*/true).error()) return malformed_json(label, kNoOffset, e);
  return make_error(ErrorCode::kNotATrace, label + ": " + what);
}

}  // namespace

namespace {

// The document being walked, for the walk's errors: its text, and where the value being read
// starts (the byte offset a malformed-JSON error names).
struct DocumentWalk {
  const char* data;
  size_t size;
  const std::string& label;
  const char* where;

  size_t offset_of(const char* p) const {
    return p >= data && p <= data + size ? static_cast<size_t>(p - data) : kNoOffset;
  }
  Error malformed(simdjson::error_code e) const { return malformed_json(label, offset_of(where), e); }
  Error not_trace(const std::string& what) const { return not_a_trace(data, size, label, what); }
};

// The Chrome "JSON Array Format": a bare array of event objects.
Status read_event_array(od::document& doc, TraceBuilder& builder, DocumentWalk& walk) {
  od::array events;
  if (auto e = doc.get_array().get(events)) return walk.malformed(e);
  bool first = true;
  for (auto event_result : events) {
    od::value event;
    if (auto e = event_result.get(event)) return walk.malformed(e);
    walk.where = event.raw_json_token().data();
    if (first) {
      json_type t;
      if (auto e = event.type().get(t)) return walk.malformed(e);
      if (t != json_type::object) return walk.not_trace(kNotArrayOfEvents);
      first = false;
    }
    if (auto e = builder.add_event(event)) return walk.malformed(e);
  }
  if (first) return walk.not_trace("an empty JSON array, not a trace");
  return Ok{};
}

// Kineto's object: "traceEvents" and the top-level keys around it.
Status read_trace_object(od::document& doc, TraceBuilder& builder, DocumentWalk& walk) {
  od::object top;
  if (auto e = doc.get_object().get(top)) return walk.malformed(e);
  bool saw_events = false;
  for (auto field_result : top) {
    std::string_view key;
    if (auto e = field_result.unescaped_key().get(key)) return walk.malformed(e);
    od::value v;
    if (auto e = field_result.value().get(v)) return walk.malformed(e);
    walk.where = v.raw_json_token().data();
    if (key != kineto::kTraceEvents) {
      if (auto e = builder.add_top_level(key, v)) return walk.malformed(e);
      continue;
    }
    od::array events;
    if (auto e = v.get_array().get(events)) {
      if (ingest::is_structural_error(e)) return walk.malformed(e);
      return walk.not_trace("\"traceEvents\" is not an array");
    }
    saw_events = true;
    for (auto event_result : events) {
      od::value event;
      if (auto e = event_result.get(event)) return walk.malformed(e);
      walk.where = event.raw_json_token().data();
      if (auto e = builder.add_event(event)) return walk.malformed(e);
    }
  }
  if (!saw_events) return walk.not_trace("valid JSON but not a trace (no \"traceEvents\" array)");
  return Ok{};
}

}  // namespace

// Walks the document: an object with traceEvents (Kineto), or a bare array of events
// (the Chrome "JSON Array Format").
Result<Trace> parse_whole_document(char* data, size_t size, size_t capacity, const std::string& label,
                                   const TraceReads& reads) {
  Trace trace;
  trace.path = label;
  const std::string_view text(data, size);
  if (only_whitespace(text)) return make_error(ErrorCode::kEmptyInput, label + ": empty file");
  ingest::repair_utf8(trace, data, size, 0);

  od::parser parser;
  od::document doc;
  const simdjson::padded_string_view input(data, size, capacity);
  if (auto e = parser.iterate(input).get(doc)) return malformed_json(label, kNoOffset, e);
  ingest::TraceBuilder builder(trace, ingest::TraceBuilder::Mode::kWhole, reads);
  DocumentWalk walk{data, size, label, text.data()};

  json_type type;
  if (auto e = doc.type().get(type)) return walk.malformed(e);
  if (type != json_type::array && type != json_type::object) {
    if (!is_valid_scalar_document(doc, type)) return malformed_json(label, walk.offset_of(text.data()), simdjson::TAPE_ERROR);
    return walk.not_trace("valid JSON but not a trace (top level is not an object)");
  }
  const Status read = type == json_type::array ? read_event_array(doc, builder, walk)
                                               : read_trace_object(doc, builder, walk);
  if (!read) return read.error();
  if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS)
    return malformed_json(label, walk.offset_of(rest), simdjson::TRAILING_CONTENT);
  return trace;
}

}  // namespace attnprof::ingest
