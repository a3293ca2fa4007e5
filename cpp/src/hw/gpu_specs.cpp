// The GPU spec table (data). Sources per row in docs/cost.md ("GPU spec table"); numbers are
// dense (no 2:4 sparsity), memory in datasheet GB (1e9 bytes).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "attnprof/hw.h"

namespace attnprof {
namespace {

constexpr int64_t kGB = 1000LL * 1000 * 1000;

// name, vendor, arch, memory, GB/s, bf16, fp16, fp8, tf32, fp32, require, exclude
constexpr GpuSpec kSpecs[] = {
    {"A100-40GB", "nvidia", "sm80", 40 * kGB, 1555, 312, 312, 0, 156, 19.5, {"a100"}, {"80gb"}},
    {"A100-80GB", "nvidia", "sm80", 80 * kGB, 2039, 312, 312, 0, 156, 19.5, {"a100", "80gb"}, {"pcie"}},
    {"A100-80GB-PCIe", "nvidia", "sm80", 80 * kGB, 1935, 312, 312, 0, 156, 19.5, {"a100", "80gb", "pcie"}, {}},
    {"H100-SXM", "nvidia", "sm90", 80 * kGB, 3350, 989.4, 989.4, 1978.9, 494.7, 66.9, {"h100"}, {"pcie", "nvl"}},
    {"H100-PCIe", "nvidia", "sm90", 80 * kGB, 2000, 756, 756, 1513, 0, 51, {"h100", "pcie"}, {}},
    {"H200", "nvidia", "sm90", 141 * kGB, 4800, 989, 989, 1979, 494.7, 67, {"h200"}, {"gh200"}},
    {"B200", "nvidia", "sm100", 179 * kGB, 8000, 2250, 2250, 4500, 0, 80, {"b200"}, {"gb200"}},
    {"L4", "nvidia", "sm89", 24 * kGB, 300, 121, 121, 242.5, 0, 30.3, {"l4"}, {}},
    {"L40S", "nvidia", "sm89", 48 * kGB, 864, 362, 362, 733, 0, 91.6, {"l40s"}, {}},
    {"RTX4090", "nvidia", "sm89", 24 * kGB, 1008, 165.2, 165.2, 330.3, 0, 82.6, {"rtx4090"}, {}},
    {"MI300X", "amd", "gfx942", 192 * kGB, 5300, 1307.4, 1307.4, 2614.9, 0, 163.4, {"mi300x"}, {}},
    {"MI325X", "amd", "gfx942", 256 * kGB, 6000, 1307.4, 1307.4, 2614.9, 0, 163.4, {"mi325x"}, {}},
    {"MI350X", "amd", "gfx950", 288 * kGB, 8000, 2300, 2300, 4600, 0, 0, {"mi350x"}, {}},
    {"MI355X", "amd", "gfx950", 288 * kGB, 8000, 2516.6, 2516.6, 5033.2, 0, 0, {"mi355x"}, {}},
    // CPU: no datasheet peak; the roofline shows achieved numbers only.
    {"CPU", "cpu", "cpu", 0, 0, 0, 0, 0, 0, 0, {"cpu"}, {}},
};

// Lower-cased alphanumeric runs: "NVIDIA A100-SXM4-80GB" -> {nvidia, a100, sxm4, 80gb}.
std::vector<std::string> tokens_of(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      current += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

// True when `key` equals one token or several adjacent tokens joined ("rtx" "4090").
bool has_key(const std::vector<std::string>& tokens, std::string_view key) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string joined;
    for (size_t j = i; j < tokens.size() && joined.size() < key.size(); ++j) {
      joined += tokens[j];
      if (joined == key) return true;
    }
  }
  return false;
}

bool matches(const GpuSpec& spec, const std::vector<std::string>& tokens) {
  for (const char* key : spec.require)
    if (key != nullptr && !has_key(tokens, key)) return false;
  for (const char* key : spec.exclude)
    if (key != nullptr && has_key(tokens, key)) return false;
  return true;
}

}  // namespace

std::span<const GpuSpec> gpu_specs() { return kSpecs; }

const GpuSpec* find_gpu_spec(std::string_view device_name) {
  const auto tokens = tokens_of(device_name);
  if (tokens.empty()) return nullptr;
  for (const GpuSpec& spec : kSpecs)
    if (matches(spec, tokens)) return &spec;
  return nullptr;
}

std::string gpu_arch(std::string_view device_name, int compute_major, int compute_minor) {
  if (const GpuSpec* spec = find_gpu_spec(device_name)) return spec->arch;
  const std::vector<std::string> tokens = tokens_of(device_name);
  for (const auto& token : tokens)
    if (token.size() > 3 && token.starts_with("gfx")) return token;
  // ROCm fills computeMajor/Minor too (9.0 on gfx90a), which is not an sm number: an AMD
  // device whose gfx target the name does not give is "rocm", never "sm90".
  const bool amd = has_key(tokens, "amd") || has_key(tokens, "instinct") || has_key(tokens, "radeon");
  if (amd) return "rocm";
  if (compute_major > 0) return "sm" + std::to_string(compute_major) + std::to_string(compute_minor);
  return "";
}

double peak_tflops(const GpuSpec& spec, std::string_view dtype) {
  if (dtype == "bf16") return spec.bf16_tflops;
  if (dtype == "fp16") return spec.fp16_tflops;
  if (dtype.starts_with("fp8")) return spec.fp8_tflops;
  if (dtype == "tf32") return spec.tf32_tflops;
  if (dtype == "fp32") return spec.fp32_tflops;
  return 0;
}

int dtype_bytes(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "fp64") return 8;
  if (dtype.starts_with("fp8") || dtype == "int8") return 1;
  return 0;
}

}  // namespace attnprof
