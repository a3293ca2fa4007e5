// SDPA's default backend priority order on CUDA per torch version, as rows
// (../shared/reference/sdpa-backend-rules.md §1.3, whose table each row follows). Two orders
// exist: cuDNN last (the default of at::Context::sDPPriorityOrder) and cuDNN first, which a
// release takes where its check_prefer_cudnn_attention holds (torch <= 2.4 has cuDNN first
// everywhere). A row says which order and where cuDNN is preferred.
#include <fmt/format.h>

#include <algorithm>

#include "attnprof/rules.h"

namespace attnprof::rules {
namespace {

using B = Backend;
constexpr std::array<Backend, 4> kCudnnFirst = {B::kCudnn, B::kFlash, B::kEfficient, B::kMath};
constexpr std::array<Backend, 4> kCudnnLast = {B::kFlash, B::kEfficient, B::kMath, B::kCudnn};
constexpr Version kNewest{9999, 9999, 9999};

constexpr PriorityRow kPriorityRows[] = {
    {{0, 0, 0}, {2, 4, 9999}, kCudnnFirst, {}, 0,
     "S-2.3, S-2.4: constexpr order {cudnn, flash, efficient, math}; cuDNN gated by TORCH_CUDNN_SDPA_ENABLED=1 "
     "(PR #125343 reverted for 2.4, #128539)"},
    {{2, 5, 0}, {2, 5, 0}, kCudnnLast, {90}, 0, "the 2.5 blog as cited in pytorch#142132: cuDNN preferred on H100"},
    {{2, 5, 1}, {2, 8, 9999}, kCudnnLast, {}, 0,
     "S-2.6, CTX: {flash, efficient, math, cudnn}; PR #138522 made cuDNN opt-in (#138649, #141133)"},
    {{2, 9, 0}, {2, 9, 9999}, kCudnnLast, {90, 100}, 90900,
     "S-2.9, PR #162073: check_prefer_cudnn_attention needs CUDNN_VERSION >= 90900 and sm90/sm100"},
    {{2, 10, 0}, kNewest, kCudnnLast, {90, 100, 103}, 91501,
     "S-main, PRs #170800 and #171627: runtime cuDNN > 91500 (#169849) and sm90/sm100/sm103"},
};

}  // namespace

std::span<const PriorityRow> priority_table() { return kPriorityRows; }

const PriorityRow& priority_row(const Version& torch) {
  for (const PriorityRow& row : kPriorityRows)
    if (torch >= row.torch_min && torch <= row.torch_max) return row;
  return kPriorityRows[std::size(kPriorityRows) - 1];
}

const PriorityRow& newest_flash_first_row() {
  const PriorityRow* newest = &kPriorityRows[0];
  for (const PriorityRow& row : kPriorityRows)
    if (row.order.front() == B::kFlash && row.cudnn_first_sms == std::array<int, 3>{}) newest = &row;
  return *newest;
}

Version PriorityRow::last_release() const { return {torch_max.major, torch_max.minor, 0}; }

bool PriorityRow::cudnn_first(int sm, int cudnn) const {
  const bool on_arch = std::find(cudnn_first_sms.begin(), cudnn_first_sms.end(), sm) != cudnn_first_sms.end();
  return sm > 0 && on_arch && cudnn >= cudnn_min_code;
}

std::array<Backend, 4> PriorityRow::order_on(int sm, int cudnn) const {
  return cudnn_first(sm, cudnn) ? kCudnnFirst : order;
}

std::string PriorityRow::torch_range() const {
  if (torch_max == kNewest) return fmt::format(">= {}", torch_min.str());
  if (torch_min == Version{}) return fmt::format("<= {}.{}", torch_max.major, torch_max.minor);
  const std::string last = torch_max.patch == 9999 ? fmt::format("{}.{}", torch_max.major, torch_max.minor)
                                                   : torch_max.str();
  const std::string first = torch_min.patch == 0 ? fmt::format("{}.{}", torch_min.major, torch_min.minor)
                                                 : torch_min.str();
  return first == last ? first : fmt::format("{}-{}", first, last);
}

std::string order_text(std::span<const Backend> order) {
  std::vector<std::string_view> names;
  for (Backend b : order) names.emplace_back(backend_name(b));
  return fmt::format("{}", fmt::join(names, " > "));
}

}  // namespace attnprof::rules
