// Expected gain of a fix, from measured fixture numbers (docs/rules.md "Expected gain").
// The table is pinned against ground_truth.json by cpp/tests/rules/gain_test.cpp.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "attnprof/rules.h"
#include "attnprof/text_format.h"

namespace attnprof::rules {
namespace {

// NVIDIA H200, torch 2.11.0+cu130, cuDNN 9.19: the default SDPA choice there is cuDNN.
const std::array kPairs = std::to_array<MeasuredPair>({
    {backend::kEager, backend::kCudnn, "", 512, "llama7b4l_eager_bf16_b4_s512", "llama7b4l_sdpa_bf16_b4_s512",
     10.165375709533691, 8.188703536987305, 438571008, 202641408},
    {backend::kEager, backend::kCudnn, "", 1024, "llama7b4l_eager_bf16_b4_s1024", "llama7b4l_sdpa_bf16_b4_s1024",
     21.578399658203125, 14.737183570861816, 1552424960, 405282816},
    {backend::kEager, backend::kCudnn, "", 2048, "llama7b4l_eager_bf16_b4_s2048", "llama7b4l_sdpa_bf16_b4_s2048",
     53.80652618408203, 28.24665641784668, 5805981696, 810565632},
    {backend::kEager, backend::kCudnn, "", 4096, "llama7b4l_eager_bf16_b4_s4096", "llama7b4l_sdpa_bf16_b4_s4096",
     166.96456909179688, 58.12739181518555, 22416490496, 1621131264},
    {backend::kMath, backend::kCudnn, "", 2048, "llama7b4l_sdpa_bf16_b4_s2048_force_math", "llama7b4l_sdpa_bf16_b4_s2048",
     79.43807983398438, 28.24665641784668, 5789467136, 810565632},
    {backend::kEfficient, backend::kCudnn, "", 2048, "llama7b4l_sdpa_bf16_b4_s2048_force_efficient_attention",
     "llama7b4l_sdpa_bf16_b4_s2048", 31.208799362182617, 28.24665641784668, 810565632, 810565632},
    {backend::kFlash, backend::kCudnn, "", 2048, "llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention",
     "llama7b4l_sdpa_bf16_b4_s2048", 29.16499137878418, 28.24665641784668, 810565632, 810565632},
    {backend::kEfficient, backend::kCudnn, "fp32", 2048, "llama7b4l_sdpa_fp32_b4_s2048", "llama7b4l_sdpa_bf16_b4_s2048",
     281.22735595703125, 28.24665641784668, 1621114880, 810565632},
});

bool is_fused_target(std::string_view b) { return b == backend::kCudnn || b == backend::kFlash; }

}  // namespace

std::span<const MeasuredPair> measured_pairs() { return kPairs; }

Gain expected_gain(std::string_view from_backend, std::string_view to_backend, int64_t seq_len,
                   std::string_view dtype) {
  const bool fp32 = dtype == "fp32";
  const MeasuredPair* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const MeasuredPair& p : kPairs) {
    if (from_backend != p.from_backend) continue;
    // The measured target is cuDNN; flash measured within 3% of it on the same inputs.
    if (to_backend != p.to_backend && !(is_fused_target(to_backend) && is_fused_target(p.to_backend))) continue;
    if (fp32 != (std::string_view(p.from_dtype) == "fp32")) continue;
    const double distance = std::abs(std::log2(static_cast<double>(std::max<int64_t>(seq_len, 1))) -
                                     std::log2(static_cast<double>(p.seq_len)));
    if (distance < best_distance) {
      best_distance = distance;
      best = &p;
    }
  }
  if (!best) {
    return {0, 0,
            fmt::format("not estimated: no measured {} -> {} pair{}", from_backend, to_backend,
                        fp32 ? " for fp32" : "")};
  }
  Gain g;
  g.speedup = best->from_latency_ms / best->to_latency_ms;
  g.memory_ratio = static_cast<double>(best->from_peak_activation) / static_cast<double>(best->to_peak_activation);
  g.basis = fmt::format(
      "measured on NVIDIA H200 (torch 2.11, cuDNN 9.19, ground_truth.json): whole-model forward of {} "
      "{} vs {} {}, peak activation {} vs {} (nearest measured S={}, this call S={})",
      best->from_run, time_text(1e3 * best->from_latency_ms), best->to_run, time_text(1e3 * best->to_latency_ms),
      bytes_text(static_cast<double>(best->from_peak_activation)), bytes_text(static_cast<double>(best->to_peak_activation)),
      best->seq_len, seq_len);
  return g;
}

std::optional<Gain> user_gain(std::span<const MeasuredGain> gains, std::string_view fix, std::string_view from_backend,
                              int64_t seq_len, std::string_view dtype, std::string_view device) {
  const MeasuredGain* best = nullptr;
  double best_distance = 1.0;  // log2 units: at most a factor of 2 away
  for (const MeasuredGain& g : gains) {
    if (g.fix != fix || g.from_backend != from_backend || g.dtype != dtype || g.device != device || g.seq_len <= 0)
      continue;
    const double distance = std::abs(std::log2(static_cast<double>(std::max<int64_t>(seq_len, 1))) -
                                     std::log2(static_cast<double>(g.seq_len)));
    if (distance <= best_distance) {
      best_distance = distance;
      best = &g;
    }
  }
  if (!best) return std::nullopt;
  Gain out;
  out.speedup = best->speedup;
  out.memory_ratio = best->memory_ratio;
  out.basis = fmt::format("measured on this model by attnprof.verify ({} on {}, S={}{}; this call S={})",
                          best->model.empty() ? "the model" : best->model, best->device, best->seq_len,
                          best->speedup_ci.size() == 2
                              ? ", 95% interval " + ratio_text(best->speedup_ci[0]) + "-" + ratio_text(best->speedup_ci[1])
                              : "",
                          seq_len);
  return out;
}

}  // namespace attnprof::rules
