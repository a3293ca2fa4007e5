// The calls of Reports as CSV (table.h): one row per attention call with the facts a script
// reads most; an unknown dimension or figure is an empty cell, never 0 (report.h, Shape).
#include <fmt/format.h>

#include "attnprof/output_format.h"
#include "attnprof/table.h"

namespace attnprof {
namespace {

std::string known(int64_t v) { return v > 0 ? std::to_string(v) : std::string(); }
std::string figure(double v, bool unknown = false) { return unknown || v <= 0 ? std::string() : fmt::format("{:.6g}", v); }

std::vector<std::string> call_row(const Report& r, const Call& c) {
  const Shape& s = c.shape;
  return {r.source.files.empty() ? std::string() : r.source.files.front(),
          std::to_string(c.id), std::to_string(c.step), c.layer >= 0 ? std::to_string(c.layer) : std::string(),
          c.phase, c.direction, c.backend, c.library, c.fused ? "true" : "false", c.device,
          c.kernels.empty() ? std::string() : c.kernels.front().name,
          known(s.B), known(s.Hq), known(s.Hkv), known(s.Sq), known(s.Skv), known(s.D), s.dtype,
          c.causal ? "true" : "false", figure(c.device_time_us, c.device_time_unknown), figure(c.kernel_time_us),
          figure(c.flops_useful), figure(c.flops_executed), c.flops_upper_bound ? "true" : "false", figure(c.tflops)};
}

std::string csv_of(const FormatInput& in) {
  Table t;
  t.header = {"trace", "call", "step", "layer", "phase", "direction", "backend", "library", "fused", "device", "kernel",
              "B", "Hq", "Hkv", "Sq", "Skv", "D", "dtype", "causal", "device_time_us", "kernel_time_us",
              "flops_useful", "flops_executed", "flops_upper_bound", "tflops_useful"};
  for (const Report& r : in.reports)
    for (const Call& c : r.calls) t.rows.push_back(call_row(r, c));
  return table_csv(t);
}

}  // namespace

extern const OutputFormat kCsvFormat{"csv", ".csv", "--csv",
                                     "write the attention calls as CSV (one row per call; several traces: one table)",
                                     csv_of, nullptr};

}  // namespace attnprof
