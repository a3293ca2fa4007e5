// Merges a live-capture sidecar into a Report built from the same run's trace. Matching is by
// time containment of a call's first CPU op: each captured call ran inside its own
// "attnprof.call#N" range, and every non-torch module inside an "attnprof.module <path>" range
// (capture.h).
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <unordered_map>

#include <fmt/format.h>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "capture_ranges.h"

namespace attnprof {
namespace {

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
  if (!c.query.dtype.empty()) {
    const std::string known = dtype_name(c.query.dtype);
    call.shape.dtype = known.empty() ? c.query.dtype : known;  // unknown dtypes keep torch's name
  }
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

}  // namespace

void apply_captured(Call& call, const CapturedCall& c) {
  call.capture = capture_info_of(c);
  if (!c.module.empty()) call.module = c.module;
  if (call.phase.empty()) call.phase = c.phase;
  call.step = c.step;
  if (call.backend.empty()) call.backend = captured_backend(c);
  apply_arguments(call, c);
  call.source = "trace+capture";
}

namespace {

void name_layers(const std::vector<Call>& calls, std::vector<Layer>& layers) {
  for (Layer& layer : layers) {
    for (int64_t id : layer.call_ids) {
      if (id < 0 || id >= static_cast<int64_t>(calls.size())) continue;
      const Call& call = calls[static_cast<size_t>(id)];
      if (call.source == "trace+capture" && !call.module.empty()) {
        layer.module = call.module;
        break;
      }
    }
  }
}

}  // namespace

std::string backend_of_sdp_choice(std::string_view choice, std::string_view device) {
  return std::string(backend_of_sdp_backend(choice, device));
}

namespace {

using CapturedById = std::unordered_map<int64_t, const CapturedCall*>;

// Each forward call inside a captured call's range takes that record (keyed by report call id
// in `matched`; the record ids used in `used_ids`); one inside only a module range takes the
// module path.
void match_forward_calls(std::vector<Call>& calls, const CaptureRanges& ranges, const CapturedById& by_id,
                         CapturedById& matched, std::unordered_map<int64_t, bool>& used_ids, MergeStats& stats) {
  for (Call& call : calls) {
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
}

// Backward calls inherit their forward partner's capture (same module, same choice).
void inherit_forward_capture(std::vector<Call>& calls, const CapturedById& matched) {
  for (Call& call : calls) {
    if (call.direction != "backward" || call.pair_id < 0) continue;
    auto it = matched.find(call.pair_id);
    if (it == matched.end()) continue;
    call.capture = capture_info_of(*it->second);
    if (!it->second->module.empty()) call.module = it->second->module;
    call.source = "trace+capture";
  }
}

// The capture's versions, and what it could not add to the report.
void note_versions_and_missing(const CaptureSidecar& sidecar, CaptureSection& section) {
  for (const auto& [name, value] : {std::pair{"torch", &sidecar.torch_version},
                                    std::pair{"transformers", &sidecar.transformers_version}})
    if (!value->empty()) section.versions.emplace_back(name, *value);
  if (section.stats.unmatched_captured > 0) {
    section.missing.push_back(fmt::format(
        "{} attention call(s) captured live ran inside the trace but match no call extracted "
        "from it; their arguments are not in the report",
        section.stats.unmatched_captured));
  }
  for (const std::string& w : sidecar.warnings) section.missing.push_back("live capture: " + w);
}

}  // namespace

CaptureSection merge_capture(std::vector<Call>& calls, std::vector<Layer>& layers, const Trace& trace,
                             const CaptureSidecar& sidecar) {
  CaptureSection section;
  MergeStats& stats = section.stats;
  CaptureRanges ranges = collect_ranges(trace);
  CapturedById by_id;
  for (const CapturedCall& c : sidecar.calls) by_id[c.id] = &c;
  CapturedById matched;  // report call id -> record
  std::unordered_map<int64_t, bool> used_ids;
  match_forward_calls(calls, ranges, by_id, matched, used_ids, stats);
  inherit_forward_capture(calls, matched);
  for (const Range& r : ranges.calls.all()) {
    auto id = call_id_of(r.label);
    if (id && by_id.count(*id) && !used_ids.count(*id)) ++stats.unmatched_captured;
  }
  name_layers(calls, layers);
  note_versions_and_missing(sidecar, section);
  return section;
}

Result<std::optional<LoadedSidecar>> find_sidecar(const Trace& trace, const std::string& explicit_path) {
  std::string path = explicit_path.empty() ? sidecar_path_for(trace.path) : explicit_path;
  if (explicit_path.empty()) {
    std::error_code ec;
    if (trace.path.empty() || !std::filesystem::exists(path, ec)) return std::optional<LoadedSidecar>{};
  }
  auto sidecar = load_sidecar(path);
  if (!sidecar) return sidecar.error();
  return std::optional<LoadedSidecar>{LoadedSidecar{std::move(path), std::move(sidecar).value()}};
}

}  // namespace attnprof
