// Reports for the renderer tests, built from the kernels of a real trace so that kernel
// names, correlation ids and timestamps are the ones the trace holds.
#pragma once

#include <string>
#include <vector>

#include "attnprof/ingest.h"
#include "attnprof/report.h"

namespace attnprof::testing {

inline std::string fixture(const std::string& relative) {
  return std::string(ATTNPROF_FIXTURES_DIR) + "/" + relative;
}

// The real H200 trace of Llama-7B dims, 4 layers, SDPA picking cuDNN attention.
inline const char* kCudnnTrace = "h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz";

// One call per kernel whose name contains `needle` (at most `limit`), layer = order seen,
// as a fused backend `backend`. Kernel timing and ids come from the trace.
inline Report report_from_trace_kernels(const Trace& trace, const std::string& needle, const std::string& backend_name,
                                        size_t limit) {
  Report r;
  r.source.files = {trace.path};
  r.source.device_name = trace.meta.devices.empty() ? "" : trace.meta.devices.front().name;
  for (const Slice& s : trace.slices) {
    if (s.cat != Category::kKernel) continue;
    const std::string name(trace.name_of(s));
    if (name.find(needle) == std::string::npos) continue;
    Call c;
    c.id = static_cast<int64_t>(r.calls.size());
    c.layer = c.id;
    c.module = "model.layers." + std::to_string(c.id) + ".self_attn";
    c.backend = backend_name;
    c.fused = true;
    c.direction = "forward";
    c.kernels.push_back(KernelRef{name, component::kFused, s.ts_ns, static_cast<double>(s.dur_ns) / 1000.0,
                                  trace.gpu_args_of(s) ? trace.gpu_args_of(s)->stream : -1, s.correlation()});
    c.device_time_us = c.kernels.back().device_time_us;
    c.shape = Shape{4, 32, 32, 2048, 2048, 128, 128, "bf16"};
    r.calls.push_back(c);
    Layer l;
    l.index = c.layer;
    l.module = c.module;
    l.backends = {backend_name};
    l.call_ids = {c.id};
    l.fused_time_fraction = 1.0;
    l.device_time_us = c.device_time_us;
    r.layers.push_back(l);
    r.summary.attention_device_time_us += c.device_time_us;
    if (r.calls.size() == limit) break;
  }
  r.summary.call_count = static_cast<int64_t>(r.calls.size());
  r.summary.fused_call_count = r.summary.call_count;
  r.summary.fused_time_fraction = 1.0;
  r.summary.fused_call_fraction = 1.0;
  r.summary.has_gpu = true;
  return r;
}

// An eager layer: QK^T, softmax and AV kernels of one call (names as in real eager traces).
inline Call eager_call(int64_t id, int64_t layer, const std::string& module) {
  Call c;
  c.id = id;
  c.layer = layer;
  c.module = module;
  c.backend = backend::kEager;
  c.direction = "forward";
  c.kernels = {KernelRef{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", component::kQK, 1000, 40, 7, 11},
               KernelRef{"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16>", component::kSoftmax, 1100, 25, 7, 12},
               KernelRef{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64", component::kAV, 1200, 35, 7, 13}};
  c.device_time_us = 100;
  c.shape = Shape{4, 32, 32, 2048, 2048, 128, 128, "bf16"};
  return c;
}

}  // namespace attnprof::testing
