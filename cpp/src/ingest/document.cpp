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

// Walks the document: an object with traceEvents (Kineto), or a bare array of events
// (the Chrome "JSON Array Format").
Result<Trace> parse_whole_document(char* data, size_t size, size_t capacity, const std::string& label,
                                   const TraceReads& reads) {
  Trace trace;
  trace.path = label;
  const std::string_view text(data, size);
  const auto offset_of = [&](const char* p) {
    return p >= data && p <= data + size ? static_cast<size_t>(p - data) : kNoOffset;
  };
  if (only_whitespace(text)) return make_error(ErrorCode::kEmptyInput, label + ": empty file");
  ingest::repair_utf8(trace, data, size, 0);

  od::parser parser;
  od::document doc;
  const simdjson::padded_string_view input(data, size, capacity);
  if (auto e = parser.iterate(input).get(doc)) return malformed_json(label, kNoOffset, e);
  ingest::TraceBuilder builder(trace, ingest::TraceBuilder::Mode::kWhole, reads);
  const char* where = text.data();  // start of the value being read, for error messages

  json_type type;
  if (auto e = doc.type().get(type)) return malformed_json(label, offset_of(where), e);
  if (type == json_type::array) {
    od::array events;
    if (auto e = doc.get_array().get(events)) return malformed_json(label, offset_of(where), e);
    bool first = true;
    for (auto event_result : events) {
      od::value event;
      if (auto e = event_result.get(event)) return malformed_json(label, offset_of(where), e);
      where = event.raw_json_token().data();
      if (first) {
        json_type t;
        if (auto e = event.type().get(t)) return malformed_json(label, offset_of(where), e);
        if (t != json_type::object)
          return not_a_trace(data, size, label, kNotArrayOfEvents);
        first = false;
      }
      if (auto e = builder.add_event(event)) return malformed_json(label, offset_of(where), e);
    }
    if (first) return not_a_trace(data, size, label, "an empty JSON array, not a trace");
  } else if (type == json_type::object) {
    od::object top;
    if (auto e = doc.get_object().get(top)) return malformed_json(label, offset_of(where), e);
    bool saw_events = false;
    for (auto field_result : top) {
      std::string_view key;
      if (auto e = field_result.unescaped_key().get(key)) return malformed_json(label, offset_of(where), e);
      od::value v;
      if (auto e = field_result.value().get(v)) return malformed_json(label, offset_of(where), e);
      where = v.raw_json_token().data();
      if (key != kineto::kTraceEvents) {
        if (auto e = builder.add_top_level(key, v)) return malformed_json(label, offset_of(where), e);
        continue;
      }
      od::array events;
      if (auto e = v.get_array().get(events)) {
        if (ingest::is_structural_error(e)) return malformed_json(label, offset_of(where), e);
        return not_a_trace(data, size, label, "\"traceEvents\" is not an array");
      }
      saw_events = true;
      for (auto event_result : events) {
        od::value event;
        if (auto e = event_result.get(event)) return malformed_json(label, offset_of(where), e);
        where = event.raw_json_token().data();
        if (auto e = builder.add_event(event)) return malformed_json(label, offset_of(where), e);
      }
    }
    if (!saw_events)
      return not_a_trace(data, size, label, "valid JSON but not a trace (no \"traceEvents\" array)");
  } else if (!is_valid_scalar_document(doc, type)) {
    return malformed_json(label, offset_of(text.data()), simdjson::TAPE_ERROR);
  } else {
    return not_a_trace(data, size, label, "valid JSON but not a trace (top level is not an object)");
  }
  if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS)
    return malformed_json(label, offset_of(rest), simdjson::TRAILING_CONTENT);
  return trace;
}

}  // namespace attnprof::ingest
