// load_trace / parse_trace: the document-level walk. Event and key handling live in
// trace_builder.cpp; getting the bytes off disk in input.cpp.
#include "attnprof/ingest.h"

#include <simdjson.h>

#include <string>

#include "ingest/input.h"
#include "ingest/trace_builder.h"
#include "ingest/utf8.h"

namespace attnprof {
namespace {

using ingest::od::json_type;
namespace od = ingest::od;

Error malformed(const std::string& label, std::string_view text, const char* where,
                simdjson::error_code e) {
  std::string msg = label + ": malformed JSON";
  if (where != nullptr && where >= text.data() && where <= text.data() + text.size())
    msg += " near byte " + std::to_string(where - text.data()) + " of " + std::to_string(text.size());
  msg += " (" + std::string(simdjson::error_message(e)) + ")";
  return make_error(ErrorCode::kMalformedJson, msg);
}

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

// Walks the document: an object with traceEvents (Kineto), or a bare array of events
// (the Chrome "JSON Array Format").
Result<Trace> parse_document(ingest::PaddedBuffer& buffer, const std::string& label) {
  Trace trace;
  trace.path = label;
  const std::string_view text = buffer.view();
  if (only_whitespace(text)) return make_error(ErrorCode::kEmptyInput, label + ": empty file");
  if (const size_t fixed = ingest::replace_invalid_utf8(buffer.data(), buffer.size()); fixed > 0)
    trace.add_issue("non_utf8_text", std::to_string(fixed) + " invalid UTF-8 sequence(s) replaced by '?'");

  od::parser parser;
  od::document doc;
  const simdjson::padded_string_view input(buffer.data(), buffer.size(), buffer.capacity());
  if (auto e = parser.iterate(input).get(doc)) return malformed(label, text, nullptr, e);
  ingest::TraceBuilder builder(trace);
  const char* where = text.data();  // start of the value being read, for error messages

  json_type type;
  if (auto e = doc.type().get(type)) return malformed(label, text, where, e);
  if (type == json_type::array) {
    od::array events;
    if (auto e = doc.get_array().get(events)) return malformed(label, text, where, e);
    bool first = true;
    for (auto event_result : events) {
      od::value event;
      if (auto e = event_result.get(event)) return malformed(label, text, where, e);
      where = event.raw_json_token().data();
      if (first) {
        json_type t;
        if (auto e = event.type().get(t)) return malformed(label, text, where, e);
        if (t != json_type::object)
          return make_error(ErrorCode::kNotATrace, label + ": a JSON array, but not of trace events");
        first = false;
      }
      if (auto e = builder.add_event(event)) return malformed(label, text, where, e);
    }
    if (first) return make_error(ErrorCode::kNotATrace, label + ": an empty JSON array, not a trace");
  } else if (type == json_type::object) {
    od::object top;
    if (auto e = doc.get_object().get(top)) return malformed(label, text, where, e);
    bool saw_events = false;
    for (auto field_result : top) {
      std::string_view key;
      if (auto e = field_result.unescaped_key().get(key)) return malformed(label, text, where, e);
      od::value v;
      if (auto e = field_result.value().get(v)) return malformed(label, text, where, e);
      where = v.raw_json_token().data();
      if (key != "traceEvents") {
        if (auto e = builder.add_top_level(key, v)) return malformed(label, text, where, e);
        continue;
      }
      od::array events;
      if (auto e = v.get_array().get(events)) {
        if (ingest::is_structural_error(e)) return malformed(label, text, where, e);
        return make_error(ErrorCode::kNotATrace, label + ": \"traceEvents\" is not an array");
      }
      saw_events = true;
      for (auto event_result : events) {
        od::value event;
        if (auto e = event_result.get(event)) return malformed(label, text, where, e);
        where = event.raw_json_token().data();
        if (auto e = builder.add_event(event)) return malformed(label, text, where, e);
      }
    }
    if (!saw_events)
      return make_error(ErrorCode::kNotATrace, label + ": valid JSON but not a trace (no \"traceEvents\" array)");
  } else if (!is_valid_scalar_document(doc, type)) {
    return malformed(label, text, text.data(), simdjson::TAPE_ERROR);
  } else {
    return make_error(ErrorCode::kNotATrace, label + ": valid JSON but not a trace (top level is not an object)");
  }
  if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS)
    return malformed(label, text, rest, simdjson::TRAILING_CONTENT);
  return trace;
}

}  // namespace

Result<Trace> load_trace(const std::string& path, const IngestOptions& options) {
  ingest::PaddedBuffer buffer;
  if (auto st = ingest::read_whole_file(path, buffer, options.progress); !st) return st.error();
  return parse_document(buffer, path);
}

Result<Trace> parse_trace(std::string_view json_text, const std::string& label, const IngestOptions&) {
  ingest::PaddedBuffer buffer;
  buffer.assign(json_text);
  return parse_document(buffer, label);
}

}  // namespace attnprof
