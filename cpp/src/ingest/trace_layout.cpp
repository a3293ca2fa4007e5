// The original text of a trace and where its events lie (trace_layout.h), for the annotated
// trace: one more on-demand pass over the bytes, reading only cat, name, pid, tid, ts and
// args.correlation, with the categories ingest itself uses.
#include <simdjson.h>

#include "attnprof/ingest.h"
#include "ingest/input.h"
#include "ingest/scanner.h"
#include "ingest/trace_builder.h"
#include "ingest/utf8.h"

namespace attnprof {
namespace {

namespace od = simdjson::ondemand;

bool is_device_category(std::string_view cat) { return is_gpu_activity(ingest::category_of(cat)); }

std::string_view trimmed_token(std::string_view s) {
  while (!s.empty() && ingest::is_json_space(s.back())) s.remove_suffix(1);
  return s;
}

// long: one pass over the event's fields with one case per key read (simdjson On-Demand reads
// each field once, in file order)
void index_event(od::object event, const std::unordered_set<int64_t>& wanted, TraceEventsLayout& layout) {
  std::string_view cat, name, pid_raw, tid_raw;
  double ts = 0;
  int64_t correlation = -1;
  bool has_ts = false;
  for (auto field : event) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return;
    if (key == kineto::kCat) {
      if (field.value().get_string().get(cat)) return;
    } else if (key == kineto::kName) {
      if (field.value().get_string().get(name)) return;
    } else if (key == kineto::kPid) {
      pid_raw = field.value().raw_json_token();
    } else if (key == kineto::kTid) {
      tid_raw = field.value().raw_json_token();
    } else if (key == kineto::kTs) {
      has_ts = !field.value().get_double().get(ts);
    } else if (key == kineto::kArgs) {
      od::object args;
      if (field.value().get_object().get(args)) continue;
      for (auto arg : args) {
        std::string_view akey;
        if (arg.unescaped_key().get(akey)) break;
        if (akey == kineto::kCorrelation) {
          if (arg.value().get_int64().get(correlation)) correlation = -1;
        }
      }
    }
  }
  if (!has_ts || correlation < 0 || !is_device_category(cat) || !wanted.count(correlation)) return;
  layout.device_events[correlation].push_back(DeviceEventSite{
      std::string(name), std::string(trimmed_token(pid_raw)), std::string(trimmed_token(tid_raw)), ts});
}

simdjson::error_code events_of(od::document& doc, od::json_type type, od::array& events) {
  return type == od::json_type::array ? doc.get_array().get(events) : doc[kineto::kTraceEvents].get_array().get(events);
}

}  // namespace

Result<std::string> read_trace_text(const std::string& path) {
  ingest::PaddedBuffer buffer;
  if (auto read = ingest::read_whole_file(path, buffer, {}); !read) return read.error();
  return buffer.release();
}

namespace {

// The layout of `text` (valid UTF-8, padded for simdjson); offsets are from text.data().
Result<TraceEventsLayout> layout_of(simdjson::padded_string_view text, const std::unordered_set<int64_t>& wanted) {
  od::parser parser;
  od::document doc;
  if (parser.iterate(text).get(doc))
    return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  TraceEventsLayout layout;
  od::array events;
  od::json_type type;
  if (doc.type().get(type)) return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  if (type == od::json_type::array) {
    if (doc.get_array().get(events)) return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  } else if (type == od::json_type::object) {
    if (doc[kineto::kTraceEvents].get_array().get(events))
      return make_error(ErrorCode::kNotATrace, "trace has no traceEvents array");
  } else {
    return make_error(ErrorCode::kNotATrace, "trace is neither a JSON object nor an array");
  }
  std::string_view raw;
  if (events.raw_json().get(raw)) return make_error(ErrorCode::kMalformedJson, "traceEvents is not valid JSON");
  layout.array_begin = static_cast<size_t>(raw.data() - text.data());
  const size_t close = raw.find_last_of(']');
  if (close == std::string_view::npos) return make_error(ErrorCode::kMalformedJson, "traceEvents is not closed");
  layout.array_end = layout.array_begin + close + 1;
  layout.array_empty = raw.substr(1, close - 1).find_first_not_of(" \t\r\n") == std::string_view::npos;

  // Second pass over the events: where the wanted device events are.
  if (wanted.empty()) return layout;
  doc.rewind();
  if (events_of(doc, type, events)) return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  for (auto element : events) {
    od::object event;
    if (element.get_object().get(event)) continue;
    index_event(event, wanted, layout);
  }
  return layout;
}

}  // namespace

Result<TraceEventsLayout> scan_trace_layout(std::string_view original, const std::unordered_set<int64_t>& wanted) {
  // simdjson refuses invalid UTF-8; repair a copy in place (same length, same offsets).
  simdjson::padded_string text(original.data(), original.size());
  ingest::replace_invalid_utf8(text.data(), text.size());
  return layout_of(text, wanted);
}

Result<TraceEventsLayout> scan_trace_layout(std::string& text, const std::unordered_set<int64_t>& wanted) {
  if (!simdjson::validate_utf8(text.data(), text.size())) return scan_trace_layout(std::string_view(text), wanted);
  // simdjson reads up to SIMDJSON_PADDING bytes past the end (their values do not matter): the
  // string's spare capacity holds them, so the text is scanned where it lies.
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING) text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  return layout_of(simdjson::padded_string_view(text.data(), text.size(), text.capacity()), wanted);
}

}  // namespace attnprof
