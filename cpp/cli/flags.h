// The flags several commands share, each spelled and explained once (docs/cli.md, "Flags every
// command shares", lists the same words; tests/test_cli_vocabulary.py checks both agree).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace attnprof::cli {

struct FlagWord {
  std::string_view names;  // "--torch"
  std::string_view help;
};

inline constexpr FlagWord kTorchFlag{"--torch", "PyTorch version of the run, e.g. 2.11 (for a trace: when it does not record one)"};
inline constexpr FlagWord kCudnnFlag{"--cudnn", "cuDNN version of the run, e.g. 9.19 (for a trace: when it does not record one)"};
inline constexpr FlagWord kArchFlag{"--arch", "GPU architecture: sm90, sm80, gfx942, cpu, ... (for a trace: when it has no deviceProperties)"};
inline constexpr FlagWord kGpuFlag{"--gpu", "GPU by name from the GPU table, e.g. H100-SXM, A100-80GB, MI300X (its peaks and memory)"};
inline constexpr FlagWord kMemoryCapFlag{"--memory-cap", "memory budget, e.g. 24GiB or 80GB (GB = 1e9, GiB = 2^30); overrides the GPU's memory"};
inline constexpr FlagWord kModelFlag{"--model", "a known model: llama-2-7b, llama-3-8b, mistral-7b, gpt2, ..."};
inline constexpr FlagWord kConfigFlag{"--config", "a Hugging Face config.json of the model"};
inline constexpr FlagWord kDtypeFlag{"--dtype", "dtype name: bf16, fp16, fp32, fp8 (commands that compare dtypes take a comma list)"};
inline constexpr FlagWord kLengthsFlag{"--lengths", "sequence lengths: a comma list (512,1024) or a file of token counts (one per line, CSV length,count, or JSONL)"};
inline constexpr FlagWord kThreadsFlag{"--threads", "threads to work on: 0 = attnprof chooses (default; docs/cli.md says how per command), N = N; the result is the same for any N"};

template <typename T>
CLI::Option* add_word(CLI::App& cmd, const FlagWord& word, T& target) {
  return cmd.add_option(std::string(word.names), target, std::string(word.help));
}

}  // namespace attnprof::cli
