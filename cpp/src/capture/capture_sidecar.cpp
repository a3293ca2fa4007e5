// Reads the live-capture sidecar (docs/capture-sidecar.md). Small file, written by our own
// Python side, so nlohmann is enough; any shape problem becomes one Error line.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "attnprof/capture.h"
#include "attnprof/io.h"

namespace attnprof {
namespace {

using nlohmann::json;

CapturedTensor tensor_from(const json& j) {
  CapturedTensor t;
  if (!j.is_object()) return t;
  t.shape = j.value("shape", std::vector<int64_t>{});
  t.stride = j.value("stride", std::vector<int64_t>{});
  t.dtype = j.value("dtype", std::string{});
  t.requires_grad = j.value("requires_grad", false);
  return t;
}

MaskInfo mask_from(const json& j) {
  MaskInfo m;
  m.kind = "none";
  if (!j.is_object()) return m;
  m.kind = j.value("kind", std::string{"none"});
  m.dims = j.value("shape", std::vector<int64_t>{});
  m.present = m.kind != "none";
  m.window = j.value("window", int64_t{0});
  m.pattern = j.value("pattern", std::string{});
  m.block_sparsity = j.value("block_sparsity", -1.0);
  m.block_size = j.value("block_size", std::vector<int64_t>{});
  return m;
}

CapturedCall call_from(const json& j) {
  CapturedCall c;
  c.id = j.at("id").get<int64_t>();
  c.module = j.value("module", std::string{});
  c.module_class = j.value("module_class", std::string{});
  c.interface = j.value("interface", std::string{});
  c.device = j.value("device", std::string{});
  c.step = j.value("step", int64_t{0});
  c.phase = j.value("phase", std::string{});
  c.query = tensor_from(j.value("query", json{}));
  c.key = tensor_from(j.value("key", json{}));
  c.value = tensor_from(j.value("value", json{}));
  c.mask = mask_from(j.value("mask", json{}));
  c.is_causal = j.value("is_causal", false);
  c.dropout_p = j.value("dropout_p", 0.0);
  if (auto it = j.find("scale"); it != j.end() && it->is_number()) c.scale = it->get<double>();
  c.enable_gqa = j.value("enable_gqa", false);
  c.grad_enabled = j.value("grad_enabled", false);
  c.pytorch_choice = j.value("pytorch_choice", std::string{});
  return c;
}

}  // namespace

std::string sidecar_path_for(const std::string& trace_path) {
  return trace_path + std::string(kSidecarSuffix);
}

Result<CaptureSidecar> parse_sidecar(std::string_view json_text, const std::string& label) {
  json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return make_error(ErrorCode::kMalformedJson, fmt::format("{}: capture sidecar is not valid JSON", label));
  }
  if (!doc.is_object() || doc.value("format", std::string{}) != "attnprof-capture") {
    return make_error(ErrorCode::kNotATrace,
                      fmt::format("{}: not an attnprof capture sidecar (no \"format\": \"attnprof-capture\")", label));
  }
  try {
    CaptureSidecar s;
    s.format_version = doc.value("format_version", 0);
    if (s.format_version > kSidecarFormatVersion) {
      return make_error(ErrorCode::kUnsupported,
                        fmt::format("{}: capture sidecar format {} is newer than this attnprof reads ({})",
                                    label, s.format_version, kSidecarFormatVersion));
    }
    s.torch_version = doc.value("torch_version", std::string{});
    s.transformers_version = doc.value("transformers_version", std::string{});
    s.warnings = doc.value("warnings", std::vector<std::string>{});
    for (const json& c : doc.value("calls", json::array())) s.calls.push_back(call_from(c));
    return s;
  } catch (const json::exception& e) {
    return make_error(ErrorCode::kMalformedJson,
                      fmt::format("{}: capture sidecar has a malformed field ({})", label, e.what()));
  }
}

Result<CaptureSidecar> load_sidecar(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_sidecar(*text, path);
}

}  // namespace attnprof
