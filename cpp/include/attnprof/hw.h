// The GPU spec table: peak dense TFLOP/s per dtype, memory bandwidth, memory size and
// architecture of the accelerators attnprof knows. ONE place for these facts (data in
// cpp/src/hw/gpu_specs.cpp, sources in docs/cost.md). Used by the roofline (peaks), the
// OOM threshold (--gpu NAME budgets) and the rules (device name -> arch).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace attnprof {

struct GpuSpec {
  const char* name;            // canonical name, also accepted by --gpu: "A100-80GB", "H200"
  const char* vendor;          // "nvidia", "amd", "cpu"
  const char* arch;            // "sm80", "sm90", "gfx942", "cpu"
  int64_t memory_bytes;        // datasheet memory (GB = 1e9 bytes); 0 when not applicable
  int compute_units;           // SMs (NVIDIA) / CUs (AMD) as deviceProperties numSms reports them; 0 unknown
  double bandwidth_gbs;        // HBM/GDDR bandwidth, GB/s; 0 when unknown
  double bf16_tflops;          // dense tensor-core peaks, TFLOP/s; 0 = not known/not supported
  double fp16_tflops;
  double fp8_tflops;
  double tf32_tflops;
  double fp32_tflops;          // non-tensor FP32
  // Matching: every entry of `require` must occur in the device name (as one token or as
  // adjacent tokens joined, case-insensitive), none of `exclude` may. Entries are disjoint:
  // a name matches at most one spec (tested).
  const char* require[3];
  const char* exclude[3];
};

// All known specs, in table order (the last one is the CPU entry).
std::span<const GpuSpec> gpu_specs();

// The canonical names of the table in table order, comma-separated, for the error of an
// unknown --gpu: every row, or with `with_memory_only` the rows that have a datasheet memory
// size (what a memory budget can use; not the CPU row).
std::string gpu_spec_names(bool with_memory_only = false);

// The spec whose pattern matches a device name as written in deviceProperties
// ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X") or given on the command
// line ("H200", "a100-80gb", "RTX4090", "cpu"). nullptr when none matches.
const GpuSpec* find_gpu_spec(std::string_view device_name);

// Architecture string for a device: from the spec table when the name matches, else from
// the CUDA compute capability ("sm" + major + minor) when one is given, else from a "gfxNNN"
// token in the name. "" when nothing is known.
std::string gpu_arch(std::string_view device_name, int compute_major = 0, int compute_minor = 0);

// What a trace says about its device (deviceProperties, plus the vendor its kernel names
// imply: "__hip_bfloat16", "Cijk_" -> amd; "__nv_bfloat16", "nvjet_" -> nvidia).
struct DeviceEvidence {
  std::string name;
  int64_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int compute_units = 0;
  int warp_size = 0;
  std::string kernel_vendor;  // "nvidia", "amd", "" when the kernels do not say
  bool has_gpu_activity = false;
};

struct DeviceIdentity {
  const GpuSpec* spec = nullptr;  // nullptr: not in the table
  std::string vendor;             // "nvidia", "amd", "" when unknown (or no GPU)
  std::string name;               // as reported, else the table model identified
  std::string arch;
  std::string identified_by;      // how, or for an unknown GPU the fields seen
};

// The device: by name in the table; else by (vendor, compute units, memory within 10%)
// against the table's own columns when exactly one row fits (an MI300X whose name is empty:
// warpSize 64, 304 CUs, 192 GiB); else an unknown GPU stated with the fields seen. The
// vendor comes from the name, else warpSize (64: AMD), else the kernel names.
DeviceIdentity identify_device(const DeviceEvidence& evidence);

// Ceilings a user measured on their GPU (`--gpu-spec FILE`, docs/cost.md "Bound verdict"):
// each value > 0 replaces the datasheet's, 0 keeps it.
struct MeasuredPeaks {
  std::string file;          // where they came from
  std::string name;          // the GPU they were measured on, when the file says
  double bandwidth_gbs = 0;  // achievable memory bandwidth, GB/s
  double bf16_tflops = 0, fp16_tflops = 0, fp8_tflops = 0, tf32_tflops = 0, fp32_tflops = 0;
};
// The datasheet row `base` (nullptr: none known) with the measured values put in.
GpuSpec with_measured_peaks(const GpuSpec* base, const MeasuredPeaks& measured);

// Dense peak TFLOP/s of the spec for a Shape::dtype spelling ("bf16", "fp16", "fp32",
// "tf32", "fp8_e4m3", "fp8_e5m2"); 0 when unknown.
double peak_tflops(const GpuSpec& spec, std::string_view dtype);

// Bytes per element of a Shape::dtype spelling; 0 when unknown.
int dtype_bytes(std::string_view dtype);

}  // namespace attnprof
