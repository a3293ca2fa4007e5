// Saved Q/K(/V, W_O) per layer in safetensors (8-byte little-endian header length, a JSON
// header, raw little-endian data). Naming convention: docs/heads.md section 5.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <optional>

#include "attnprof/heads.h"

namespace attnprof {
namespace {

struct TensorEntry {
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t elements = 1;  // product of shape, checked against the data's size
  uint64_t begin = 0, end = 0;
};

Error bad_file(const std::string& path, const std::string& why) {
  return make_error(ErrorCode::kUnsupported, fmt::format("{}: {}", path, why));
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31) v = mant ? std::nanf("") : INFINITY;
  else v = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

// Converts one tensor's bytes to float32 (F32, F16, BF16, F64) or int64 (I64, I32).
Result<std::vector<float>> to_floats(const std::string& path, const std::string& name, const TensorEntry& t,
                                     const char* data) {
  const size_t bytes = t.end - t.begin;
  std::vector<float> out;
  auto elems = [&](size_t width) -> Result<size_t> {
    if (bytes % width != 0) return bad_file(path, fmt::format("tensor {} has a size that is not a multiple of its dtype", name));
    if (bytes / width != t.elements)
      return bad_file(path, fmt::format("tensor {}: data_offsets hold {} values, its shape needs {}", name, bytes / width,
                                        t.elements));
    return bytes / width;
  };
  const char* p = data + t.begin;
  if (t.dtype == "F32") {
    auto n = elems(4); if (!n) return n.error();
    out.resize(*n);
    std::memcpy(out.data(), p, bytes);
  } else if (t.dtype == "F64") {
    auto n = elems(8); if (!n) return n.error();
    out.resize(*n);
    for (size_t i = 0; i < *n; ++i) { double d; std::memcpy(&d, p + 8 * i, 8); out[i] = static_cast<float>(d); }
  } else if (t.dtype == "BF16") {
    auto n = elems(2); if (!n) return n.error();
    out.resize(*n);
    for (size_t i = 0; i < *n; ++i) {
      uint16_t h; std::memcpy(&h, p + 2 * i, 2);
      out[i] = std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
    }
  } else if (t.dtype == "F16") {
    auto n = elems(2); if (!n) return n.error();
    out.resize(*n);
    for (size_t i = 0; i < *n; ++i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); out[i] = half_to_float(h); }
  } else if (t.dtype == "I64" || t.dtype == "I32") {
    const size_t w = t.dtype == "I64" ? 8 : 4;
    auto n = elems(w); if (!n) return n.error();
    out.resize(*n);
    for (size_t i = 0; i < *n; ++i) {
      int64_t x = 0;
      if (w == 8) std::memcpy(&x, p + 8 * i, 8);
      else { int32_t y; std::memcpy(&y, p + 4 * i, 4); x = y; }
      out[i] = static_cast<float>(x);
    }
  } else {
    return bad_file(path, fmt::format("tensor {} has dtype {} (F32, F16, BF16, F64, I64, I32 are read)", name, t.dtype));
  }
  // NaN/Inf in Q or K (a diverged model, a corrupt file) would turn every statistic into NaN.
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i])) return bad_file(path, fmt::format("tensor {}: value {} is {}", name, i, out[i]));
  return out;
}

// "layers.<digits>.<role>" with role q, k, v, o_proj or key_lengths (docs/heads.md). Parsed by
// hand: std::regex recurses once per character and a long hostile name overflows the stack.
struct TensorName {
  std::string_view digits, role;
};
std::optional<TensorName> tensor_name_of(std::string_view name) {
  constexpr std::string_view kPrefix = "layers.";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos) return std::nullopt;
  const std::string_view digits = name.substr(0, dot), role = name.substr(dot + 1);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  for (std::string_view known : {"q", "k", "v", "o_proj", "key_lengths"})
    if (role == known) return TensorName{digits, role};
  return std::nullopt;
}

bool truthy(const std::string& s) { return s == "1" || s == "true" || s == "True"; }

// A tensor's header entry: dtype, shape (positive dimensions: the statistics need every one,
// and their product must equal the data's size), data_offsets inside the data section.
Result<TensorEntry> tensor_entry(const std::string& path, const std::string& name, const nlohmann::json& e,
                                 uint64_t data_len) {
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets") ||
      !e["dtype"].is_string() || !e["shape"].is_array() || !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
    return bad_file(path, fmt::format("tensor {} has a malformed header entry", name));
  TensorEntry t;
  t.dtype = e["dtype"].get<std::string>();
  for (const auto& d : e["shape"]) {
    if (!d.is_number_integer() || !json_number_fits<int64_t>(d) || d.get<int64_t>() <= 0)
      return bad_file(path, fmt::format("tensor {}: shape {} needs positive integer dimensions", name, e["shape"].dump()));
    const auto dim = static_cast<uint64_t>(d.get<int64_t>());
    if (t.elements > std::numeric_limits<uint64_t>::max() / dim)
      return bad_file(path, fmt::format("tensor {}: shape {} has more elements than fit in 64 bits", name, e["shape"].dump()));
    t.elements *= dim;
    t.shape.push_back(d.get<int64_t>());
  }
  if (!e["data_offsets"][0].is_number_unsigned() || !e["data_offsets"][1].is_number_unsigned())
    return bad_file(path, fmt::format("tensor {} has bad data offsets", name));
  t.begin = e["data_offsets"][0].get<uint64_t>();
  t.end = e["data_offsets"][1].get<uint64_t>();
  if (t.begin > t.end || t.end > data_len)
    return bad_file(path, fmt::format("tensor {} lies outside the file (truncated?)", name));
  return t;
}

// __metadata__ values are strings; a number that is not one whole is an error, not a 0.
Result<int64_t> metadata_count(const std::string& path, const std::string& key, const std::string& text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    return bad_file(path, fmt::format("__metadata__ {} '{}' is not a non-negative integer", key, text));
  return value;
}

Result<double> metadata_scale(const std::string& path, const std::string& key, const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0)
    return bad_file(path, fmt::format("__metadata__ {} '{}' is not a positive finite number", key, text));
  return value;
}

}  // namespace

Result<SavedHeads> parse_heads_safetensors(std::string_view bytes, const std::string& path) {
  if (bytes.empty()) return make_error(ErrorCode::kEmptyInput, path + ": empty file");
  if (bytes.size() < 8) return bad_file(path, "not a safetensors file (shorter than its 8-byte header length)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (header_len == 0 || header_len > bytes.size() - 8)
    return bad_file(path, "not a safetensors file (header length beyond the end of the file)");
  auto parsed = parse_json_input(bytes.substr(8, header_len), path, "safetensors header");
  if (!parsed) return parsed.error();
  const nlohmann::json& header = *parsed;
  if (!header.is_object()) return bad_file(path, "safetensors header is not a JSON object");
  const char* data = bytes.data() + 8 + header_len;
  const uint64_t data_len = bytes.size() - 8 - header_len;

  SavedHeads saved;
  std::map<std::string, std::string> meta;
  std::map<int64_t, std::map<std::string, TensorEntry>> layers;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (it->is_object())
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) meta[m.key()] = m->get<std::string>();
      continue;
    }
    const std::optional<TensorName> name = tensor_name_of(it.key());
    if (!name) continue;  // other tensors are ignored
    auto t = tensor_entry(path, it.key(), *it, data_len);
    if (!t) return t.error();
    int64_t layer = 0;
    if (std::from_chars(name->digits.data(), name->digits.data() + name->digits.size(), layer).ec != std::errc())
      return bad_file(path, fmt::format("tensor {}: layer index {} is out of range", it.key(), name->digits));
    layers[layer][std::string(name->role)] = std::move(t).value();
  }
  if (layers.empty())
    return bad_file(path, "no tensors named layers.<L>.q / layers.<L>.k (see docs/heads.md)");
  if (meta.count("sliding_window")) {
    auto window = metadata_count(path, "sliding_window", meta["sliding_window"]);
    if (!window) return window.error();
    saved.model_window = *window;
  }

  for (auto& entry : layers) {
    // Named copies, not structured bindings: clang 14 (the fuzz build) cannot capture those.
    const auto index = entry.first;
    auto& tensors = entry.second;
    if (!tensors.count("q") || !tensors.count("k"))
      return bad_file(path, fmt::format("layer {} needs both layers.{}.q and layers.{}.k", index, index, index));
    LayerTensors lt;
    lt.layer = index;
    auto load = [&](const char* what, std::vector<float>& dst) -> Status {
      auto v = to_floats(path, fmt::format("layers.{}.{}", index, what), tensors[what], data);
      if (!v) return v.error();
      dst = std::move(v.value());
      return Ok{};
    };
    const auto& qs = tensors["q"].shape;
    const auto& ks = tensors["k"].shape;
    if (qs.size() != 4 || ks.size() != 4 || qs[0] != ks[0] || qs[3] != ks[3])
      return bad_file(path, fmt::format("layer {}: q and k must be [B, H, S, D] with the same B and D", index));
    if (auto st = load("q", lt.q); !st) return st.error();
    if (auto st = load("k", lt.k); !st) return st.error();
    HeadInputs& in = lt.inputs;
    in.layer = index;
    in.B = qs[0]; in.Hq = qs[1]; in.Sq = qs[2]; in.D = qs[3];
    in.Hkv = ks[1]; in.Skv = ks[2];
    if (tensors.count("v")) {
      const auto& vs = tensors["v"].shape;
      if (vs.size() != 4 || vs[0] != in.B || vs[1] != in.Hkv || vs[2] != in.Skv)
        return bad_file(path, fmt::format("layer {}: v must be [B, Hkv, Skv, Dv] like k", index));
      if (auto st = load("v", lt.v); !st) return st.error();
      in.Dv = vs[3];
    }
    if (tensors.count("o_proj")) {
      const auto& os = tensors["o_proj"].shape;
      if (!tensors.count("v") || os.size() != 2 || os[1] != in.Hq * in.Dv)
        return bad_file(path, fmt::format("layer {}: o_proj must be [hidden, Hq * Dv] and needs v", index));
      if (auto st = load("o_proj", lt.w_o); !st) return st.error();
      in.hidden = os[0];
    }
    if (tensors.count("key_lengths")) {
      std::vector<float> lens;
      if (auto st = load("key_lengths", lens); !st) return st.error();
      for (float x : lens) {
        if (!(x >= 0 && x <= static_cast<float>(in.Skv)))
          return bad_file(path, fmt::format("layers.{}.key_lengths: {} is outside [0, Skv = {}]", index, x, in.Skv));
        in.key_lengths.push_back(static_cast<int64_t>(x));
      }
    }
    const std::string causal_key = fmt::format("layers.{}.causal", index);
    in.causal = truthy(meta.count(causal_key) ? meta[causal_key] : meta["causal"]);
    const std::string scale_key = fmt::format("layers.{}.scale", index);
    const std::string& used_scale_key = meta.count(scale_key) ? scale_key : std::string("scale");
    if (meta.count(used_scale_key)) {
      auto scale = metadata_scale(path, used_scale_key, meta[used_scale_key]);
      if (!scale) return scale.error();
      in.scale = *scale;
    }
    saved.layers.push_back(std::move(lt));
  }
  for (auto& lt : saved.layers) {  // pointers taken once the vectors no longer move
    lt.inputs.q = lt.q.data();
    lt.inputs.k = lt.k.data();
    lt.inputs.v = lt.v.empty() ? nullptr : lt.v.data();
    lt.inputs.w_o = lt.w_o.empty() ? nullptr : lt.w_o.data();
  }
  return saved;
}

Result<SavedHeads> load_heads_safetensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(ErrorCode::kFileNotFound, path + ": cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_heads_safetensors(bytes, path);
}

Result<HeadsSection> analyze_saved_heads(const SavedHeads& saved, const std::string& path, HeadOptions options) {
  if (options.model_window == 0) options.model_window = saved.model_window;
  std::vector<HeadStats> all;
  HeadModelShape shape;
  for (const auto& lt : saved.layers) {
    auto stats = compute_head_stats(lt.inputs, options);
    if (!stats) return make_error(stats.error().code, path + ": layer " + std::to_string(lt.layer) + ": " + stats.error().message);
    for (auto& s : stats.value()) all.push_back(std::move(s));
    shape = {lt.inputs.Hq, lt.inputs.Hkv, lt.inputs.D, lt.inputs.Dv};
  }
  return summarize_heads(std::move(all), shape, options);
}

Result<HeadsSection> analyze_heads_file(const std::string& path, HeadOptions options) {
  auto saved = load_heads_safetensors(path);
  if (!saved) return saved.error();
  return analyze_saved_heads(*saved, path, options);
}

}  // namespace attnprof
