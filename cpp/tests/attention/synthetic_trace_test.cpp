// Extraction on small hand-built Traces: the cases the real fixtures do not cover
// (FlexAttention kernels, look-alike softmax patterns, linking by External id).
#include <gtest/gtest.h>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/trace_index.h"

namespace attnprof::test {
namespace {

class TraceBuilder {
 public:
  // A cpu_op on thread 1 with input shapes (dims per argument) and types.
  uint32_t op(const std::string& name, int64_t ts_us, int64_t dur_us, std::vector<std::vector<int64_t>> dims = {},
              std::string type = "float", std::vector<std::string> concrete = {}) {
    Slice s = slice(name, Category::kCpuOp, 1, 1, ts_us, dur_us);
    s.external_id = next_external_++;
    OpArgs args;
    for (size_t i = 0; i < dims.size(); ++i) {
      OpInput in;
      in.dims = dims[i];
      in.type = trace.strings.intern(dims[i].empty() ? "Scalar" : type);
      if (i < concrete.size()) in.concrete = trace.strings.intern(concrete[i]);
      args.inputs.push_back(std::move(in));
    }
    s.args = static_cast<uint32_t>(trace.op_args.size());
    trace.op_args.push_back(std::move(args));
    return push(s);
  }
  // cudaLaunchKernel at ts on thread 1 and its kernel on stream 7, linked by correlation.
  void kernel(const std::string& name, int64_t launch_us, int64_t dur_us) {
    Slice launch = slice("cudaLaunchKernel", Category::kRuntime, 1, 1, launch_us, 1);
    launch.correlation = next_correlation_;
    push(launch);
    Slice k = slice(name, Category::kKernel, 0, 7, launch_us + 2, dur_us);
    k.correlation = next_correlation_++;
    k.args = static_cast<uint32_t>(trace.gpu_args.size());
    GpuArgs g;
    g.device = 0;
    g.stream = 7;
    trace.gpu_args.push_back(g);
    push(k);
  }
  // One hipGraphLaunch at launch_us replaying `names` back to back on stream 7.
  void graph_launch(const std::vector<std::string>& names, int64_t launch_us, int64_t dur_us) {
    Slice launch = slice("hipGraphLaunch", Category::kRuntime, 1, 1, launch_us, 1);
    launch.correlation = next_correlation_;
    push(launch);
    int64_t ts = launch_us + 2;
    for (const std::string& name : names) {
      Slice k = slice(name, Category::kKernel, 0, 7, ts, dur_us);
      k.correlation = next_correlation_;
      k.args = static_cast<uint32_t>(trace.gpu_args.size());
      GpuArgs g;
      g.device = 0;
      g.stream = 7;
      trace.gpu_args.push_back(g);
      push(k);
      ts += dur_us + 1;
    }
    ++next_correlation_;
  }
  Report analyze() { return analyze_trace(trace); }
  Trace trace;

 private:
  Slice slice(const std::string& name, Category cat, int64_t pid, int64_t tid, int64_t ts_us, int64_t dur_us) {
    Slice s;
    s.name = trace.strings.intern(name);
    s.cat = cat;
    s.pid = pid;
    s.tid = tid;
    s.ts_ns = ts_us * 1000;
    s.dur_ns = dur_us * 1000;
    return s;
  }
  uint32_t push(const Slice& s) {
    trace.slices.push_back(s);
    return static_cast<uint32_t>(trace.slices.size() - 1);
  }
  int64_t next_external_ = 1, next_correlation_ = 100;
};

TEST(TraceIndex, NestsOpsByTimeAndLinksKernelsThroughTheirLaunch) {
  TraceBuilder b;
  const uint32_t outer = b.op("aten::matmul", 0, 100);
  const uint32_t inner = b.op("aten::bmm", 10, 50);
  b.kernel("ampere_bf16_s16816gemm_bf16_128x128", 20, 30);
  const uint32_t after = b.op("aten::add", 200, 10);
  const TraceIndex index = build_trace_index(b.trace);
  EXPECT_EQ(index.parent[inner], outer);
  EXPECT_EQ(index.parent[after], kNoSlice);
  ASSERT_EQ(index.gpu_slices.size(), 1u);
  EXPECT_EQ(index.op_of[index.gpu_slices[0]], inner);
  std::vector<uint32_t> gpu;
  collect_subtree_gpu(b.trace, index, outer, gpu);
  EXPECT_EQ(gpu.size(), 1u);
  EXPECT_TRUE(index.orphan_gpu_slices.empty());
}

TEST(TraceIndex, GpuBusyTimeIsTheUnionOfOverlappingKernels) {
  TraceBuilder b;
  b.op("aten::a", 0, 100);
  b.kernel("k1", 10, 40);  // runs 12..52 us
  b.kernel("k2", 30, 40);  // runs 32..72 us: overlaps k1
  b.kernel("k3", 90, 5);   // runs 92..97 us
  const TraceIndex index = build_trace_index(b.trace);
  EXPECT_EQ(gpu_busy_ns(b.trace, index), (72 - 12 + 5) * 1000);
}

TEST(SyntheticTraces, FlexAttentionTemplateKernelIsAFusedFlexCallWithoutAnAttentionOp) {
  TraceBuilder b;
  b.op("CompiledFunction", 0, 100);
  b.kernel("triton_tem_fused_flex_attention_0", 10, 50);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].backend, "flex");
  EXPECT_EQ(r.calls[0].library, "triton");
  EXPECT_TRUE(r.calls[0].fused);
  EXPECT_DOUBLE_EQ(r.calls[0].device_time_us, 50);
}

TEST(SyntheticTraces, AttentionOpRecordedWhileTorchCompileTracesIsNotACall) {
  // Dynamo runs the frame on fake tensors under its compile ranges; only the compiled
  // graph's run does the work.
  TraceBuilder b;
  const std::vector<std::vector<int64_t>> qkv = {{1, 4, 256, 16}, {1, 2, 256, 16}, {1, 2, 256, 16}};
  b.op("entire_frame_compile", 0, 1000);
  b.op("_compile.compile_inner (dynamo_timed)", 10, 900);
  b.op("FlexAttentionAutogradOp", 100, 50, qkv);
  b.op("FlexAttentionAutogradOp", 2000, 50, qkv);  // a real, uncompiled call afterwards
  const Report report = b.analyze();
  ASSERT_EQ(report.calls.size(), 1u);
  EXPECT_EQ(report.calls[0].cpu_ts_ns, 2000 * 1000);
  EXPECT_TRUE(is_compile_phase("compile_fx_inner (dynamo_timed)"));
  EXPECT_FALSE(is_compile_phase("Torch-Compiled Region: 0/1"));
  EXPECT_TRUE(is_compiled_graph_run("Torch-Compiled Region: 0/1"));
  EXPECT_TRUE(is_compiled_fx_graph_call("## Call CompiledFxGraph f5zq7g6k ##"));
}

TEST(SyntheticTraces, LogSoftmaxBetweenMatmulsIsNotAttention) {
  TraceBuilder b;
  b.op("aten::matmul", 0, 10, {{8, 16, 32}, {8, 32, 16}});
  b.op("aten::log_softmax", 20, 10, {{8, 16, 16}, {}}, "float", {"", "-1"});
  b.op("aten::matmul", 40, 10, {{8, 16, 16}, {8, 16, 32}});
  EXPECT_TRUE(b.analyze().calls.empty());
}

TEST(SyntheticTraces, SoftmaxWhoseMatmulShapesDisagreeIsNotAttention) {
  TraceBuilder b;
  // A router: logits [T, E] from a linear layer, softmax, then an unrelated matmul.
  b.op("aten::matmul", 0, 10, {{64, 128}, {128, 8}});
  b.op("aten::softmax", 20, 10, {{64, 8}, {}}, "float", {"", "-1"});
  b.op("aten::matmul", 40, 10, {{64, 128}, {128, 512}});
  EXPECT_TRUE(b.analyze().calls.empty());
}

TEST(SyntheticTraces, EagerPatternOverBmmGivesOneCallWithComponents) {
  TraceBuilder b;
  b.op("aten::bmm", 0, 10, {{16, 128, 64}, {16, 64, 128}});
  b.kernel("ampere_bf16_s16816gemm_bf16_128x128", 2, 5);
  b.op("aten::div", 20, 5, {{16, 128, 128}, {}}, "float", {"", "8."});
  b.op("aten::softmax", 30, 10, {{16, 128, 128}, {}}, "float", {"", "-1"});
  b.kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false, false>(float*)", 32, 5);
  b.op("aten::bmm", 50, 10, {{16, 128, 128}, {16, 128, 64}});
  b.kernel("ampere_bf16_s16816gemm_bf16_128x128", 52, 5);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.backend, "eager");
  EXPECT_FALSE(c.fused);
  EXPECT_EQ(c.shape.Sq, 128);
  EXPECT_EQ(c.shape.D, 64);
  EXPECT_DOUBLE_EQ(c.scale, 1.0 / 8);
  ASSERT_EQ(c.kernels.size(), 3u);
  EXPECT_EQ(c.kernels[0].component, "qk");
  EXPECT_EQ(c.kernels[1].component, "softmax");
  EXPECT_EQ(c.kernels[2].component, "av");
  EXPECT_DOUBLE_EQ(c.device_time_us, 15);
}

TEST(SyntheticTraces, KernelWithoutAnyCpuLaunchIsNotACall) {
  TraceBuilder b;
  b.op("aten::add", 0, 10);
  Slice k;
  k.name = b.trace.strings.intern("void pytorch_flash::flash_fwd_kernel<T>(P)");
  k.cat = Category::kKernel;
  k.ts_ns = 1000;
  k.dur_ns = 5000;
  k.correlation = 999;  // no runtime event carries it
  b.trace.slices.push_back(k);
  const Report r = b.analyze();
  EXPECT_TRUE(r.calls.empty());
  ASSERT_FALSE(r.source.missing.empty());
  EXPECT_NE(r.source.missing.back().find("1 attention kernel(s) have no CPU launch"), std::string::npos);
}



TEST(KernelOnlyCalls, GraphReplayOfPagedAttentionIsOneCallPerLayerWithItsReduce) {
  // SGLang decode replayed from a HIP graph: vLLM's ROCm paged attention, QKV + reduce per
  // layer, all under one hipGraphLaunch and no per-layer CPU op.
  TraceBuilder b;
  b.graph_launch({"void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, 16>(__hip_bfloat16 const*)",
                  "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, 128>(__hip_bfloat16*)",
                  "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)",
                  "void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, 16>(__hip_bfloat16 const*)",
                  "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, 128>(__hip_bfloat16*)"},
                 100, 10);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const Call& c = r.calls[i];
    EXPECT_EQ(c.library, "vllm_rocm");
    EXPECT_EQ(c.backend, "external");
    EXPECT_EQ(c.layer, static_cast<int64_t>(i));
    ASSERT_EQ(c.kernels.size(), 2u);
    EXPECT_NE(c.kernels[1].name.find("reduce"), std::string::npos);
    EXPECT_DOUBLE_EQ(c.device_time_us, 20);
  }
}

TEST(KernelOnlyCalls, PhaseOfReplayedCallsComesFromTheKernelsServingPhase) {
  // A serving step that prefills with FlashInfer and decodes with vLLM's ROCm paged kernel,
  // both replayed from graphs: no shapes, the catalog's phase column decides.
  TraceBuilder b;
  b.graph_launch({"void flashinfer::BatchPrefillWithPagedKVCacheKernel<K, P>(P)"}, 100, 10);
  b.graph_launch({"void paged_attention_ll4mi_QKV_mfma16_kernel<__hip_bfloat16, 16>(__hip_bfloat16 const*)",
                  "void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, 128>(__hip_bfloat16*)"},
                 200, 10);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].phase, "prefill");
  EXPECT_EQ(r.calls[1].phase, "decode");
}

TEST(KernelOnlyCalls, UnifiedAttention3dTakesItsSegmentReduceAnd2dStandsAlone) {
  TraceBuilder b;
  b.graph_launch({"kernel_unified_attention_3d", "reduce_segments", "kernel_unified_attention_2d",
                  "kernel_unified_attention_3d", "reduce_segments"},
                 100, 5);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[0].kernels.size(), 2u);
  EXPECT_EQ(r.calls[1].kernels.size(), 1u);
  EXPECT_EQ(r.calls[2].kernels.size(), 2u);
  EXPECT_EQ(r.calls[2].layer, 2);
}

TEST(KernelOnlyCalls, UnknownAttentionLikeKernelIsAnUnknownLibraryCallAndListed) {
  TraceBuilder b;
  b.op("mylib::launch", 0, 50);
  b.kernel("void mylib::ragged_paged_attn_kernel<128>(float*)", 10, 30);
  b.op("aten::add", 100, 10);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)", 101, 5);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].backend, "external");
  EXPECT_EQ(r.calls[0].library, "unknown");
  ASSERT_TRUE(r.unrecognised.has_value());
  ASSERT_EQ(r.unrecognised->size(), 1u);
  EXPECT_EQ(r.unrecognised->front().kind, "kernel");
  EXPECT_EQ(r.unrecognised->front().count, 1);
  EXPECT_DOUBLE_EQ(r.unrecognised->front().device_time_us, 30);
}

TEST(KernelOnlyCalls, UnknownAttentionOpWithoutKernelsHasUnknownDeviceTime) {
  TraceBuilder b;
  b.op("mylib::ragged_attention_forward", 0, 50);  // recorded during a graph capture
  b.op("aten::fill_", 100, 10);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int)", 101, 5);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].library, "unknown");
  EXPECT_TRUE(r.calls[0].device_time_unknown);
  EXPECT_TRUE(r.calls[0].fused);
  EXPECT_EQ(r.summary.unknown_time_call_count, 1);
  ASSERT_TRUE(r.unrecognised.has_value());
  EXPECT_EQ(r.unrecognised->front().kind, "op");
}

TEST(Layers, ConsecutiveCallsOnOneModulePathAreOneLayerEachInStepOrder) {
  // A compiled graph (or a reused module) collapses every layer onto one path; without the
  // rule, each repeat would start a new forward pass.
  Report r;
  for (int i = 0; i < 4; ++i) {
    Call c;
    c.id = i;
    c.direction = "forward";
    c.module = "Model_0.GraphModule_0";
    c.cpu_ts_ns = 1000 * i;
    r.calls.push_back(c);
  }
  const Trace trace;
  const TraceIndex index = build_trace_index(trace);
  attribute_layers(trace, index, r.calls);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(r.calls[i].layer, i);
    EXPECT_EQ(r.calls[i].step, 0);
  }
}

}  // namespace
}  // namespace attnprof::test
