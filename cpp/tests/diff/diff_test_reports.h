// Hand-built Reports for diff's unit tests: each field set here is one the comparison reads.
#pragma once

#include <string>

#include "attnprof/report.h"

namespace attnprof::testing {

struct CallSpec {
  int64_t layer = 0;
  int64_t step = 0;
  std::string backend = "cudnn";
  bool fused = true;
  double time_us = 100;
  int64_t head_dim = 128;
  std::string dtype = "bf16";
  bool mask = false;
  int64_t peak_bytes = -1;
};

inline Call make_call(const CallSpec& s) {
  Call c;
  c.layer = s.layer;
  c.step = s.step;
  c.module = "model.layers." + std::to_string(s.layer) + ".self_attn";
  c.direction = "forward";
  c.backend = s.backend;
  c.fused = s.fused;
  c.op = "aten::scaled_dot_product_attention";
  c.device_time_us = s.time_us;
  c.shape = Shape{4, 32, 32, 2048, 2048, s.head_dim, s.head_dim, s.dtype};
  c.causal = !s.mask;
  c.mask.present = s.mask;
  c.mask.kind = s.mask ? "bool" : "none";
  c.flops = 4.0 * 4 * 32 * 2048 * 2048 * static_cast<double>(s.head_dim) / 2;
  c.tflops = c.flops / (s.time_us * 1e-6) / 1e12;
  if (s.peak_bytes >= 0) c.cost = CallCost{.peak_bytes_during = s.peak_bytes};
  return c;
}

// `layers` layers x `steps` steps of the same call; time of step k is time_us * (1 + jitter[k]).
inline Report make_report(int layers, int steps, CallSpec spec, std::vector<double> jitter = {}) {
  Report r;
  r.source.device_name = "NVIDIA H200";
  r.source.arch = "sm90";
  r.source.versions = {{"torch", "2.11.0"}, {"cudnn", "9.19"}};
  r.summary.has_gpu = true;
  for (int step = 0; step < steps; ++step) {
    for (int layer = 0; layer < layers; ++layer) {
      CallSpec s = spec;
      s.layer = layer;
      s.step = step;
      if (step < static_cast<int>(jitter.size())) s.time_us *= 1 + jitter[step];
      Call c = make_call(s);
      c.id = static_cast<int64_t>(r.calls.size());
      r.calls.push_back(std::move(c));
    }
  }
  return r;
}

}  // namespace attnprof::testing
