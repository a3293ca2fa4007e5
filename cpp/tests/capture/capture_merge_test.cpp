// The sidecar reader and the merge of live-capture records into a Report. Traces here are
// built in memory with the exact annotation layout the Python capture writes (the end-to-end
// path from a real torch run is covered by tests/test_capture_*.py).
#include <gtest/gtest.h>

#include <string>

#include "attnprof/attention.h"
#include "attnprof/capture.h"
#include "attnprof/trace_index.h"

namespace attnprof {
namespace {

constexpr const char* kSidecar = R"({
  "format": "attnprof-capture", "format_version": 1,
  "torch_version": "2.13.0", "transformers_version": "5.24.0",
  "warnings": ["hook failed once: RuntimeError: boom"],
  "calls": [
    {"id": 7, "module": "model.layers.0.self_attn", "module_class": "LlamaAttention",
     "interface": "transformers.sdpa", "device": "cpu", "step": 2, "phase": "prefill",
     "query": {"shape": [2, 8, 16, 32], "stride": [4096, 32, 256, 1], "dtype": "bfloat16", "requires_grad": true},
     "key": {"shape": [2, 2, 16, 32], "stride": [1024, 512, 32, 1], "dtype": "bfloat16"},
     "value": {"shape": [2, 2, 16, 32], "stride": [1024, 512, 32, 1], "dtype": "bfloat16"},
     "mask": {"kind": "none"}, "is_causal": true, "dropout_p": 0.0, "scale": 0.17677669529663687,
     "enable_gqa": true, "grad_enabled": true, "pytorch_choice": "FLASH_ATTENTION"},
    {"id": 8, "module": "model.layers.1.self_attn", "interface": "transformers.eager", "device": "cpu",
     "query": {"shape": [2, 8, 16, 32], "stride": [4096, 512, 32, 2], "dtype": "float32"},
     "key": {"shape": [2, 2, 16, 32], "dtype": "float32"}, "value": {"shape": [2, 2, 16, 32], "dtype": "float32"},
     "mask": {"kind": "float", "shape": [2, 1, 16, 16]}, "scale": null, "pytorch_choice": ""}
  ]})";

struct Builder {
  Trace trace;
  void annotation(std::string_view name, int64_t ts, int64_t dur) { add(name, Category::kUserAnnotation, ts, dur); }
  void op(std::string_view name, int64_t ts, int64_t dur) { add(name, Category::kCpuOp, ts, dur); }

 private:
  void add(std::string_view name, Category cat, int64_t ts, int64_t dur) {
    Slice s;
    s.name = trace.strings.intern(name);
    s.cat = cat;
    s.ts_ns = ts;
    s.dur_ns = dur;
    trace.slices.push_back(s);
  }
};

Call call_at(int64_t id, int64_t ts, int64_t dur, std::string direction = "forward") {
  Call c;
  c.id = id;
  c.cpu_ts_ns = ts;
  c.cpu_dur_ns = dur;
  c.direction = std::move(direction);
  return c;
}

CaptureSidecar parsed() {
  auto s = parse_sidecar(kSidecar, "test");
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return *s;
}

TEST(CaptureSidecar, ReadsEveryDocumentedField) {
  CaptureSidecar s = parsed();
  ASSERT_EQ(s.calls.size(), 2u);
  const CapturedCall& c = s.calls[0];
  EXPECT_EQ(c.id, 7);
  EXPECT_EQ(c.module, "model.layers.0.self_attn");
  EXPECT_EQ(c.module_class, "LlamaAttention");
  EXPECT_EQ(c.step, 2);
  EXPECT_EQ(c.phase, "prefill");
  EXPECT_EQ(c.query.shape, (std::vector<int64_t>{2, 8, 16, 32}));
  EXPECT_TRUE(c.query.requires_grad);
  EXPECT_TRUE(c.is_causal);
  ASSERT_TRUE(c.scale.has_value());
  EXPECT_DOUBLE_EQ(*c.scale, 0.17677669529663687);
  EXPECT_FALSE(s.calls[1].scale.has_value());  // null = PyTorch's default 1/sqrt(D)
  EXPECT_EQ(s.calls[1].mask.kind, "float");
  EXPECT_TRUE(s.calls[1].mask.present);
  EXPECT_EQ(s.warnings.size(), 1u);
}

TEST(CaptureSidecar, RejectsTextThatIsNotASidecar) {
  EXPECT_EQ(parse_sidecar("{\"traceEvents\": []}", "x").error().code, ErrorCode::kNotATrace);
  EXPECT_EQ(parse_sidecar("{\"format\": \"attnprof-capture\", ", "x").error().code,
            ErrorCode::kMalformedJson);
  auto bad_field = parse_sidecar(R"({"format": "attnprof-capture", "calls": [{"id": "seven"}]})", "x");
  ASSERT_FALSE(bad_field.ok());
  EXPECT_EQ(bad_field.error().code, ErrorCode::kMalformedJson);
  auto newer = parse_sidecar(R"({"format": "attnprof-capture", "format_version": 99})", "x");
  EXPECT_EQ(newer.error().code, ErrorCode::kUnsupported);
}

TEST(CaptureSidecar, PathIsTheTracePathPlusSuffix) {
  EXPECT_EQ(sidecar_path_for("/r/trace.json.gz"), "/r/trace.json.gz.attnprof-capture.json");
}

TEST(CaptureMerge, SdpChoiceNamesMapToTheBackendVocabularyPerDevice) {
  EXPECT_EQ(backend_of_sdp_choice("FLASH_ATTENTION", "cpu"), backend::kCpuFlash);
  EXPECT_EQ(backend_of_sdp_choice("FLASH_ATTENTION", "cuda"), backend::kFlash);
  EXPECT_EQ(backend_of_sdp_choice("EFFICIENT_ATTENTION", "cuda"), backend::kEfficient);
  EXPECT_EQ(backend_of_sdp_choice("CUDNN_ATTENTION", "cuda"), backend::kCudnn);
  EXPECT_EQ(backend_of_sdp_choice("MATH", "cpu"), backend::kMath);
  EXPECT_EQ(backend_of_sdp_choice("ERROR", "cuda"), "");
}

TEST(CaptureMerge, CallInsideItsAnnotationGetsModuleChoiceAndExactArguments) {
  Builder b;
  b.annotation("attnprof.module model.layers.0.self_attn", 1000, 9000);
  b.annotation("attnprof.call#7", 2000, 5000);
  Report report;
  report.calls.push_back(call_at(0, 2500, 3000));
  report.calls[0].backend = backend::kCpuFlash;  // what the trace showed
  Layer layer;
  layer.call_ids = {0};
  layer.module = "LlamaAttention_0";
  report.layers.push_back(layer);

  const CaptureSection merged = merge_capture(report.calls, report.layers, b.trace, parsed());
  const MergeStats& stats = merged.stats;
  EXPECT_EQ(stats.matched_calls, 1);
  const Call& c = report.calls[0];
  ASSERT_TRUE(c.capture.has_value());
  EXPECT_EQ(c.capture->pytorch_choice, "FLASH_ATTENTION");
  EXPECT_EQ(c.capture->interface, "transformers.sdpa");
  EXPECT_TRUE(c.capture->requires_grad);
  EXPECT_TRUE(c.capture->enable_gqa);
  EXPECT_TRUE(c.capture->last_dim_contiguous);
  EXPECT_EQ(c.module, "model.layers.0.self_attn");
  EXPECT_EQ(c.source, "trace+capture");
  EXPECT_EQ(c.step, 2);
  EXPECT_EQ(c.phase, "prefill");
  EXPECT_EQ(c.backend, backend::kCpuFlash);
  EXPECT_EQ(c.shape.B, 2);
  EXPECT_EQ(c.shape.Hq, 8);
  EXPECT_EQ(c.shape.Hkv, 2);
  EXPECT_EQ(c.shape.Sq, 16);
  EXPECT_EQ(c.shape.Skv, 16);
  EXPECT_EQ(c.shape.D, 32);
  EXPECT_EQ(c.shape.dtype, "bf16");
  EXPECT_TRUE(c.gqa);
  EXPECT_TRUE(c.causal);
  EXPECT_FALSE(c.decode);
  EXPECT_EQ(report.layers[0].module, "model.layers.0.self_attn");
  EXPECT_EQ(merged.versions.size(), 2u);
  EXPECT_EQ(merged.missing.size(), 1u);  // the capture's own warning
}

TEST(CaptureMerge, EagerCallWithoutBackendTakesItFromTheInterface) {
  Builder b;
  b.annotation("attnprof.call#8", 100, 1000);
  Report report;
  report.calls.push_back(call_at(0, 200, 500));
  merge_capture(report.calls, report.layers, b.trace, parsed());
  const Call& c = report.calls[0];
  EXPECT_EQ(c.backend, backend::kEager);
  EXPECT_FALSE(c.capture->last_dim_contiguous);  // query stride ends in 2
  EXPECT_EQ(c.mask.kind, "float");
  EXPECT_EQ(c.mask.dims, (std::vector<int64_t>{2, 1, 16, 16}));
  EXPECT_EQ(c.scale, 0.0);  // null in the sidecar: left for the default
}

TEST(CaptureMerge, CallOutsideAnyCallRangeIsNamedByTheInnermostModuleRange) {
  Builder b;
  b.annotation("attnprof.module encoder", 0, 10000);
  b.annotation("attnprof.module encoder.block.1.attn", 5000, 3000);
  b.annotation("attnprof.module encoder.block.0.attn", 1000, 3000);
  Report report;
  report.calls.push_back(call_at(0, 1200, 2000));
  report.calls.push_back(call_at(1, 5100, 100));
  report.calls.push_back(call_at(2, 9000, 100));
  const CaptureSection merged = merge_capture(report.calls, report.layers, b.trace, parsed());
  const MergeStats& stats = merged.stats;
  EXPECT_EQ(stats.module_only_calls, 3);
  EXPECT_EQ(report.calls[0].module, "encoder.block.0.attn");
  EXPECT_EQ(report.calls[1].module, "encoder.block.1.attn");
  EXPECT_EQ(report.calls[2].module, "encoder");
  EXPECT_FALSE(report.calls[0].capture.has_value());
}

TEST(CaptureMerge, BackwardCallInheritsItsForwardPartnersCapture) {
  Builder b;
  b.annotation("attnprof.call#7", 2000, 5000);
  Report report;
  report.calls.push_back(call_at(0, 2500, 3000));
  report.calls.push_back(call_at(1, 90000, 3000, "backward"));
  report.calls[0].pair_id = 1;
  report.calls[1].pair_id = 0;
  merge_capture(report.calls, report.layers, b.trace, parsed());
  ASSERT_TRUE(report.calls[1].capture.has_value());
  EXPECT_EQ(report.calls[1].module, "model.layers.0.self_attn");
  EXPECT_EQ(report.calls[1].capture->pytorch_choice, "FLASH_ATTENTION");
}

TEST(CaptureMerge, CapturedCallMissingFromTheReportIsSaidInSourceMissing) {
  Builder b;
  b.annotation("attnprof.call#7", 2000, 5000);
  b.annotation("attnprof.call#8", 8000, 5000);
  Report report;
  report.calls.push_back(call_at(0, 2500, 3000));
  const CaptureSection merged = merge_capture(report.calls, report.layers, b.trace, parsed());
  const MergeStats& stats = merged.stats;
  EXPECT_EQ(stats.matched_calls, 1);
  EXPECT_EQ(stats.unmatched_captured, 1);
  ASSERT_EQ(merged.missing.size(), 2u);
  EXPECT_NE(merged.missing[0].find("1 attention call(s)"), std::string::npos);
}

TEST(CaptureMerge, MissingSidecarBesideTheTraceIsNotAnErrorButAnExplicitOneIs) {
  Trace trace;
  trace.path = "/nonexistent/dir/trace.json";
  auto beside = find_sidecar(trace, "");
  ASSERT_TRUE(beside.ok());
  EXPECT_FALSE(beside->has_value());
  auto explicit_missing = find_sidecar(trace, "/nonexistent/side.json");
  ASSERT_FALSE(explicit_missing.ok());
  EXPECT_EQ(explicit_missing.error().code, ErrorCode::kFileNotFound);
}

// Two transformers flex_attention calls as the Python capture records them (BlockMask facts read
// from the mask: 75% of the blocks skipped, causal window of 32 tokens).
constexpr const char* kFlexSidecar = R"({
  "format": "attnprof-capture", "format_version": 1, "torch_version": "2.13.0",
  "calls": [
    {"id": 3, "module": "model.layers.0.self_attn", "interface": "transformers.flex_attention", "device": "cpu",
     "query": {"shape": [1, 4, 256, 16], "dtype": "float32"}, "key": {"shape": [1, 2, 256, 16], "dtype": "float32"},
     "value": {"shape": [1, 2, 256, 16], "dtype": "float32"},
     "mask": {"kind": "block_mask", "shape": [1, 1, 256, 256], "block_size": [128, 128], "block_sparsity": 0.75,
              "window": 32},
     "scale": 0.25, "pytorch_choice": ""},
    {"id": 4, "module": "model.layers.1.self_attn", "interface": "transformers.flex_attention", "device": "cpu",
     "query": {"shape": [1, 4, 256, 16], "dtype": "float32"}, "key": {"shape": [1, 2, 256, 16], "dtype": "float32"},
     "value": {"shape": [1, 2, 256, 16], "dtype": "float32"}, "mask": {"kind": "block_mask"}, "pytorch_choice": ""}
  ]})";

TEST(CompiledGraphCalls, CapturedFlexThatRanInACompiledGraphBecomesOneFusedFlexCallTimedByTheGraph) {
  Builder b;
  b.annotation("attnprof.call#3 model.layers.0.self_attn", 1000, 10000);
  b.op("Torch-Compiled Region: 1/1", 2000, 8000);
  b.annotation("## Call CompiledFxGraph fyujco4q ##", 2100, 7000);
  b.annotation("attnprof.call#4 model.layers.1.self_attn", 20000, 5000);
  b.op("Torch-Compiled Region: 1/1", 20100, 4000);
  std::vector<Call> calls = {call_at(0, 21000, 1000)};  // call #4 already has an extracted call
  auto sidecar = parse_sidecar(kFlexSidecar, "test");
  ASSERT_TRUE(sidecar.ok()) << sidecar.error().message;

  EXPECT_EQ(add_compiled_graph_calls(calls, b.trace, build_trace_index(b.trace), *sidecar), 1);
  ASSERT_EQ(calls.size(), 2u);
  const Call& c = calls[0];  // renumbered in start order
  EXPECT_EQ(c.id, 0);
  EXPECT_EQ(calls[1].id, 1);
  EXPECT_EQ(c.backend, backend::kFlex);
  EXPECT_TRUE(c.fused);
  EXPECT_EQ(c.op, "Torch-Compiled Region");
  EXPECT_EQ(c.module, "model.layers.0.self_attn");
  EXPECT_EQ(c.source, "trace+capture");
  EXPECT_EQ(c.cpu_ts_ns, 2100);  // the graph's run, not the region's guard evaluation
  EXPECT_EQ(c.cpu_dur_ns, 7000);
  EXPECT_DOUBLE_EQ(c.device_time_us, 7.0);  // CPU-only trace: the graph's CPU time
  EXPECT_EQ(c.shape.Sq, 256);
  EXPECT_EQ(c.shape.Hkv, 2);
  EXPECT_DOUBLE_EQ(c.mask.block_sparsity, 0.75);
  EXPECT_EQ(c.mask.window, 32);
  EXPECT_EQ(c.mask.block_size, (std::vector<int64_t>{128, 128}));
  // The kernel computes only the kept quarter of the blocks.
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 1 * 4 * 256 * 256 * 16 * 0.25);
}

TEST(CompiledGraphCalls, RangeWithoutACompiledGraphOrWithoutARecordAddsNothing) {
  Builder b;
  b.annotation("attnprof.call#3 model.layers.0.self_attn", 1000, 10000);  // no compiled graph inside
  b.annotation("attnprof.call#99 model.layers.9.self_attn", 20000, 5000);  // not in the sidecar
  b.op("Torch-Compiled Region: 0/0", 20100, 4000);
  std::vector<Call> calls;
  auto sidecar = parse_sidecar(kFlexSidecar, "test");
  ASSERT_TRUE(sidecar.ok());
  EXPECT_EQ(add_compiled_graph_calls(calls, b.trace, build_trace_index(b.trace), *sidecar), 0);
  EXPECT_TRUE(calls.empty());
}

}  // namespace
}  // namespace attnprof
