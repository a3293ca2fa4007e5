// The GPU spec table (data). Sources per row in docs/cost.md ("GPU spec table"); numbers are
// dense (no 2:4 sparsity), memory in datasheet GB (1e9 bytes).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "attnprof/hw.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

constexpr int64_t kGB = 1000LL * 1000 * 1000;

// name, vendor, arch, memory, compute units, GB/s, bf16, fp16, fp8, tf32, fp32, require, exclude
constexpr GpuSpec kSpecs[] = {
    // V100: SXM2 and PCIe boards, 16 or 32 GB; no bf16, tf32 or fp8 on Volta (fp16 tensor cores).
    {"V100-SXM2-16GB", "nvidia", "sm70", 16 * kGB, 80, 900, 0, 125, 0, 0, 15.7, {"v100"}, {"32gb", "pcie"}},
    {"V100-SXM2-32GB", "nvidia", "sm70", 32 * kGB, 80, 900, 0, 125, 0, 0, 15.7, {"v100", "32gb"}, {"pcie"}},
    {"V100-PCIe-16GB", "nvidia", "sm70", 16 * kGB, 80, 900, 0, 112, 0, 0, 14, {"v100", "pcie"}, {"32gb"}},
    {"V100-PCIe-32GB", "nvidia", "sm70", 32 * kGB, 80, 900, 0, 112, 0, 0, 14, {"v100", "pcie", "32gb"}, {}},
    {"A100-40GB", "nvidia", "sm80", 40 * kGB, 108, 1555, 312, 312, 0, 156, 19.5, {"a100"}, {"80gb"}},
    {"A100-80GB", "nvidia", "sm80", 80 * kGB, 108, 2039, 312, 312, 0, 156, 19.5, {"a100", "80gb"}, {"pcie"}},
    {"A100-80GB-PCIe", "nvidia", "sm80", 80 * kGB, 108, 1935, 312, 312, 0, 156, 19.5, {"a100", "80gb", "pcie"}, {}},
    {"H100-SXM", "nvidia", "sm90", 80 * kGB, 132, 3350, 989.4, 989.4, 1978.9, 494.7, 66.9, {"h100"}, {"pcie", "nvl"}},
    {"H100-PCIe", "nvidia", "sm90", 80 * kGB, 114, 2000, 756, 756, 1513, 0, 51, {"h100", "pcie"}, {}},
    {"H200", "nvidia", "sm90", 141 * kGB, 132, 4800, 989, 989, 1979, 494.7, 67, {"h200"}, {"gh200"}},
    {"B200", "nvidia", "sm100", 179 * kGB, 148, 8000, 2250, 2250, 4500, 0, 80, {"b200"}, {"gb200"}},
    {"L4", "nvidia", "sm89", 24 * kGB, 58, 300, 121, 121, 242.5, 0, 30.3, {"l4"}, {}},
    {"L40S", "nvidia", "sm89", 48 * kGB, 142, 864, 362, 362, 733, 0, 91.6, {"l40s"}, {}},
    {"RTX4090", "nvidia", "sm89", 24 * kGB, 128, 1008, 165.2, 165.2, 330.3, 0, 82.6, {"rtx4090"}, {}},
    // MI250X / MI250: one GCD (what ROCm and a trace show as one device): half the OAM.
    {"MI250X", "amd", "gfx90a", 64 * kGB, 110, 1638.4, 191.5, 191.5, 0, 0, 23.95, {"mi250x"}, {}},
    {"MI250", "amd", "gfx90a", 64 * kGB, 104, 1638.4, 181.0, 181.0, 0, 0, 22.6, {"mi250"}, {"mi250x"}},
    {"MI300X", "amd", "gfx942", 192 * kGB, 304, 5300, 1307.4, 1307.4, 2614.9, 0, 163.4, {"mi300x"}, {}},
    {"MI325X", "amd", "gfx942", 256 * kGB, 304, 6000, 1307.4, 1307.4, 2614.9, 0, 163.4, {"mi325x"}, {}},
    {"MI350X", "amd", "gfx950", 288 * kGB, 256, 8000, 2300, 2300, 4600, 0, 0, {"mi350x"}, {}},
    {"MI355X", "amd", "gfx950", 288 * kGB, 256, 8000, 2516.6, 2516.6, 5033.2, 0, 0, {"mi355x"}, {}},
    // CPU: no datasheet peak; the roofline shows achieved numbers only.
    {"CPU", "cpu", "cpu", 0, 0, 0, 0, 0, 0, 0, 0, {"cpu"}, {}},
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

std::string gpu_spec_names(bool with_memory_only) {
  std::string names;
  for (const GpuSpec& spec : kSpecs) {
    if (with_memory_only && spec.memory_bytes <= 0) continue;
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

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

namespace {

std::string vendor_from_name(const std::vector<std::string>& tokens) {
  for (const char* key : {"amd", "instinct", "radeon"})
    if (has_key(tokens, key)) return "amd";
  for (const char* key : {"nvidia", "tesla", "geforce", "quadro"})
    if (has_key(tokens, key)) return "nvidia";
  return "";
}

// The one spec of this vendor with this many compute units whose memory is within 10% of
// the reported one (datasheet GB vs GiB, reserved memory); nullptr when none or several fit.
const GpuSpec* spec_by_columns(std::string_view vendor, int compute_units, int64_t memory_bytes) {
  if (vendor.empty() || compute_units <= 0 || memory_bytes <= 0) return nullptr;
  const GpuSpec* found = nullptr;
  for (const GpuSpec& spec : kSpecs) {
    if (vendor != spec.vendor || spec.compute_units != compute_units || spec.memory_bytes <= 0) continue;
    const double ratio = static_cast<double>(memory_bytes) / static_cast<double>(spec.memory_bytes);
    if (ratio < 0.9 || ratio > 1.1) continue;
    if (found) return nullptr;
    found = &spec;
  }
  return found;
}

std::string fields_seen(const DeviceEvidence& e) {
  if (e.name.empty() && e.compute_units <= 0 && e.memory_bytes <= 0)
    return e.kernel_vendor.empty() ? "no deviceProperties" : "no deviceProperties, " + e.kernel_vendor + " kernel names";
  std::string out = e.name.empty() ? "no name" : "name '" + e.name + "'";
  if (e.warp_size > 0) out += ", warpSize " + std::to_string(e.warp_size);
  if (e.compute_units > 0) out += ", " + std::to_string(e.compute_units) + " compute units";
  if (e.memory_bytes > 0) out += ", " + bytes_text(static_cast<double>(e.memory_bytes));
  if (e.compute_major > 0) out += ", compute " + std::to_string(e.compute_major) + "." + std::to_string(e.compute_minor);
  if (!e.kernel_vendor.empty()) out += ", " + e.kernel_vendor + " kernel names";
  return out;
}

}  // namespace

DeviceIdentity identify_device(const DeviceEvidence& e) {
  DeviceIdentity id;
  const bool described = !e.name.empty() || e.compute_units > 0 || e.memory_bytes > 0;
  if (!described && !e.has_gpu_activity) return id;  // CPU only
  const std::vector<std::string> tokens = tokens_of(e.name);
  id.vendor = vendor_from_name(tokens);
  if (id.vendor.empty() && e.warp_size == 64) id.vendor = "amd";  // NVIDIA warps are always 32 wide
  if (id.vendor.empty()) id.vendor = e.kernel_vendor;
  id.name = e.name;
  if (const GpuSpec* spec = find_gpu_spec(e.name); spec && std::string_view(spec->vendor) != "cpu") {
    id.spec = spec;
    id.identified_by = "deviceProperties name";
  } else if (const GpuSpec* by_columns = spec_by_columns(id.vendor, e.compute_units, e.memory_bytes)) {
    id.spec = by_columns;
    id.identified_by = fields_seen(e) + " = " + by_columns->name + " (vendor, compute units and memory in the GPU table)";
  } else {
    id.identified_by = "unknown device: " + fields_seen(e);
  }
  if (id.spec) {
    id.vendor = id.spec->vendor;
    if (id.name.empty()) id.name = id.spec->name;
    id.arch = id.spec->arch;
  } else if (id.vendor == "amd") {
    id.arch = gpu_arch(e.name);
    if (id.arch.empty()) id.arch = "rocm";  // ROCm's computeMajor/Minor are not an sm number
  } else {
    id.arch = gpu_arch(e.name, e.compute_major, e.compute_minor);
  }
  return id;
}

GpuSpec with_measured_peaks(const GpuSpec* base, const MeasuredPeaks& measured) {
  GpuSpec spec = base ? *base : GpuSpec{"measured", "", "", 0, 0, 0, 0, 0, 0, 0, 0, {}, {}};
  auto put = [](double& to, double value) {
    if (value > 0) to = value;
  };
  put(spec.bandwidth_gbs, measured.bandwidth_gbs);
  put(spec.bf16_tflops, measured.bf16_tflops);
  put(spec.fp16_tflops, measured.fp16_tflops);
  put(spec.fp8_tflops, measured.fp8_tflops);
  put(spec.tf32_tflops, measured.tf32_tflops);
  put(spec.fp32_tflops, measured.fp32_tflops);
  return spec;
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
