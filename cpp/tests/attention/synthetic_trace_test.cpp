// Extraction on small hand-built Traces: the cases the real fixtures do not cover
// (FlexAttention kernels, look-alike softmax patterns, linking by External id).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/attention.h"
#include "attnprof/call_facts.h"
#include "attnprof/render.h"
#include "attnprof/trace_index.h"
#include "attnprof/vocabulary.h"

namespace attnprof::test {
namespace {

class TraceBuilder {
 public:
  // A cpu_op on thread 1 with input shapes (dims per argument) and types.
  uint32_t op(const std::string& name, int64_t ts_us, int64_t dur_us, std::vector<std::vector<int64_t>> dims = {},
              std::string type = "float", std::vector<std::string> concrete = {}) {
    Slice s = slice(name, Category::kCpuOp, 1, 1, ts_us, dur_us);
    s.set_link_id(next_external_++);
    std::vector<OpInput> inputs;
    for (size_t i = 0; i < dims.size(); ++i) {
      OpInput in;
      in.dims = dims[i];
      in.type = trace.strings.intern(dims[i].empty() ? "Scalar" : type);
      if (i < concrete.size()) in.concrete = trace.strings.intern(concrete[i]);
      inputs.push_back(std::move(in));
    }
    OpArgs args;
    args.inputs = trace.input_lists.intern(inputs);
    s.args = static_cast<uint32_t>(trace.op_args.size());
    trace.op_args.push_back(std::move(args));
    return push(s);
  }
  // cudaLaunchKernel at ts on thread 1 and its kernel on stream 7, linked by correlation.
  void kernel(const std::string& name, int64_t launch_us, int64_t dur_us) {
    Slice launch = slice("cudaLaunchKernel", Category::kRuntime, 1, 1, launch_us, 1);
    launch.set_link_id(next_correlation_);
    push(launch);
    Slice k = slice(name, Category::kKernel, 0, 7, launch_us + 2, dur_us);
    k.set_link_id(next_correlation_++);
    k.args = static_cast<uint32_t>(trace.gpu_args.size());
    GpuArgs g;
    g.device = 0;
    g.stream = 7;
    trace.gpu_args.push_back(g);
    push(k);
  }
  // A cudaLaunchKernel whose kernel did not run (recorded into a graph being captured).
  void captured_launch(int64_t launch_us) {
    Slice launch = slice("cudaLaunchKernel", Category::kRuntime, 1, 1, launch_us, 1);
    launch.set_link_id(next_correlation_++);
    push(launch);
  }
  // One hipGraphLaunch at launch_us replaying `names` back to back on stream 7.
  void graph_launch(const std::vector<std::string>& names, int64_t launch_us, int64_t dur_us) {
    Slice launch = slice("hipGraphLaunch", Category::kRuntime, 1, 1, launch_us, 1);
    launch.set_link_id(next_correlation_);
    push(launch);
    int64_t ts = launch_us + 2;
    for (const std::string& name : names) {
      Slice k = slice(name, Category::kKernel, 0, 7, ts, dur_us);
      k.set_link_id(next_correlation_);
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
    s.thread = trace.threads.intern(pid, tid);
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
  EXPECT_EQ(index.op_of(index.gpu_slices[0]), inner);
  std::vector<uint32_t> gpu;
  collect_subtree_gpu(b.trace, index, outer, gpu);
  EXPECT_EQ(gpu.size(), 1u);
  EXPECT_TRUE(index.orphan_gpu_slices.empty());
}

// A generator's `next` frame starts inside the module call that created the generator and
// ends when it is next resumed, after that call returned: what starts meanwhile hangs under
// it in the tree, but is not inside the returned module.
TEST(TraceIndex, ModulePathLeavesOutModuleCallsThatReturnedBeforeTheSliceStarted) {
  TraceBuilder b;
  const auto frame = [&](const std::string& name, int64_t ts_us, int64_t dur_us) {
    Slice s;
    s.name = b.trace.strings.intern(name);
    s.cat = Category::kPythonFunction;
    s.thread = b.trace.threads.intern(1, 1);
    s.ts_ns = ts_us * 1000;
    s.dur_ns = dur_us * 1000;
    b.trace.slices.push_back(s);
  };
  frame("nn.Module: Transformer_0", 0, 100);
  frame("<built-in function next>", 50, 500);  // outlives Transformer_0
  frame("nn.Module: Decoder_0", 200, 100);
  const uint32_t op = b.op("aten::scaled_dot_product_attention", 250, 10);
  const TraceIndex index = build_trace_index(b.trace);
  EXPECT_EQ(module_path(b.trace, index, op), "Decoder_0");
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

// Adding a backend is one vocabulary row plus its kernel rows (docs/architecture.md, "How to
// add a backend"): with only those two rows a made-up library's kernel is recognised, named,
// classed, costed and rendered, with no other code knowing it.
TEST(NewBackend, OneVocabularyRowAndItsKernelRowAreAllAMadeUpBackendNeeds) {
  const BackendWord backend_rows[] = {{"made_up", "", "", BackendClass::kFused, false}};
  const KernelPattern kernel_rows[] = {{"madeUpAttnFwdKernel", MatchKind::kContains, 30, KernelKind::kFusedAttention,
                                        "made_up", "made_up_lib", "nvidia", direction::kForward, KernelPart::kMain}};
  const ScopedBackendWords words(backend_rows);
  const ScopedKernelRows kernels(kernel_rows);
  TraceBuilder b;
  b.op("made_up_lib::run", 0, 100);
  b.kernel("void madeUpAttnFwdKernel<128>(float*)", 10, 40);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& call = r.calls[0];
  EXPECT_EQ(call.backend, "made_up");
  EXPECT_EQ(call.library, "made_up_lib");
  EXPECT_EQ(call.direction, direction::kForward);
  EXPECT_TRUE(call.fused);
  EXPECT_DOUBLE_EQ(call.device_time_us, 40);
  // Its class comes from the row: the dashboard's colour and the FLOP count (a fused kernel
  // does not materialise the scores) read it.
  EXPECT_STREQ(backend_class_of(call), backend_class::kFused);
  EXPECT_FALSE(materialises_scores("made_up"));
  const std::string text = render_text(r);
  EXPECT_NE(text.find("made_up"), std::string::npos) << text;
}

TEST(NewBackend, AnEagerClassRowIsCostedAsMaterialisingTheScoresAndTheRowsLeaveWithTheirScope) {
  {
    const BackendWord backend_rows[] = {{"made_up_eager", "", "", BackendClass::kEager, false}};
    const ScopedBackendWords words(backend_rows);
    EXPECT_TRUE(materialises_scores("made_up_eager"));
    ASSERT_NE(backend_word("made_up_eager"), nullptr);
  }
  EXPECT_EQ(backend_word("made_up_eager"), nullptr);
  EXPECT_FALSE(materialises_scores("made_up_eager"));
  const std::string_view kernel = "madeUpAttnFwdKernel";
  const KernelPattern* seen = classify_kernel(kernel);
  EXPECT_TRUE(seen == nullptr || seen->backend != "made_up") << "the kernel rows left with their scope";
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
  k.set_link_id(999);  // no runtime event carries it
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
  b.captured_launch(10);
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

// matmul -> scale -> masked_fill(tril mask) -> softmax -> matmul, as research code writes it.
void hand_written_attention(TraceBuilder& b, int64_t t0) {
  b.op("aten::matmul", t0, 10, {{2, 4, 64, 32}, {2, 4, 32, 64}});
  b.op("aten::mul", t0 + 12, 2, {{2, 4, 64, 64}, {}}, "float", {"", "0.17677669529663687"});
  b.op("aten::ones", t0 + 15, 1, {{}, {}});
  b.op("aten::tril", t0 + 17, 1, {{64, 64}, {}});
  b.op("aten::masked_fill", t0 + 19, 2, {{2, 4, 64, 64}, {64, 64}, {}}, "float", {"", "", "-inf"});
  b.op("aten::softmax", t0 + 22, 3, {{2, 4, 64, 64}, {}, {}}, "float", {"", "-1", ""});
  b.op("aten::matmul", t0 + 26, 10, {{2, 4, 64, 64}, {2, 4, 64, 32}});
}

TEST(SyntheticTraces, HandWrittenMaskedAttentionIsACallAndTheMoeRouterNextToItIsNot) {
  TraceBuilder b;
  hand_written_attention(b, 0);
  // The MoE block after it: router logits [B*S, experts], softmax, top-k, expert matmuls.
  b.op("aten::linear", 50, 5, {{128, 32}, {8, 32}});
  b.op("aten::softmax", 56, 2, {{128, 8}, {}, {}}, "float", {"", "1", ""});
  b.op("aten::topk", 59, 2, {{128, 8}, {}}, "float", {"", "2"});
  b.op("aten::matmul", 62, 5, {{40, 32}, {32, 128}});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.backend, "eager");
  EXPECT_EQ(c.shape.B, 2);
  EXPECT_EQ(c.shape.Hq, 4);
  EXPECT_EQ(c.shape.Sq, 64);
  EXPECT_EQ(c.shape.D, 32);
  EXPECT_TRUE(c.mask.present);
  EXPECT_EQ(c.mask.kind, "bool");
  EXPECT_NEAR(c.scale, 0.1767767, 1e-6);
}

TEST(SyntheticTraces, OpsRecordedTwiceUnderAutocastGiveOneCall) {
  TraceBuilder b;
  // Autocast records each op around its own redispatch: an outer op, a cast, the same op inside.
  b.op("aten::matmul", 0, 20, {{8, 64, 32}, {8, 32, 64}}, "float");
  b.op("aten::_to_copy", 1, 3, {{8, 64, 32}, {}}, "float");
  b.op("aten::matmul", 5, 14, {{8, 64, 32}, {8, 32, 64}}, "c10::Half");
  b.op("aten::softmax", 25, 10, {{8, 64, 64}, {}, {}}, "c10::Half", {"", "-1", ""});
  b.op("aten::_to_copy", 26, 2, {{8, 64, 64}, {}}, "c10::Half");
  b.op("aten::softmax", 29, 5, {{8, 64, 64}, {}, {}}, "float", {"", "-1", ""});
  b.op("aten::matmul", 40, 20, {{8, 64, 64}, {8, 64, 32}}, "float");
  b.op("aten::matmul", 45, 14, {{8, 64, 64}, {8, 64, 32}}, "c10::Half");
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].shape.Sq, 64);
  EXPECT_EQ(r.calls[0].shape.Dv, 32);
}

TEST(SyntheticTraces, ScoreBiasComputedBetweenQkAndSoftmaxStaysInTheCallWhenShapesProveIt) {
  // T5's first layer: relative-position buckets (arange, log, where, embedding, ...) between
  // Q@K^T and the softmax, then scores += bias.
  auto build = [](TraceBuilder& b, bool shapes) {
    auto dims = [&](std::vector<std::vector<int64_t>> d) { return shapes ? d : std::vector<std::vector<int64_t>>{}; };
    b.op("aten::matmul", 0, 10, dims({{1, 8, 128, 64}, {1, 8, 64, 128}}));
    const char* bucket_ops[] = {"aten::arange", "aten::arange", "aten::sub", "aten::gt", "aten::abs", "aten::lt",
                                "aten::log", "aten::div", "aten::mul", "aten::add", "aten::full_like",
                                "aten::min", "aten::where", "aten::add_", "aten::embedding", "aten::permute",
                                "aten::unsqueeze"};
    int64_t t = 12;
    for (const char* name : bucket_ops) b.op(name, t++, 1, dims({{128, 128}, {128, 128}}));
    b.op("aten::add_", t++, 1, dims({{1, 8, 128, 128}, {1, 8, 128, 128}}));
    b.op("aten::softmax", t + 1, 3, dims({{1, 8, 128, 128}, {}, {}}), "float", {"", "-1", ""});
    b.op("aten::matmul", t + 5, 10, dims({{1, 8, 128, 128}, {1, 8, 128, 64}}));
  };
  TraceBuilder with_shapes;
  build(with_shapes, true);
  const Report r = with_shapes.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].op, "aten::matmul -> aten::softmax -> aten::matmul");
  EXPECT_EQ(r.calls[0].mask.kind, "float");
  // Without shapes nothing proves the first matmul made the scores: no call.
  TraceBuilder without;
  build(without, false);
  EXPECT_TRUE(without.analyze().calls.empty());
}

TEST(SyntheticTraces, NativeMultiHeadAttentionWithWeightsIsOneMathCall) {
  TraceBuilder b;
  // nn.MultiheadAttention(embed 64, 4 heads, batch_first) in eval, need_weights=True.
  b.op("aten::_native_multi_head_attention", 0, 100,
       {{2, 10, 64}, {2, 10, 64}, {2, 10, 64}, {}, {}, {192, 64}, {192}, {64, 64}, {64}, {}, {}, {}, {}}, "float",
       {"", "", "", "64", "4", "", "", "", "", "", "True", "True", ""});
  b.op("aten::mm", 2, 2, {{20, 64}, {64, 192}});  // the in-projection
  b.kernel("ampere_sgemm_32x32_sliced1x4_tn", 3, 1);
  b.op("aten::_transform_bias_rescale_qkv", 5, 10, {{2, 10, 192}, {192}, {}}, "float", {"", "", "4"});
  b.op("aten::bmm", 20, 10, {{8, 10, 16}, {8, 16, 10}});
  b.kernel("ampere_sgemm_32x32_sliced1x4_nn", 21, 3);
  b.op("aten::_masked_softmax", 35, 10, {{2, 4, 10, 10}, {}, {}, {}});
  b.kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, false, false>(float*)", 36, 2);
  b.op("aten::bmm", 50, 10, {{8, 10, 10}, {8, 10, 16}});
  b.kernel("ampere_sgemm_32x32_sliced1x4_nn", 51, 3);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.backend, "math");
  EXPECT_EQ(c.library, "aten");
  EXPECT_FALSE(c.fused);
  EXPECT_EQ(c.shape.B, 2);
  EXPECT_EQ(c.shape.Hq, 4);
  EXPECT_EQ(c.shape.Sq, 10);
  EXPECT_EQ(c.shape.D, 16);
  ASSERT_EQ(c.kernels.size(), 4u);
  EXPECT_EQ(c.kernels[0].component, "other");  // the projection is not Q@K^T
  EXPECT_EQ(c.kernels[1].component, "qk");
  EXPECT_EQ(c.kernels[2].component, "softmax");
  EXPECT_EQ(c.kernels[3].component, "av");
}

TEST(SyntheticTraces, PagedPrefillGivesBatchTokensAndUpperBoundFlopsFromMaxSeqlen) {
  TraceBuilder b;
  // aiter::mha_batch_prefill(q, k, v, cu_seqlens_q, kv_indptr, kv_page_indices, max_seqlen_q,
  // max_seqlen_k, dropout_p, softmax_scale, logits_soft_cap, zero_tensors, is_causal, ...):
  // 3 sequences, 300 query tokens, the longest 200 query / 1000 key tokens.
  b.op("aiter::mha_batch_prefill", 0, 50,
       {{300, 32, 128}, {5000, 16, 8, 128}, {5000, 16, 8, 128}, {4}, {4}, {80}, {}, {}, {}, {}, {}, {}, {}},
       "c10::BFloat16", {"", "", "", "", "", "", "200", "1000", "0.", "0.088388347648318447", "0.", "False", "True"});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.library, "aiter");
  EXPECT_EQ(c.shape.tokens, 300);
  EXPECT_EQ(c.shape.B, 3);
  EXPECT_EQ(c.shape.Sq, 200);
  EXPECT_EQ(c.shape.Skv, 1000);
  EXPECT_EQ(c.shape.Hq, 32);
  EXPECT_EQ(c.shape.Hkv, 8);
  EXPECT_EQ(c.shape.D, 128);
  EXPECT_EQ(c.shape.kv_cache, (std::vector<int64_t>{5000, 16, 8, 128}));
  EXPECT_TRUE(c.causal);
  EXPECT_TRUE(c.gqa);
  EXPECT_FALSE(c.cross);
  EXPECT_NEAR(c.scale, 0.0883883, 1e-6);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 300 * 32 * 1000 * 128);
  EXPECT_TRUE(c.flops_upper_bound);
}

TEST(SyntheticTraces, PagedCacheInHndLayoutGivesKvHeadsFromItsSecondDim) {
  TraceBuilder b;
  // aiter::paged_attention_ragged(out, workspace, query, key_cache, value_cache, scale, kv_indptr, ...)
  // with the cache as [blocks, Hkv 4, block_size 16, D]: 16 does not divide Hq 12, 4 does.
  b.op("aiter::paged_attention_ragged", 0, 20,
       {{8, 12, 64}, {1024}, {8, 12, 64}, {300, 4, 16, 64}, {300, 4, 16, 64}, {}, {9}}, "c10::BFloat16",
       {"", "", "", "", "", "0.125", ""});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].shape.Hkv, 4);
  EXPECT_EQ(r.calls[0].shape.B, 8);
  EXPECT_TRUE(r.calls[0].decode);
  EXPECT_DOUBLE_EQ(r.calls[0].scale, 0.125);
}

TEST(SyntheticTraces, VarlenCallOfOneSequenceHasExactFlops) {
  TraceBuilder b;
  // flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
  // max_seqlen_k, dropout_p, softmax_scale, causal, ...) on one sequence of 512 tokens.
  b.op("flash_attn::_flash_attn_varlen_forward", 0, 50,
       {{512, 16, 64}, {512, 16, 64}, {512, 16, 64}, {2}, {2}, {}, {}, {}, {}, {}}, "c10::Half",
       {"", "", "", "", "", "512", "512", "0.", "0.125", "True"});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.shape.B, 1);
  EXPECT_EQ(c.shape.Sq, 512);
  EXPECT_EQ(c.shape.Skv, 512);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 16 * 128 * (512.0 * 513 / 2));
  EXPECT_FALSE(c.flops_upper_bound);
}

// vLLM's _C::paged_attention_v1(out, query, key_cache, value_cache, num_kv_heads, scale,
// block_tables, seq_lens, block_size, max_seq_len, alibi_slopes, kv_cache_dtype, ...), the
// shapes as csrc/attention/paged_attention_v1.cu takes them: 8 sequences of one query token,
// key_cache [blocks, Hkv 8, D/x 16, block_size 16, x 8], value_cache [blocks, Hkv, D 128, block_size].
TEST(SyntheticTraces, VllmPagedAttentionV1GivesDecodeShapeAndUpperBoundFlopsFromMaxSeqLen) {
  TraceBuilder b;
  b.op("_C::paged_attention_v1", 0, 30,
       {{8, 32, 128}, {8, 32, 128}, {2000, 8, 16, 16, 8}, {2000, 8, 128, 16}, {}, {}, {8, 64}, {8}, {}, {}, {}, {}},
       "c10::BFloat16", {"", "", "", "", "8", "0.088388347648318447", "", "", "16", "1000", "", "auto"});
  b.kernel("void vllm::paged_attention_v1_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128>", 5, 20);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.op, "_C::paged_attention_v1");
  EXPECT_EQ(c.library, "vllm");
  EXPECT_TRUE(c.fused);
  EXPECT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.shape.B, 8);
  EXPECT_EQ(c.shape.tokens, 8);
  EXPECT_EQ(c.shape.Sq, 1);
  EXPECT_TRUE(c.decode);
  EXPECT_EQ(c.shape.Hq, 32);
  EXPECT_EQ(c.shape.Hkv, 8);
  EXPECT_EQ(c.shape.D, 128);
  EXPECT_EQ(c.shape.Dv, 128);
  EXPECT_EQ(c.shape.Skv, 1000);
  EXPECT_EQ(c.shape.kv_cache, (std::vector<int64_t>{2000, 8, 16, 16, 8}));
  EXPECT_TRUE(c.gqa);
  EXPECT_NEAR(c.scale, 0.0883883, 1e-6);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 8 * 32 * 1000 * 128);
  EXPECT_TRUE(c.flops_upper_bound);
}

// _C::paged_attention_v2(out, exp_sums, max_logits, tmp_out, query, key_cache, value_cache,
// num_kv_heads, scale, block_tables, seq_lens, block_size, max_seq_len, ...) with max_seq_len
// not recorded: one sequence whose block table holds 64 blocks of 16 tokens.
TEST(SyntheticTraces, VllmPagedAttentionV2WithoutMaxSeqLenBoundsKeysByTheBlockTable) {
  TraceBuilder b;
  b.op("_C::paged_attention_v2", 0, 30,
       {{1, 32, 128}, {1, 32, 4}, {1, 32, 4}, {1, 32, 4, 128}, {1, 32, 128}, {2000, 8, 16, 16, 8}, {2000, 8, 128, 16},
        {}, {}, {1, 64}, {1}, {}, {}},
       "c10::Half", {"", "", "", "", "", "", "", "8", "0.088388347648318447", "", "", "16", ""});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.shape.B, 1);
  EXPECT_EQ(c.shape.Sq, 1);
  EXPECT_EQ(c.shape.Skv, 64 * 16);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 1 * 32 * 1024 * 128);
  EXPECT_TRUE(c.flops_upper_bound) << "the last block is partly filled";
}

// ROCm's _rocm_C::paged_attention(out, exp_sums, max_logits, tmp_out, query, key_cache,
// value_cache, num_kv_heads, scale, block_tables, seq_lens, [query_start_loc,] block_size,
// max_seq_len, ...): max_seq_len's position depends on the release, the block table's does not.
TEST(SyntheticTraces, RocmPagedAttentionTakesItsKeyLengthFromTheBlockTable) {
  TraceBuilder b;
  b.op("_rocm_C::paged_attention", 0, 30,
       {{4, 64, 128}, {4, 64, 2}, {4, 64, 2}, {4, 64, 2, 128}, {4, 64, 128}, {900, 8, 16, 16, 8}, {900, 8, 128, 16},
        {}, {}, {4, 32}, {4}, {}, {}, {}},
       "c10::BFloat16", {"", "", "", "", "", "", "", "8", "0.088388347648318447", "", "", "", "16", "512"});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.library, "vllm");
  EXPECT_EQ(c.shape.B, 4);
  EXPECT_EQ(c.shape.Skv, 32 * 16);
  EXPECT_TRUE(c.decode);
  EXPECT_TRUE(c.flops_upper_bound);
}

// FlashInfer's batch decode op, flashinfer::<uri>_run (flashinfer/decode.py): float/int
// workspaces, plan_info_vec, q [B, Hq, D], paged_k_cache / paged_v_cache [pages, page_size, Hkv, D],
// paged_kv_indptr [B+1], paged_kv_indices, paged_kv_last_page_len, o, ...; its kernel below it.
TEST(SyntheticTraces, FlashInferBatchDecodeOpIsOneCallWithItsKernelAndSaysItsFlopsAreUnknown) {
  TraceBuilder b;
  b.op("flashinfer::batch_decode_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_qk_128_"
       "head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_run",
       0, 30, {{1 << 20}, {1 << 16}, {}, {16, 32, 128}, {500, 16, 8, 128}, {500, 16, 8, 128}, {17}, {300}, {16}, {16, 32, 128}},
       "c10::BFloat16");
  b.kernel("void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>", 5, 20);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.library, "flashinfer");
  EXPECT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.shape.B, 16);
  EXPECT_TRUE(c.decode);
  EXPECT_EQ(c.shape.Hkv, 8);
  EXPECT_EQ(c.shape.kv_cache, (std::vector<int64_t>{500, 16, 8, 128}));
  EXPECT_DOUBLE_EQ(c.flops, 0);
  const auto f = std::find_if(r.findings.begin(), r.findings.end(),
                              [](const Finding& x) { return x.rule == "flops.key_length_unknown"; });
  ASSERT_NE(f, r.findings.end());
  EXPECT_NE(f->title.find("unknown for 1 call"), std::string::npos) << f->title;
  EXPECT_NE(f->detail.find("flashinfer::batch_decode_with_kv_cache_"), std::string::npos);
}

// Batch prefill: flashinfer::<uri>_ragged_run (q, k, v [tokens, H, D]) and <uri>_paged_run
// (paged_k_cache [pages, page_size, Hkv, D]) share q/k/v/qo_indptr positions (3-6).
TEST(SyntheticTraces, FlashInferRaggedAndPagedPrefillOpsAreCallsWithTheirBatch) {
  TraceBuilder b;
  const std::string uri = "flashinfer::batch_prefill_with_kv_cache_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_"
                          "head_dim_qk_128_head_dim_vo_128_posenc_0_use_swa_False_use_logits_cap_False_f16qk_False";
  b.op(uri + "_ragged_run", 0, 30, {{1 << 20}, {1 << 16}, {}, {700, 32, 128}, {700, 8, 128}, {700, 8, 128}, {3}, {3}},
       "c10::BFloat16");
  b.op(uri + "_paged_run", 100, 30,
       {{1 << 20}, {1 << 16}, {}, {700, 32, 128}, {900, 16, 8, 128}, {900, 16, 8, 128}, {5}, {5}, {90}, {4}},
       "c10::BFloat16");
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].shape.B, 2);
  EXPECT_EQ(r.calls[0].shape.tokens, 700);
  EXPECT_TRUE(r.calls[0].shape.kv_cache.empty());
  EXPECT_EQ(r.calls[1].shape.B, 4);
  EXPECT_EQ(r.calls[1].shape.kv_cache, (std::vector<int64_t>{900, 16, 8, 128}));
  for (const Call& c : r.calls) {
    EXPECT_EQ(c.library, "flashinfer");
    EXPECT_EQ(c.shape.Hkv, 8);
  }
}

// ---- the story of a run: devices, unknown shapes, custom autograd, overhead, provenance ----

void set_sequence_number(TraceBuilder& b, uint32_t op, int64_t sequence) {
  b.trace.op_args[b.trace.slices[op].args].sequence_number = sequence;
}

TEST(StoryOfARun, AttentionComputedOnTheCpuOfAGpuTraceIsACpuCallTimedByItsOps) {
  TraceBuilder b;
  b.op("aten::add", 0, 10);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)", 2, 5);
  b.op("aten::scaled_dot_product_attention", 100, 40, {{1, 8, 1, 64}, {1, 8, 300, 64}, {1, 8, 300, 64}});
  b.op("aten::_scaled_dot_product_flash_attention_for_cpu", 101, 38, {{1, 8, 1, 64}, {1, 8, 300, 64}, {1, 8, 300, 64}});
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].device, "cpu");
  EXPECT_FALSE(r.calls[0].device_time_unknown);
  EXPECT_DOUBLE_EQ(r.calls[0].device_time_us, 40);
}

TEST(StoryOfARun, AKernelLaunchedWithoutAnOpHasUnknownShapeAndNoRuleVerdict) {
  // flash-attn split-KV decode launched by the engine with no ATen op around it.
  TraceBuilder b;
  b.kernel("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>(Flash_fwd_params)", 10, 30);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  const Call& c = r.calls[0];
  EXPECT_EQ(c.backend, "flash");
  for (const char* fact : {"Sq", "Skv", "Hq", "B"})
    EXPECT_NE(std::find(c.unknown.begin(), c.unknown.end(), fact), c.unknown.end()) << fact;
  ASSERT_TRUE(c.explanation.has_value());
  EXPECT_TRUE(c.explanation->predicted_backend.empty());
  EXPECT_TRUE(c.explanation->fix.empty());
  EXPECT_NE(c.explanation->consistency_note.find("does not record"), std::string::npos);
  EXPECT_EQ(c.flops, 0);
  for (const Finding& f : r.findings) {
    EXPECT_EQ(f.rule.find("zero_seq_len"), std::string::npos) << f.title;
    EXPECT_EQ(f.expected_gain, 0) << f.title;
  }
}

TEST(StoryOfARun, ACustomAutogradOpsBackwardIsABackwardCallPairedWithItsForward) {
  TraceBuilder b;
  // Forward: the Function's op (Sequence number 7) launches a norm and the attention kernel.
  const uint32_t fwd = b.op("FusedRopeAttentionFunction", 0, 50);
  set_sequence_number(b, fwd, 7);
  b.kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)", 5, 6);
  b.kernel("cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x64_4x1x1_kernel0_0", 20, 25);
  // Backward: autograd runs the node with the same Sequence number; the kernel's name alone
  // does not say backward.
  b.op("autograd::engine::evaluate_function: FusedRopeAttentionFunctionBackward", 200, 80);
  const uint32_t node = b.op("FusedRopeAttentionFunctionBackward", 201, 78);
  set_sequence_number(b, node, 7);
  b.kernel("cudnn_generated_fort_native_sdpa_sm90_knob_3_64x64x64_4x1x1_kernel0_0", 210, 50);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].direction, "forward");
  EXPECT_EQ(r.calls[1].direction, "backward");
  EXPECT_EQ(r.calls[0].pair_id, 1);
  EXPECT_EQ(r.calls[1].pair_id, 0);
  EXPECT_EQ(r.calls[1].layer, r.calls[0].layer);
  ASSERT_EQ(r.layers.size(), 1u);
  // The norm is the op's other work: listed with the call, not attention time.
  EXPECT_DOUBLE_EQ(r.calls[0].device_time_us, 25);
  const auto norm = std::find_if(r.calls[0].kernels.begin(), r.calls[0].kernels.end(),
                                 [](const KernelRef& k) { return k.name.find("layer_norm") != std::string::npos; });
  ASSERT_NE(norm, r.calls[0].kernels.end());
  EXPECT_EQ(norm->component, component::kNonAttention);
}

TEST(StoryOfARun, KvCacheWritesOfAReplayedForwardAreOverheadOfTheLayerTheyPrecede) {
  TraceBuilder b;
  b.graph_launch({"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, 0>(int)",
                  "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, false, true>(Flash_fwd_params)",
                  "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, 0>(int)",
                  "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>, false, true>(Flash_fwd_params)"},
                 0, 10);
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 2u);
  for (const Call& c : r.calls) {
    EXPECT_DOUBLE_EQ(c.device_time_us, 10);
    EXPECT_DOUBLE_EQ(c.overhead_time_us, 10);
  }
  EXPECT_EQ(r.calls[0].layer, 0);
  EXPECT_EQ(r.calls[1].layer, 1);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].marker_kind, "graph_replay");
  EXPECT_DOUBLE_EQ(r.steps[0].overhead_time_us, 20);
  EXPECT_DOUBLE_EQ(r.summary.overhead_time_us, 20);
}

TEST(StoryOfARun, ATritonKernelSharedByEnginesIsNamedAfterTheEngineWhoseOpRanIt) {
  TraceBuilder b;
  b.op("vllm::unified_attention_with_output", 0, 50, {{512, 32, 128}, {512, 8, 128}, {512, 8, 128}}, "c10::BFloat16");
  b.kernel("_fwd_kernel", 10, 30);  // the prefix-prefill kernel vLLM copied from SGLang
  const Report r = b.analyze();
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].library, "vllm_triton");
}

}  // namespace
}  // namespace attnprof::test
