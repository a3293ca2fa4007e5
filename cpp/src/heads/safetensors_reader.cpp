// Saved Q/K(/V, W_O) per layer in safetensors (8-byte little-endian header length, a JSON
// header, raw little-endian data). Naming convention: docs/heads.md section 5.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
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

float f32_at(const char* p) {
  float x;
  std::memcpy(&x, p, 4);
  return x;
}
float f64_at(const char* p) {
  double x;
  std::memcpy(&x, p, 8);
  return static_cast<float>(x);
}
float bf16_at(const char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}
float f16_at(const char* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return half_to_float(h);
}
float i64_at(const char* p) {
  int64_t x;
  std::memcpy(&x, p, 8);
  return static_cast<float>(x);
}
float i32_at(const char* p) {
  int32_t x;
  std::memcpy(&x, p, 4);
  return static_cast<float>(x);
}

// `count` values of `Width` bytes from `p`; a template so that each dtype's loop inlines its read.
template <size_t Width, float (*At)(const char*)>
std::vector<float> decode_values(const char* p, size_t count) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = At(p + Width * i);
  return out;
}

struct DtypeReader {
  std::string_view dtype;
  size_t width;
  std::vector<float> (*decode)(const char* p, size_t count);
};
constexpr DtypeReader kDtypeReaders[] = {
    {"F32", 4, decode_values<4, f32_at>}, {"F64", 8, decode_values<8, f64_at>},
    {"BF16", 2, decode_values<2, bf16_at>}, {"F16", 2, decode_values<2, f16_at>},
    {"I64", 8, decode_values<8, i64_at>}, {"I32", 4, decode_values<4, i32_at>},
};

// Converts one tensor's bytes to float32 (F32, F16, BF16, F64) or int64 (I64, I32).
Result<std::vector<float>> to_floats(const std::string& path, const std::string& name, const TensorEntry& t,
                                     const char* data) {
  const auto reader = std::find_if(std::begin(kDtypeReaders), std::end(kDtypeReaders),
                                   [&](const DtypeReader& r) { return r.dtype == t.dtype; });
  if (reader == std::end(kDtypeReaders))
    return bad_file(path, fmt::format("tensor {} has dtype {} (F32, F16, BF16, F64, I64, I32 are read)", name, t.dtype));
  const size_t bytes = t.end - t.begin;
  if (bytes % reader->width != 0)
    return bad_file(path, fmt::format("tensor {} has a size that is not a multiple of its dtype", name));
  if (bytes / reader->width != t.elements)
    return bad_file(path, fmt::format("tensor {}: data_offsets hold {} values, its shape needs {}", name,
                                      bytes / reader->width, t.elements));
  std::vector<float> out = reader->decode(data + t.begin, t.elements);
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
bool has_entry_fields(const nlohmann::json& e) {
  return e.is_object() && e.contains("dtype") && e.contains("shape") && e.contains("data_offsets") &&
         e["dtype"].is_string() && e["shape"].is_array() && e["data_offsets"].is_array() &&
         e["data_offsets"].size() == 2;
}

Result<TensorEntry> tensor_entry(const std::string& path, const std::string& name, const nlohmann::json& e,
                                 uint64_t data_len) {
  if (!has_entry_fields(e)) return bad_file(path, fmt::format("tensor {} has a malformed header entry", name));
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

// The three parts of a safetensors file: 8 bytes of little-endian header length, the JSON
// header, the raw data the header's data_offsets point into.
struct SafetensorsParts {
  nlohmann::json header;
  const char* data = nullptr;
  uint64_t data_len = 0;
};

Result<SafetensorsParts> split_safetensors(std::string_view bytes, const std::string& path) {
  if (bytes.empty()) return make_error(ErrorCode::kEmptyInput, path + ": empty file");
  if (bytes.size() < 8) return bad_file(path, "not a safetensors file (shorter than its 8-byte header length)");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  if (header_len == 0 || header_len > bytes.size() - 8)
    return bad_file(path, "not a safetensors file (header length beyond the end of the file)");
  auto parsed = parse_json_input(bytes.substr(8, header_len), path, "safetensors header");
  if (!parsed) return parsed.error();
  if (!parsed->is_object()) return bad_file(path, "safetensors header is not a JSON object");
  return SafetensorsParts{std::move(parsed).value(), bytes.data() + 8 + header_len, bytes.size() - 8 - header_len};
}

using Metadata = std::map<std::string, std::string>;
using LayerEntries = std::map<std::string, TensorEntry>;  // role (q, k, ...) -> its tensor

// "" for a key the metadata does not hold.
const std::string& metadata_text(const Metadata& meta, const std::string& key) {
  static const std::string kAbsent;
  const auto it = meta.find(key);
  return it == meta.end() ? kAbsent : it->second;
}

// The header's entries: __metadata__'s string values, and the tensors named layers.<L>.<role>
// by layer (other tensors are ignored).
struct HeaderEntries {
  Metadata meta;
  std::map<int64_t, LayerEntries> layers;
};

Result<HeaderEntries> header_entries(const SafetensorsParts& file, const std::string& path) {
  HeaderEntries out;
  for (auto it = file.header.begin(); it != file.header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (it->is_object())
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) out.meta[m.key()] = m->get<std::string>();
      continue;
    }
    const std::optional<TensorName> name = tensor_name_of(it.key());
    if (!name) continue;
    auto t = tensor_entry(path, it.key(), *it, file.data_len);
    if (!t) return t.error();
    int64_t layer = 0;
    if (std::from_chars(name->digits.data(), name->digits.data() + name->digits.size(), layer).ec != std::errc())
      return bad_file(path, fmt::format("tensor {}: layer index {} is out of range", it.key(), name->digits));
    out.layers[layer][std::string(name->role)] = std::move(t).value();
  }
  if (out.layers.empty()) return bad_file(path, "no tensors named layers.<L>.q / layers.<L>.k (see docs/heads.md)");
  return out;
}

// Reads one layer's tensors into `lt`, checking each shape against q's and k's (B, H, S, D).
class LayerReader {
 public:
  LayerReader(const std::string& path, int64_t index, const LayerEntries& tensors, const char* data)
      : path_(path), index_(index), tensors_(tensors), data_(data) {}

  Status read(LayerTensors& lt) {
    if (!has("q") || !has("k"))
      return bad_file(path_, fmt::format("layer {} needs both layers.{}.q and layers.{}.k", index_, index_, index_));
    if (auto st = read_q_k(lt); !st) return st;
    if (auto st = has("v") ? read_v(lt) : Status(Ok{}); !st) return st;
    if (auto st = has("o_proj") ? read_o_proj(lt) : Status(Ok{}); !st) return st;
    return has("key_lengths") ? read_key_lengths(lt.inputs) : Status(Ok{});
  }

 private:
  bool has(const char* role) const { return tensors_.count(role) != 0; }
  const std::vector<int64_t>& shape(const char* role) const { return tensors_.at(role).shape; }

  Status load(const char* role, std::vector<float>& dst) const {
    auto v = to_floats(path_, fmt::format("layers.{}.{}", index_, role), tensors_.at(role), data_);
    if (!v) return v.error();
    dst = std::move(v.value());
    return Ok{};
  }

  Status read_q_k(LayerTensors& lt) const {
    const auto& qs = shape("q");
    const auto& ks = shape("k");
    if (qs.size() != 4 || ks.size() != 4 || qs[0] != ks[0] || qs[3] != ks[3])
      return bad_file(path_, fmt::format("layer {}: q and k must be [B, H, S, D] with the same B and D", index_));
    if (auto st = load("q", lt.q); !st) return st;
    if (auto st = load("k", lt.k); !st) return st;
    HeadInputs& in = lt.inputs;
    in.layer = index_;
    in.B = qs[0];
    in.Hq = qs[1];
    in.Sq = qs[2];
    in.D = qs[3];
    in.Hkv = ks[1];
    in.Skv = ks[2];
    return Ok{};
  }

  Status read_v(LayerTensors& lt) const {
    const auto& vs = shape("v");
    HeadInputs& in = lt.inputs;
    if (vs.size() != 4 || vs[0] != in.B || vs[1] != in.Hkv || vs[2] != in.Skv)
      return bad_file(path_, fmt::format("layer {}: v must be [B, Hkv, Skv, Dv] like k", index_));
    if (auto st = load("v", lt.v); !st) return st;
    in.Dv = vs[3];
    return Ok{};
  }

  Status read_o_proj(LayerTensors& lt) const {
    const auto& os = shape("o_proj");
    if (!has("v") || os.size() != 2 || os[1] != lt.inputs.Hq * lt.inputs.Dv)
      return bad_file(path_, fmt::format("layer {}: o_proj must be [hidden, Hq * Dv] and needs v", index_));
    if (auto st = load("o_proj", lt.w_o); !st) return st;
    lt.inputs.hidden = os[0];
    return Ok{};
  }

  Status read_key_lengths(HeadInputs& in) const {
    std::vector<float> lens;
    if (auto st = load("key_lengths", lens); !st) return st;
    for (float x : lens) {
      if (!(x >= 0 && x <= static_cast<float>(in.Skv)))
        return bad_file(path_, fmt::format("layers.{}.key_lengths: {} is outside [0, Skv = {}]", index_, x, in.Skv));
      in.key_lengths.push_back(static_cast<int64_t>(x));
    }
    return Ok{};
  }

  const std::string& path_;
  int64_t index_;
  const LayerEntries& tensors_;
  const char* data_;
};

// causal and scale from __metadata__: "layers.<L>.<key>" where present, else the file's "<key>".
Status apply_layer_metadata(const Metadata& meta, const std::string& path, HeadInputs& in) {
  const std::string causal_key = fmt::format("layers.{}.causal", in.layer);
  in.causal = truthy(metadata_text(meta, meta.count(causal_key) ? causal_key : std::string("causal")));
  const std::string scale_key = fmt::format("layers.{}.scale", in.layer);
  const std::string& used_scale_key = meta.count(scale_key) ? scale_key : std::string("scale");
  if (!meta.count(used_scale_key)) return Ok{};
  auto scale = metadata_scale(path, used_scale_key, meta.at(used_scale_key));
  if (!scale) return scale.error();
  in.scale = *scale;
  return Ok{};
}

// Each layer's HeadInputs points into its own vectors: set once the vectors no longer move.
void point_inputs_at_tensors(std::vector<LayerTensors>& layers) {
  for (auto& lt : layers) {
    lt.inputs.q = lt.q.data();
    lt.inputs.k = lt.k.data();
    lt.inputs.v = lt.v.empty() ? nullptr : lt.v.data();
    lt.inputs.w_o = lt.w_o.empty() ? nullptr : lt.w_o.data();
  }
}

}  // namespace

Result<SavedHeads> parse_heads_safetensors(std::string_view bytes, const std::string& path) {
  auto file = split_safetensors(bytes, path);
  if (!file) return file.error();
  auto entries = header_entries(*file, path);
  if (!entries) return entries.error();
  const Metadata& meta = entries->meta;
  SavedHeads saved;
  if (meta.count("sliding_window")) {
    auto window = metadata_count(path, "sliding_window", meta.at("sliding_window"));
    if (!window) return window.error();
    saved.model_window = *window;
  }
  for (const auto& [index, tensors] : entries->layers) {
    LayerTensors lt;
    lt.layer = index;
    if (auto st = LayerReader(path, index, tensors, file->data).read(lt); !st) return st.error();
    if (auto st = apply_layer_metadata(meta, path, lt.inputs); !st) return st.error();
    saved.layers.push_back(std::move(lt));
  }
  point_inputs_at_tensors(saved.layers);
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
