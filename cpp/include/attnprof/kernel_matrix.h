// Which attention kernels can run per GPU and dtype, from the rule data (the same rules as
// `explain` and `analyze`; GPU -> arch from the spec table, hw.h). `attnprof matrix` and
// attnprof.matrix() both build it here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/table.h"

namespace attnprof {

struct MatrixRequest {
  std::vector<std::string> gpus;    // names from the GPU table; empty = kDefaultMatrixGpus
  std::vector<std::string> dtypes;  // empty = fp16, bf16, fp32
  std::string torch = "2.11", cudnn = "9.19", mask = "none";
  int64_t head_dim = 128, seq_len = 2048;
  bool causal = true, grad = false;
};

inline constexpr const char* kDefaultMatrixGpus = "A100,H100,H200,B200,L4,RTX 4090,MI300X,MI350X,CPU";

// One row per GPU and dtype: what SDPA picks and, per kernel, "yes" or "no: <first failed rule>".
Result<Table> kernel_matrix(const MatrixRequest& request);

// "A100,H100" -> {"A100", "H100"}: a comma list as the front ends take GPUs and dtypes; empty
// items are dropped.
std::vector<std::string> comma_list(const std::string& text);

// The dtypes the rules reason about, comma-separated (the vocabulary's rows).
std::string rule_dtype_names();

}  // namespace attnprof
