#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "attnprof/hw.h"

namespace attnprof {
namespace {

struct NameCase {
  const char* device_name;
  const char* spec;
};

// deviceProperties names as CUDA/ROCm write them, and the short names users type.
constexpr NameCase kNames[] = {
    {"NVIDIA A100-SXM4-40GB", "A100-40GB"},   {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
    {"NVIDIA A100-SXM4-80GB", "A100-80GB"},   {"NVIDIA A100 80GB PCIe", "A100-80GB-PCIe"},
    {"A100-80GB", "A100-80GB"},               {"NVIDIA H100 80GB HBM3", "H100-SXM"},
    {"H100-SXM", "H100-SXM"},                 {"NVIDIA H100 PCIe", "H100-PCIe"},
    {"NVIDIA H200", "H200"},                  {"h200", "H200"},
    {"NVIDIA B200", "B200"},                  {"NVIDIA L4", "L4"},
    {"NVIDIA L40S", "L40S"},                  {"NVIDIA GeForce RTX 4090", "RTX4090"},
    {"RTX4090", "RTX4090"},                   {"AMD Instinct MI300X", "MI300X"},
    {"AMD Instinct MI325X", "MI325X"},        {"AMD Instinct MI350X", "MI350X"},
    {"AMD Instinct MI355X", "MI355X"},        {"cpu", "CPU"},
    {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"}, {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
    {"Tesla V100-PCIE-16GB", "V100-PCIe-16GB"}, {"Tesla V100-PCIE-32GB", "V100-PCIe-32GB"},
};

TEST(GpuSpecs, EverySampleNameMatchesExactlyItsIntendedSpec) {
  for (const auto& c : kNames) {
    const GpuSpec* spec = find_gpu_spec(c.device_name);
    ASSERT_NE(spec, nullptr) << c.device_name;
    EXPECT_STREQ(spec->name, c.spec) << c.device_name;
    // Entries are disjoint: no second spec also claims the name.
    int claims = 0;
    for (const GpuSpec& other : gpu_specs())
      if (find_gpu_spec(other.name) == spec) ++claims;
    EXPECT_EQ(claims, 1) << "canonical names resolving to " << spec->name;
  }
}

TEST(GpuSpecs, CanonicalNamesResolveToThemselves) {
  for (const GpuSpec& spec : gpu_specs()) EXPECT_EQ(find_gpu_spec(spec.name), &spec) << spec.name;
}

TEST(GpuSpecs, L4DoesNotSwallowL40S) {
  EXPECT_STREQ(find_gpu_spec("NVIDIA L40S")->name, "L40S");
  EXPECT_STREQ(find_gpu_spec("NVIDIA L4")->name, "L4");
}

TEST(GpuSpecs, UnknownNamesMatchNothing) {
  EXPECT_EQ(find_gpu_spec("NVIDIA GH200 480GB"), nullptr);
  EXPECT_EQ(find_gpu_spec("Tesla P100-PCIE-16GB"), nullptr);
  EXPECT_EQ(find_gpu_spec("Tesla V100S-PCIE-32GB"), nullptr);  // V100S: other clocks, not a V100 row
  EXPECT_EQ(find_gpu_spec(""), nullptr);
}

TEST(GpuSpecs, ArchComesFromTableThenComputeCapabilityThenGfxToken) {
  EXPECT_EQ(gpu_arch("NVIDIA H200"), "sm90");
  EXPECT_EQ(gpu_arch("AMD Instinct MI300X"), "gfx942");
  EXPECT_EQ(gpu_arch("Tesla V100-SXM2-16GB", 7, 0), "sm70");
  EXPECT_EQ(gpu_arch("AMD Radeon gfx1100"), "gfx1100");
  EXPECT_EQ(gpu_arch("mystery"), "");
  // ROCm reports compute capability 9.0 for an MI210/MI250X: that must not read as Hopper
  // (the MI250X is in the table now, so its arch comes from there).
  EXPECT_EQ(gpu_arch("AMD Instinct MI210", 9, 0), "rocm");
  EXPECT_EQ(gpu_arch("AMD Instinct MI250X", 9, 0), "gfx90a");
}

TEST(IdentifyDevice, EmptyNameWithWarp64And304CusAnd192GibIsAnMi300xByTheTablesColumns) {
  // deviceProperties of the vLLM GPT-OSS fixtures.
  DeviceEvidence e{"", 206141652992, 9, 4, 304, 64, "", true};
  const DeviceIdentity id = identify_device(e);
  ASSERT_NE(id.spec, nullptr);
  EXPECT_STREQ(id.spec->name, "MI300X");
  EXPECT_EQ(id.vendor, "amd");
  EXPECT_EQ(id.arch, "gfx942");
  EXPECT_EQ(id.name, "MI300X");
  // Same CUs, 256 GB: the MI325X row, not the MI300X one.
  e.memory_bytes = 274877906944;
  EXPECT_STREQ(identify_device(e).spec->name, "MI325X");
}

TEST(IdentifyDevice, AnUnknownGpuIsStatedWithTheFieldsSeenNotGuessed) {
  const DeviceIdentity id = identify_device({"", 68702699520, 9, 0, 80, 64, "", true});
  EXPECT_EQ(id.spec, nullptr);
  EXPECT_EQ(id.vendor, "amd");  // warpSize 64
  EXPECT_EQ(id.arch, "rocm");   // not "sm90" from ROCm's compute capability
  // 68702699520 B = 63.984 GiB (2^30 B each)
  EXPECT_EQ(id.identified_by, "unknown device: no name, warpSize 64, 80 compute units, 63.98 GiB, compute 9.0");
  // A Pascal P100 is not in the table: its name and compute capability stay.
  const DeviceIdentity p100 = identify_device({"Tesla P100-SXM2-16GB", 17071734784, 6, 0, 56, 32, "", true});
  EXPECT_EQ(p100.spec, nullptr);
  EXPECT_EQ(p100.vendor, "nvidia");
  EXPECT_EQ(p100.arch, "sm60");
  EXPECT_EQ(p100.name, "Tesla P100-SXM2-16GB");
}

// The deviceProperties of the HTA traces (ns_resolution: V100 32 GB, trace_diff_test: 16 GB).
TEST(IdentifyDevice, TheV100sOfTheHtaTracesAreNamedByTheTable) {
  const DeviceIdentity v100 = identify_device({"Tesla V100-SXM2-32GB", 34079637504, 7, 0, 80, 32, "", true});
  ASSERT_NE(v100.spec, nullptr);
  EXPECT_STREQ(v100.spec->name, "V100-SXM2-32GB");
  EXPECT_EQ(v100.identified_by, "deviceProperties name");
  EXPECT_EQ(v100.arch, "sm70");
  EXPECT_EQ(v100.name, "Tesla V100-SXM2-32GB");
  EXPECT_STREQ(identify_device({"Tesla V100-SXM2-16GB", 16945512448, 7, 0, 80, 32, "", true}).spec->name,
               "V100-SXM2-16GB");
  // Volta's tensor cores take fp16 only: no bf16 peak (NVIDIA V100 datasheet, docs/cost.md).
  EXPECT_DOUBLE_EQ(peak_tflops(*v100.spec, "fp16"), 125);
  EXPECT_DOUBLE_EQ(peak_tflops(*v100.spec, "bf16"), 0);
  EXPECT_DOUBLE_EQ(peak_tflops(*v100.spec, "fp32"), 15.7);
}

TEST(GpuSpecs, TheListOfNamesInErrorsIsTheTable) {
  const std::string all = gpu_spec_names();
  const std::string with_memory = gpu_spec_names(/*with_memory_only=*/true);
  for (const GpuSpec& spec : gpu_specs()) {
    EXPECT_NE(all.find(spec.name), std::string::npos) << spec.name;
    EXPECT_EQ(with_memory.find(spec.name) != std::string::npos, spec.memory_bytes > 0) << spec.name;
  }
  EXPECT_EQ(all.substr(0, all.find(',')), gpu_specs().front().name);
  EXPECT_EQ(all.substr(all.rfind(", ") + 2), "CPU");
}

TEST(IdentifyDevice, GpuKernelsWithoutDevicePropertiesAreNeverCpuOnly) {
  const DeviceIdentity id = identify_device({"", 0, 0, 0, 0, 0, "amd", true});
  EXPECT_EQ(id.vendor, "amd");
  EXPECT_NE(id.identified_by.find("unknown device"), std::string::npos);
  EXPECT_TRUE(identify_device({"", 0, 0, 0, 0, 0, "", false}).vendor.empty());  // a CPU-only trace
  EXPECT_STREQ(identify_device({"NVIDIA H200", 150109880320, 9, 0, 132, 32, "", true}).spec->name, "H200");
}

TEST(GpuSpecs, PeakPerDtypeIsDenseDatasheetValue) {
  const GpuSpec& h200 = *find_gpu_spec("NVIDIA H200");
  EXPECT_DOUBLE_EQ(peak_tflops(h200, "bf16"), 989);
  EXPECT_DOUBLE_EQ(peak_tflops(h200, "fp8_e4m3"), 1979);
  EXPECT_DOUBLE_EQ(peak_tflops(h200, "fp32"), 67);
  EXPECT_DOUBLE_EQ(peak_tflops(h200, "int4"), 0);
  // Ridge point bf16 H200 = 989e12 / 4.8e12 = 206 FLOP/B (reference §4).
  EXPECT_NEAR(h200.bf16_tflops * 1e12 / (h200.bandwidth_gbs * 1e9), 206, 0.5);
}

// docs/cost.md section 1 shows the table: one row per spec with its arch and compute units.
TEST(GpuSpecs, TheDocsTableHasARowForEverySpecWithItsArchAndComputeUnits) {
  std::ifstream in(std::string(ATTNPROF_SOURCE_DIR) + "/docs/cost.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string docs = text.str();
  for (const GpuSpec& spec : gpu_specs()) {
    const std::string lead = std::string("| ") + spec.name;
    size_t at = docs.find(lead + " |");
    if (at == std::string::npos) at = docs.find(lead + " (");  // "A100-80GB (SXM)"
    ASSERT_NE(at, std::string::npos) << spec.name << " has no row in docs/cost.md";
    const std::string row = docs.substr(at, docs.find('\n', at) - at);
    EXPECT_NE(row.find(std::string(" | ") + spec.arch + " | "), std::string::npos) << row;
    if (spec.compute_units > 0) {
      EXPECT_NE(row.find(" | " + std::to_string(spec.compute_units) + " | "), std::string::npos) << row;
    }
  }
}

}  // namespace
}  // namespace attnprof
