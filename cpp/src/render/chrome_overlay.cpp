// The annotated trace (overlay.h): original bytes + appended overlay events. Where the events
// lie in the original comes from ingest (scan_trace_layout); this file only formats.
#include <libdeflate.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <nlohmann/json.hpp>

#include "attnprof/dashboard.h"
#include "attnprof/overlay.h"
#include "attnprof/render.h"

namespace attnprof {
namespace {

using nlohmann::json;

constexpr const char* kOverlayCategory = "attnprof";
constexpr const char* kFlowName = "attention call -> kernel";

// Chrome trace viewer's reserved colour names (catapult color_scheme.html).
const char* cname_for(const Call& call) {
  const std::string_view cls = backend_class_of(call);
  if (cls == backend_class::kFused) return "good";
  if (cls == backend_class::kEager) return "terrible";
  return "bad";
}

// A pid or tid token of the original trace as a JSON value (a number, or a string); the raw
// text as a string when it is not valid JSON on its own.
json json_token(std::string_view raw) {
  json j = json::parse(raw, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(raw) : j;
}

// The explanation lines (explanation_lines) on one line, as a trace viewer's args show it.
std::string explanation_text(const Call& call) { return fmt::format("{}", fmt::join(explanation_lines(call), "; ")); }

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

std::vector<json> overlay_events(const Report& report, const TraceEventsLayout& layout) {
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
                 {"tflops", c->tflops},
                 // A graph capture's calls have no measured time: null, not 0.
                 {"device_time_us", c->device_time_unknown ? json(nullptr) : json(c->device_time_us)},
                 {"kernels", c->kernels.size()}, {"explanation", explanation_text(*c)}};
    out.push_back({{"ph", "X"}, {"cat", kOverlayCategory},
                   {"name", fmt::format("L{} {}", c->layer, c->backend)},
                   {"pid", kOverlayPid}, {"tid", lane}, {"ts", static_cast<double>(begin) / 1000.0},
                   {"dur", static_cast<double>(end - begin) / 1000.0}, {"cname", cname_for(*c)},
                   {"args", std::move(args)}});
    for (const KernelRef& k : c->kernels) {
      auto it = layout.device_events.find(k.correlation);
      if (it == layout.device_events.end()) continue;
      for (const DeviceEventSite& site : it->second) {
        if (site.name != k.name) continue;
        ++flow_id;
        out.push_back({{"ph", "s"}, {"cat", kOverlayCategory}, {"name", kFlowName}, {"id", flow_id},
                       {"pid", kOverlayPid}, {"tid", lane}, {"ts", std::max(site.ts_us, static_cast<double>(begin) / 1000.0)}});
        out.push_back({{"ph", "f"}, {"bp", "e"}, {"cat", kOverlayCategory}, {"name", kFlowName},
                       {"id", flow_id}, {"pid", json_token(site.pid)}, {"tid", json_token(site.tid)},
                       {"ts", site.ts_us}});
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

std::string render_annotated_trace(std::string_view original, const TraceEventsLayout& layout, const Report& report) {
  std::string out;
  const std::vector<json> events = overlay_events(report, layout);
  out.reserve(original.size() + events.size() * 320);
  out.append(original.substr(0, layout.array_end - 1));  // everything up to ']'
  bool first = layout.array_empty;
  for (const json& e : events) {
    out += first ? "\n" : ",\n";
    first = false;
    out += e.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  out.append(original.substr(layout.array_end - 1));  // ']' and whatever followed it
  return out;
}

}  // namespace attnprof
