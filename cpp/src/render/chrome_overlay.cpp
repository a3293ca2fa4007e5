// The annotated trace (overlay.h): original bytes + appended overlay events.
#include <libdeflate.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "attnprof/dashboard.h"
#include "attnprof/io.h"
#include "attnprof/overlay.h"
#include "ingest/input.h"
#include "ingest/utf8.h"

namespace attnprof {
namespace {

using nlohmann::json;
namespace od = simdjson::ondemand;

constexpr const char* kOverlayCategory = "attnprof";
constexpr const char* kFlowName = "attention call -> kernel";

// Chrome trace viewer's reserved colour names (catapult color_scheme.html).
const char* cname_for(const Call& call) {
  const std::string_view cls = backend_class_of(call);
  if (cls == backend_class::kFused) return "good";
  if (cls == backend_class::kEager) return "terrible";
  return "bad";
}

// Where a kernel of the Report sits in the original trace, so a flow can end on it.
struct KernelSite {
  std::string name;
  json pid, tid;
  double ts_us = 0;
};

// The byte range of the traceEvents array ('[' .. ']') and the device events that the
// Report's kernels refer to (by correlation id).
struct TraceLayout {
  size_t array_begin = 0, array_end = 0;  // array_end is one past ']'
  bool array_empty = true;
  std::unordered_map<int64_t, std::vector<KernelSite>> kernels;
};

bool is_device_category(std::string_view cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
}

json json_token(std::string_view raw) {
  json j = json::parse(raw, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(raw) : j;
}

void index_event(od::object event, const std::unordered_set<int64_t>& wanted, TraceLayout& layout) {
  std::string_view cat, name, pid_raw, tid_raw;
  double ts = 0;
  int64_t correlation = -1;
  bool has_ts = false;
  for (auto field : event) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return;
    if (key == "cat") {
      if (field.value().get_string().get(cat)) return;
    } else if (key == "name") {
      if (field.value().get_string().get(name)) return;
    } else if (key == "pid") {
      pid_raw = field.value().raw_json_token();
    } else if (key == "tid") {
      tid_raw = field.value().raw_json_token();
    } else if (key == "ts") {
      has_ts = !field.value().get_double().get(ts);
    } else if (key == "args") {
      od::object args;
      if (field.value().get_object().get(args)) continue;
      for (auto arg : args) {
        std::string_view akey;
        if (arg.unescaped_key().get(akey)) break;
        if (akey == "correlation") {
          if (arg.value().get_int64().get(correlation)) correlation = -1;
        }
      }
    }
  }
  if (!has_ts || correlation < 0 || !is_device_category(cat) || !wanted.count(correlation)) return;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
      s.remove_suffix(1);
    return s;
  };
  layout.kernels[correlation].push_back(
      KernelSite{std::string(name), json_token(trim(pid_raw)), json_token(trim(tid_raw)), ts});
}

Result<TraceLayout> scan_trace(std::string_view original, const Report& report) {
  std::unordered_set<int64_t> wanted;
  for (const Call& c : report.calls)
    for (const KernelRef& k : c.kernels)
      if (k.correlation >= 0) wanted.insert(k.correlation);

  // simdjson refuses invalid UTF-8; repair a copy in place (same length, same offsets).
  simdjson::padded_string text(original.data(), original.size());
  ingest::replace_invalid_utf8(text.data(), text.size());

  od::parser parser;
  od::document doc;
  if (parser.iterate(text).get(doc))
    return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  TraceLayout layout;
  od::array events;
  od::json_type type;
  if (doc.type().get(type)) return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  if (type == od::json_type::array) {
    if (doc.get_array().get(events)) return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  } else if (type == od::json_type::object) {
    if (doc["traceEvents"].get_array().get(events))
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

  // Second pass over the events: where the Report's kernels are.
  if (wanted.empty()) return layout;
  doc.rewind();
  if (type == od::json_type::array ? doc.get_array().get(events) : doc["traceEvents"].get_array().get(events))
    return make_error(ErrorCode::kMalformedJson, "trace is not valid JSON");
  for (auto element : events) {
    od::object event;
    if (element.get_object().get(event)) continue;
    index_event(event, wanted, layout);
  }
  return layout;
}

std::string shape_text(const Shape& s) {
  return fmt::format("B={} Hq={} Hkv={} Sq={} Skv={} D={} {}", s.B, s.Hq, s.Hkv, s.Sq, s.Skv, s.D, s.dtype);
}

std::string explanation_text(const Call& call) {
  if (!call.explanation) return "";
  const Explanation& e = *call.explanation;
  std::string text;
  for (const BackendVerdict& v : e.backends)
    for (const RuleCheck& r : v.failed)
      text += fmt::format("{} not eligible: {} ({}) {}; ", v.backend, r.rule, r.value, r.message);
  if (!e.consistent && !e.consistency_note.empty()) text += "note: " + e.consistency_note + "; ";
  if (!e.fix.empty()) text += "fix: " + e.fix;
  return text;
}

// Device span of a call: first kernel start to last kernel end; the CPU op when it has none.
std::pair<int64_t, int64_t> call_span_ns(const Call& call) {
  if (call.kernels.empty()) return {call.cpu_ts_ns, call.cpu_ts_ns + call.cpu_dur_ns};
  int64_t begin = call.kernels.front().ts_ns, end = begin;
  for (const KernelRef& k : call.kernels) {
    begin = std::min(begin, k.ts_ns);
    end = std::max(end, k.ts_ns + static_cast<int64_t>(k.device_time_us * 1000.0 + 0.5));
  }
  return {begin, end};
}

// Lanes (tids) so slices on one lane never partially overlap (trace viewers need nesting).
class LaneAllocator {
 public:
  int64_t place(int64_t begin, int64_t end) {
    for (size_t i = 0; i < lane_end_.size(); ++i) {
      if (lane_end_[i] <= begin) {
        lane_end_[i] = end;
        return static_cast<int64_t>(i) + 1;
      }
    }
    lane_end_.push_back(end);
    return static_cast<int64_t>(lane_end_.size());
  }
  size_t lanes() const { return lane_end_.size(); }

 private:
  std::vector<int64_t> lane_end_;
};

std::vector<json> overlay_events(const Report& report, const TraceLayout& layout) {
  std::vector<json> out;
  out.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kOverlayPid}, {"tid", 0},
                 {"args", {{"name", "attention (attnprof)"}}}});
  out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kOverlayPid}, {"tid", 0},
                 {"args", {{"sort_index", -1}}}});
  std::vector<const Call*> calls;
  for (const Call& c : report.calls) calls.push_back(&c);
  std::stable_sort(calls.begin(), calls.end(),
                   [](const Call* a, const Call* b) { return call_span_ns(*a).first < call_span_ns(*b).first; });
  LaneAllocator lanes;
  int64_t flow_id = kOverlayPid;
  for (const Call* c : calls) {
    const auto [begin, end] = call_span_ns(*c);
    const int64_t lane = lanes.place(begin, end);
    json args = {{"call", c->id}, {"layer", c->layer}, {"module", c->module}, {"backend", c->backend},
                 {"class", backend_class_of(*c)}, {"library", c->library}, {"op", c->backend_op.empty() ? c->op : c->backend_op},
                 {"direction", c->direction}, {"shape", shape_text(c->shape)},
                 {"tflops", c->tflops}, {"device_time_us", c->device_time_us},
                 {"kernels", c->kernels.size()}, {"explanation", explanation_text(*c)}};
    out.push_back({{"ph", "X"}, {"cat", kOverlayCategory},
                   {"name", fmt::format("L{} {}", c->layer, c->backend)},
                   {"pid", kOverlayPid}, {"tid", lane}, {"ts", static_cast<double>(begin) / 1000.0},
                   {"dur", static_cast<double>(end - begin) / 1000.0}, {"cname", cname_for(*c)},
                   {"args", std::move(args)}});
    for (const KernelRef& k : c->kernels) {
      auto it = layout.kernels.find(k.correlation);
      if (it == layout.kernels.end()) continue;
      for (const KernelSite& site : it->second) {
        if (site.name != k.name) continue;
        ++flow_id;
        out.push_back({{"ph", "s"}, {"cat", kOverlayCategory}, {"name", kFlowName}, {"id", flow_id},
                       {"pid", kOverlayPid}, {"tid", lane}, {"ts", std::max(site.ts_us, static_cast<double>(begin) / 1000.0)}});
        out.push_back({{"ph", "f"}, {"bp", "e"}, {"cat", kOverlayCategory}, {"name", kFlowName},
                       {"id", flow_id}, {"pid", site.pid}, {"tid", site.tid}, {"ts", site.ts_us}});
        break;
      }
    }
  }
  for (size_t lane = 1; lane <= lanes.lanes(); ++lane)
    out.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kOverlayPid}, {"tid", lane},
                   {"args", {{"name", lane == 1 ? std::string("attention calls")
                                                : fmt::format("attention calls ({})", lane)}}}});
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Result<std::string> gzip_compress(std::string_view data) {
  std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> c(
      libdeflate_alloc_compressor(6), &libdeflate_free_compressor);
  if (!c) return make_error(ErrorCode::kInternal, "cannot allocate a gzip compressor");
  std::string out(libdeflate_gzip_compress_bound(c.get(), data.size()), '\0');
  const size_t n = libdeflate_gzip_compress(c.get(), data.data(), data.size(), out.data(), out.size());
  if (n == 0) return make_error(ErrorCode::kInternal, "gzip compression failed");
  out.resize(n);
  return out;
}

Result<std::string> annotate_trace(std::string_view original, const Report& report) {
  auto layout = scan_trace(original, report);
  if (!layout) return layout.error();
  std::string out;
  const std::vector<json> events = overlay_events(report, *layout);
  out.reserve(original.size() + events.size() * 320);
  out.append(original.substr(0, layout->array_end - 1));  // everything up to ']'
  bool first = layout->array_empty;
  for (const json& e : events) {
    out += first ? "\n" : ",\n";
    first = false;
    out += e.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  out.append(original.substr(layout->array_end - 1));  // ']' and whatever followed it
  return out;
}

Status write_chrome_overlay(const Report& report, const std::string& trace_path, const std::string& out_path) {
  std::string path = trace_path;
  if (path.empty() && !report.source.files.empty()) path = report.source.files.front();
  if (path.empty())
    return make_error(ErrorCode::kInvalidArgument, "--chrome needs the original trace, and the report names none");
  ingest::PaddedBuffer buffer;
  if (auto read = ingest::read_whole_file(path, buffer, {}); !read) return read.error();
  auto annotated = annotate_trace(buffer.view(), report);
  if (!annotated) return make_error(annotated.error().code, path + ": " + annotated.error().message);
  if (!ends_with(out_path, ".gz")) return write_file_atomic(out_path, *annotated);
  auto compressed = gzip_compress(*annotated);
  if (!compressed) return compressed.error();
  return write_file_atomic(out_path, *compressed);
}

}  // namespace attnprof
