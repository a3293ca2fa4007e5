// --gpu-spec FILE: a user's measured ceilings (docs/cost.md, "Bound verdict"), JSON or TOML.
#include "user_document.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "attnprof/analyze.h"
#include "attnprof/io.h"

namespace attnprof {
namespace {

constexpr std::array<std::string_view, 3> kTopKeys = {"name", "bandwidth_gbs", "tflops"};
constexpr std::array<std::string_view, 5> kDtypes = {"bf16", "fp16", "fp8", "tf32", "fp32"};

double* dtype_slot(MeasuredPeaks& peaks, std::string_view dtype) {
  if (dtype == "bf16") return &peaks.bf16_tflops;
  if (dtype == "fp16") return &peaks.fp16_tflops;
  if (dtype == "fp8") return &peaks.fp8_tflops;
  if (dtype == "tf32") return &peaks.tf32_tflops;
  if (dtype == "fp32") return &peaks.fp32_tflops;
  return nullptr;
}

// A positive, finite number, or the one-line error naming the field.
Result<double> positive(const nlohmann::json& j, const std::string& path, const std::string& field) {
  if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() <= 0)
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: {} must be a positive number, got {}", path, field, j.dump()));
  return j.get<double>();
}

std::string joined(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

// "tflops": {"bf16": N, ...} into the peaks' dtype slots.
Status read_tflops(const nlohmann::json& tflops, const std::string& path, MeasuredPeaks& peaks) {
  auto bad = [&](std::string message) { return make_error(ErrorCode::kInvalidArgument, path + ": " + message); };
  if (!tflops.is_object()) return bad("tflops must be an object of dtype: TFLOP/s");
  for (const auto& [dtype, value] : tflops.items()) {
    double* slot = dtype_slot(peaks, dtype);
    if (slot == nullptr) return bad(fmt::format("unknown dtype \"{}\" in tflops (known: {})", dtype, joined(kDtypes)));
    auto v = positive(value, path, "tflops." + dtype);
    if (!v) return v.error();
    *slot = *v;
  }
  return Ok{};
}

bool gives_a_peak(const MeasuredPeaks& p) {
  return p.bandwidth_gbs > 0 || p.bf16_tflops > 0 || p.fp16_tflops > 0 || p.fp8_tflops > 0 || p.tf32_tflops > 0 ||
         p.fp32_tflops > 0;
}

}  // namespace

Result<MeasuredPeaks> parse_measured_peaks(std::string_view text, const std::string& path) {
  auto doc = parse_user_document(text, path, "GPU spec", is_toml_path(path));
  if (!doc) return doc.error();
  const nlohmann::json& j = *doc;
  auto bad = [&](std::string message) { return make_error(ErrorCode::kInvalidArgument, path + ": " + message); };
  if (!j.is_object()) return bad("a GPU spec is an object {\"bandwidth_gbs\": N, \"tflops\": {\"bf16\": N, ...}}");
  for (const auto& [key, value] : j.items())
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
      return bad(fmt::format("unknown field \"{}\" (known: {})", key, joined(kTopKeys)));
  MeasuredPeaks peaks;
  peaks.file = path;
  if (j.contains("name")) {
    if (!j["name"].is_string()) return bad("name must be a string");
    peaks.name = j["name"].get<std::string>();
  }
  if (j.contains("bandwidth_gbs")) {
    auto bw = positive(j["bandwidth_gbs"], path, "bandwidth_gbs");
    if (!bw) return bw.error();
    peaks.bandwidth_gbs = *bw;
  }
  if (j.contains("tflops")) {
    if (auto st = read_tflops(j["tflops"], path, peaks); !st) return st.error();
  }
  if (!gives_a_peak(peaks))
    return bad("gives neither bandwidth_gbs nor any tflops: nothing to replace");
  return peaks;
}

Result<MeasuredPeaks> load_measured_peaks(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_measured_peaks(*text, path);
}

}  // namespace attnprof
