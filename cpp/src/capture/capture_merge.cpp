// Merges a live-capture sidecar into a Report built from the same run's trace. Matching is by
// time containment of a call's first CPU op: each captured call ran inside its own
// "attnprof.call#N" range, and every non-torch module inside an "attnprof.module <path>" range
// (capture.h).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "attnprof/capture.h"

namespace attnprof {
namespace {

struct Range {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::string_view label;  // what follows the prefix: call id or module path
};

// Ranges sorted by start. Properly nested per thread, so the latest-starting range that
// contains an interval is the innermost one.
class RangeIndex {
 public:
  void add(Range r) { ranges_.push_back(r); }
  void finish() {
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.begin_ns < b.begin_ns; });
  }
  const Range* innermost_containing(int64_t begin_ns, int64_t end_ns) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), begin_ns,
                               [](int64_t ts, const Range& r) { return ts < r.begin_ns; });
    while (it != ranges_.begin()) {
      --it;
      if (it->end_ns >= end_ns) return &*it;
    }
    return nullptr;
  }
  size_t size() const { return ranges_.size(); }
  const std::vector<Range>& all() const { return ranges_; }

 private:
  std::vector<Range> ranges_;
};

struct CaptureRanges {
  RangeIndex calls;
  RangeIndex modules;
};

CaptureRanges collect_ranges(const Trace& trace) {
  CaptureRanges out;
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kUserAnnotation && s.cat != Category::kCpuOp) continue;
    std::string_view name = trace.name_of(s);
    if (name.starts_with(kCallAnnotationPrefix)) {
      out.calls.add({s.ts_ns, s.end_ns(), name.substr(kCallAnnotationPrefix.size())});
    } else if (name.starts_with(kModuleAnnotationPrefix)) {
      out.modules.add({s.ts_ns, s.end_ns(), name.substr(kModuleAnnotationPrefix.size())});
    }
  }
  out.calls.finish();
  out.modules.finish();
  return out;
}

// "12 model.layers.0.self_attn" -> 12 (the id is the leading integer).
std::optional<int64_t> call_id_of(std::string_view label) {
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(label.data(), label.data() + label.size(), id);
  if (ec != std::errc{} || ptr == label.data()) return std::nullopt;
  return id;
}

// torch dtype names -> the Report's short spelling (report.h Shape::dtype).
std::string short_dtype(std::string_view torch_dtype) {
  static const std::unordered_map<std::string_view, std::string_view> kNames = {
      {"float32", "fp32"},       {"float16", "fp16"},           {"bfloat16", "bf16"},
      {"float64", "fp64"},       {"float8_e4m3fn", "fp8_e4m3"}, {"float8_e5m2", "fp8_e5m2"},
      {"float8_e4m3fnuz", "fp8_e4m3"}, {"float8_e5m2fnuz", "fp8_e5m2"}};
  auto it = kNames.find(torch_dtype);
  return it == kNames.end() ? std::string(torch_dtype) : std::string(it->second);
}

bool last_dim_contiguous(const CapturedTensor& t) { return t.stride.empty() || t.stride.back() == 1; }

// Fills the call's shape and flags from the exact arguments (only 4-D B,H,S,D inputs).
void apply_arguments(Call& call, const CapturedCall& c) {
  const auto& q = c.query.shape;
  const auto& k = c.key.shape;
  const auto& v = c.value.shape;
  if (q.size() == 4 && k.size() == 4 && v.size() == 4) {
    call.shape.B = q[0];
    call.shape.Hq = q[1];
    call.shape.Sq = q[2];
    call.shape.D = q[3];
    call.shape.Hkv = k[1];
    call.shape.Skv = k[2];
    call.shape.Dv = v[3];
    call.decode = call.shape.Sq == 1;
    call.cross = call.shape.Sq != call.shape.Skv && !call.decode;
    call.gqa = c.enable_gqa || call.shape.Hkv != call.shape.Hq;
  }
  if (!c.query.dtype.empty()) call.shape.dtype = short_dtype(c.query.dtype);
  call.mask = c.mask;
  call.causal = c.is_causal;
  call.dropout = c.dropout_p;
  if (c.scale) call.scale = *c.scale;
}

CaptureInfo capture_info_of(const CapturedCall& c) {
  CaptureInfo info;
  info.pytorch_choice = c.pytorch_choice;
  info.module_path = c.module;
  info.interface = c.interface;
  info.requires_grad = c.query.requires_grad || c.key.requires_grad || c.value.requires_grad;
  info.enable_gqa = c.enable_gqa;
  info.last_dim_contiguous =
      last_dim_contiguous(c.query) && last_dim_contiguous(c.key) && last_dim_contiguous(c.value);
  return info;
}

// The backend the capture vouches for: PyTorch's SDPA choice, or the interface when no SDPA ran.
std::string captured_backend(const CapturedCall& c) {
  if (!c.pytorch_choice.empty()) return backend_of_sdp_choice(c.pytorch_choice, c.device);
  if (c.interface == "transformers.eager") return backend::kEager;
  if (c.interface == "transformers.flex_attention") return backend::kFlex;
  return "";
}

void apply_captured(Call& call, const CapturedCall& c) {
  call.capture = capture_info_of(c);
  if (!c.module.empty()) call.module = c.module;
  if (call.phase.empty()) call.phase = c.phase;
  call.step = c.step;
  if (call.backend.empty()) call.backend = captured_backend(c);
  apply_arguments(call, c);
  call.source = "trace+capture";
}

void name_layers(Report& report) {
  for (Layer& layer : report.layers) {
    for (int64_t id : layer.call_ids) {
      if (id < 0 || id >= static_cast<int64_t>(report.calls.size())) continue;
      const Call& call = report.calls[static_cast<size_t>(id)];
      if (call.source == "trace+capture" && !call.module.empty()) {
        layer.module = call.module;
        break;
      }
    }
  }
}

void add_version_if_missing(Report& report, const std::string& name, const std::string& value) {
  if (value.empty()) return;
  auto& versions = report.source.versions;
  bool known = std::any_of(versions.begin(), versions.end(),
                           [&](const auto& kv) { return kv.first == name; });
  if (!known) versions.emplace_back(name, value);
}

}  // namespace

std::string backend_of_sdp_choice(std::string_view choice, std::string_view device) {
  if (choice == "MATH") return backend::kMath;
  if (choice == "FLASH_ATTENTION") return device == "cpu" ? backend::kCpuFlash : backend::kFlash;
  if (choice == "EFFICIENT_ATTENTION") return backend::kEfficient;
  if (choice == "CUDNN_ATTENTION") return backend::kCudnn;
  if (choice == "OVERRIDEABLE") return backend::kExternal;
  return "";
}

MergeStats merge_capture(Report& report, const Trace& trace, const CaptureSidecar& sidecar) {
  MergeStats stats;
  CaptureRanges ranges = collect_ranges(trace);
  std::unordered_map<int64_t, const CapturedCall*> by_id;
  for (const CapturedCall& c : sidecar.calls) by_id[c.id] = &c;

  std::unordered_map<int64_t, const CapturedCall*> matched;  // report call id -> record
  std::unordered_map<int64_t, bool> used_ids;
  for (Call& call : report.calls) {
    if (call.direction == "backward") continue;
    // The call's first op decides: an eager call's extracted span may reach past the range.
    const int64_t start = call.cpu_ts_ns;
    if (const Range* r = ranges.calls.innermost_containing(start, start)) {
      auto id = call_id_of(r->label);
      auto it = id ? by_id.find(*id) : by_id.end();
      if (it != by_id.end()) {
        apply_captured(call, *it->second);
        matched[call.id] = it->second;
        used_ids[*id] = true;
        ++stats.matched_calls;
        continue;
      }
    }
    if (const Range* r = ranges.modules.innermost_containing(start, start)) {
      call.module = std::string(r->label);
      call.source = "trace+capture";
      ++stats.module_only_calls;
    }
  }
  // Backward calls inherit their forward partner's capture (same module, same choice).
  for (Call& call : report.calls) {
    if (call.direction != "backward" || call.pair_id < 0) continue;
    auto it = matched.find(call.pair_id);
    if (it == matched.end()) continue;
    call.capture = capture_info_of(*it->second);
    if (!it->second->module.empty()) call.module = it->second->module;
    call.source = "trace+capture";
  }
  for (const Range& r : ranges.calls.all()) {
    auto id = call_id_of(r.label);
    if (id && by_id.count(*id) && !used_ids.count(*id)) ++stats.unmatched_captured;
  }

  name_layers(report);
  add_version_if_missing(report, "torch", sidecar.torch_version);
  add_version_if_missing(report, "transformers", sidecar.transformers_version);
  if (stats.unmatched_captured > 0) {
    report.source.missing.push_back(fmt::format(
        "{} attention call(s) captured live ran inside the trace but match no call extracted "
        "from it; their arguments are not in the report",
        stats.unmatched_captured));
  }
  for (const std::string& w : sidecar.warnings) {
    report.source.missing.push_back("live capture: " + w);
  }
  return stats;
}

Status merge_capture_for_trace(Report& report, const Trace& trace,
                               const std::string& explicit_path) {
  std::string path = explicit_path.empty() ? sidecar_path_for(trace.path) : explicit_path;
  if (explicit_path.empty()) {
    std::error_code ec;
    if (trace.path.empty() || !std::filesystem::exists(path, ec)) return Ok{};
  }
  auto sidecar = load_sidecar(path);
  if (!sidecar) return sidecar.error();
  merge_capture(report, trace, *sidecar);
  report.source.files.push_back(path);
  return Ok{};
}

}  // namespace attnprof
