// Reading a cpu_op's recorded arguments ("Input Dims", "Input type", "Concrete Inputs").
// Internal to cpp/src/attention.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "attnprof/trace.h"

namespace attnprof {

class OpArgsView {
 public:
  OpArgsView(const Trace& trace, const Slice& op) : trace_(trace), args_(trace.op_args_of(op)) {}

  bool recorded() const { return args_ && !args_->inputs.empty(); }
  // TensorDims of argument i; empty when absent, a scalar, or not recorded.
  const TensorDims& dims(int i) const;
  std::string_view type(int i) const;
  std::string_view concrete(int i) const;
  std::optional<double> number(int i) const;  // a concrete scalar argument
  bool flag(int i) const { return concrete(i) == "True"; }
  int64_t sequence_number() const { return args_ ? args_->sequence_number : kNoId; }

 private:
  const OpInput* input(int i) const;
  const Trace& trace_;
  const OpArgs* args_;
};

// Product of dims[begin, end) (1 for an empty range).
int64_t product(std::span<const int64_t> dims, size_t begin, size_t end);

}  // namespace attnprof
