// `attnprof explain` (single call) and `attnprof matrix` through the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct CliRun {
  int code;
  std::string out;
};

CliRun run(const std::string& args) {
  const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ExplainCli, HeadDim100WithMaskFallsBackToMathAndSaysWhyAndHowToFix) {
  const CliRun r = run("explain --q 2,8,256,100 --dtype bf16 --mask bool --arch sm90 --torch 2.11 --cudnn 9.19");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "SDPA decision: MATH")) << r.out;
  EXPECT_TRUE(has(r.out, "Flash Attention does not support non-null attn_mask.")) << r.out;
  EXPECT_TRUE(has(r.out, "Mem efficient attention requires last dimension of inputs to be divisible by 8.")) << r.out;
  EXPECT_TRUE(has(r.out, "head_dim should be a multiple of 8")) << r.out;
  EXPECT_TRUE(has(r.out, "pad head_dim to 104")) << r.out;
  EXPECT_TRUE(has(r.out, "force_math")) << "gain basis names the measured runs: " << r.out;
}

TEST(ExplainCli, GqaKeyShapeOnA100PicksFlashBecauseCudnnIsNotFirstOnSm80) {
  const CliRun r = run("explain --q 1,32,2048,128 --k 1,8,2048,128 --gqa --causal --arch sm80 --torch 2.11");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(has(r.out, "SDPA decision: FLASH_ATTENTION")) << r.out;
  EXPECT_TRUE(has(r.out, "order flash > efficient > math > cudnn")) << r.out;
}

TEST(ExplainCli, BadInputIsOneLineExit2AndNoOutputFile) {
  const auto out = std::filesystem::temp_directory_path() / ("attnprof_explain_bad_" + std::to_string(::getpid()));
  for (const std::string args : {"explain --q 2,8,256 --dtype bf16", "explain --q 2,8,256,64 --dtype int7",
                                 "explain --q 2,8,256,64 --arch sm9x", "explain --q 2,8,256,64 --torch two",
                                 "explain --q 2,8,256,64 --mask maybe", "explain --inputs /nonexistent.jsonl"}) {
    const CliRun r = run(args + " --text " + out.string());
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
}

TEST(MatrixCli, ListsEveryGpuWithTheDispatchOfItsArch) {
  const CliRun r = run("matrix --dtype bf16,fp32");
  ASSERT_EQ(r.code, 0) << r.out;
  // The row of GPU `gpu`, arch and dtype: its cells after those three, as the table prints them.
  auto row_of = [&](const std::string& gpu, const std::string& arch, const std::string& dtype) {
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const size_t at = line.find_first_not_of(' ');
      if (at == std::string::npos || line.compare(at, gpu.size() + 1, gpu + " ") != 0) continue;
      std::istringstream cells(line.substr(at + gpu.size()));
      std::string a, d;
      cells >> a >> d;
      if (a == arch && d == dtype) return line;
    }
    return std::string();
  };
  for (const char* gpu : {"A100", "H100", "H200", "B200", "L4", "RTX 4090", "MI300X", "MI350X", "CPU"})
    EXPECT_TRUE(has(r.out, std::string(gpu) + " ")) << gpu << "\n" << r.out;
  EXPECT_TRUE(has(row_of("H100", "sm90", "bf16"), "CUDNN_ATTENTION")) << r.out;
  EXPECT_TRUE(has(row_of("A100", "sm80", "bf16"), "FLASH_ATTENTION")) << r.out;
  EXPECT_TRUE(has(row_of("MI300X", "gfx942", "fp32"), "EFFICIENT_ATTENTION")) << r.out;
  EXPECT_TRUE(has(row_of("B200", "sm100", "bf16"), "no: arch")) << "FA3 is Hopper-only: " << r.out;
  EXPECT_EQ(run("matrix --gpu X100").code, 2);
}

}  // namespace
