// Reads the live-capture sidecar (docs/capture-sidecar.md). Small file, written by our own
// Python side, so nlohmann is enough; any shape problem becomes one Error line.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include "attnprof/capture.h"
#include "attnprof/io.h"

namespace attnprof {
namespace {

using nlohmann::json;

// The member `key` of an object, or null. A reference, not j.value(key, ...)'s copy, so that a
// type error deeper down still names the whole path ("/calls/0/query/shape/1").
const json& member(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

// Dimensions as PyTorch allows them: non-negative, with a product (numel) that fits int64_t.
std::vector<int64_t> dims_from(const json& j) {
  if (j.is_null()) return {};
  auto dims = j.get<std::vector<int64_t>>();
  if (!numel_fits(dims))
    throw json::out_of_range::create(406, "shape needs non-negative dimensions whose product fits in 64 bits", &j);
  return dims;
}

CapturedTensor tensor_from(const json& j) {
  CapturedTensor t;
  if (!j.is_object()) return t;
  t.shape = dims_from(member(j, "shape"));
  t.stride = j.value("stride", std::vector<int64_t>{});
  t.dtype = j.value("dtype", std::string{});
  t.requires_grad = j.value("requires_grad", false);
  return t;
}

MaskInfo mask_from(const json& j) {
  MaskInfo m;
  m.kind = mask_kind::kNone;
  if (!j.is_object()) return m;
  m.kind = j.value("kind", std::string{mask_kind::kNone});
  m.dims = dims_from(member(j, "shape"));
  m.present = m.kind != mask_kind::kNone;
  m.window = j.value("window", int64_t{0});
  m.pattern = j.value("pattern", std::string{});
  m.block_sparsity = j.value("block_sparsity", -1.0);
  m.block_size = dims_from(member(j, "block_size"));
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
  c.query = tensor_from(member(j, "query"));
  c.key = tensor_from(member(j, "key"));
  c.value = tensor_from(member(j, "value"));
  c.mask = mask_from(member(j, "mask"));
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
  auto parsed = parse_json_input(json_text, label, "capture sidecar");
  if (!parsed) return parsed.error();
  const json& doc = *parsed;
  // member(), not doc.value("format", ...): a "format" that is not a string is not a sidecar,
  // and value() would throw out of the reader (found by the fuzzer: {"format": 1}).
  const json& format = member(doc, "format");
  if (!format.is_string() || format.get<std::string>() != "attnprof-capture") {
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
    for (const json& c : member(doc, "calls")) s.calls.push_back(call_from(c));
    return s;
  } catch (const json::exception& e) {
    return make_error(ErrorCode::kMalformedJson,
                      fmt::format("{}: capture sidecar has a malformed {}", label, json_error_text(e)));
  }
}

Result<CaptureSidecar> load_sidecar(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_sidecar(*text, path);
}

}  // namespace attnprof
