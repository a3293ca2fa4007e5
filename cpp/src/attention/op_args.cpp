#include "op_args.h"

#include <charconv>
#include <string>

namespace attnprof {
namespace {
const TensorDims kNoDims;
}

const OpInput* OpArgsView::input(int i) const {
  if (!args_ || i < 0 || static_cast<size_t>(i) >= args_->inputs.size()) return nullptr;
  return &args_->inputs[static_cast<size_t>(i)];
}

const TensorDims& OpArgsView::dims(int i) const {
  const OpInput* in = input(i);
  return in ? in->dims : kNoDims;
}

std::string_view OpArgsView::type(int i) const {
  const OpInput* in = input(i);
  return in ? trace_.strings.get(in->type) : std::string_view{};
}

std::string_view OpArgsView::concrete(int i) const {
  const OpInput* in = input(i);
  return in ? trace_.strings.get(in->concrete) : std::string_view{};
}

std::optional<double> OpArgsView::number(int i) const {
  const std::string_view text = concrete(i);
  if (text.empty()) return std::nullopt;
  // Kineto prints doubles like "0." or "0.088388347648318447"; strtod handles both.
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

int64_t product(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

}  // namespace attnprof
