// Every real fixture loads, and what ingest reads equals what Python's json module sees in
// the same file (the expected counts below were taken with json.load on each fixture).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "attnprof/ingest.h"

namespace attnprof {
namespace {

const std::string kFixtures = ATTNPROF_FIXTURES_DIR;

Trace load(const std::string& rel, const IngestOptions& options = {}) {
  auto r = load_trace(kFixtures + "/" + rel, options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : Trace{};
}

size_t count_cat(const Trace& t, Category c) {
  return std::count_if(t.slices.begin(), t.slices.end(), [c](const Slice& s) { return s.cat == c; });
}

size_t count_named_prefix(const Trace& t, Category c, std::string_view prefix) {
  return std::count_if(t.slices.begin(), t.slices.end(), [&](const Slice& s) {
    return s.cat == c && t.name_of(s).substr(0, prefix.size()) == prefix;
  });
}

struct FixtureCounts {
  const char* path;
  int64_t events;      // len(traceEvents)
  size_t complete;     // ph == "X"
  size_t kernels;      // ph == "X" and cat == "kernel"
  size_t python;       // cat == "python_function"
  size_t memory;       // ph == "i" and name == "[memory]"
  size_t flows;        // ph in ("s", "f")
};

// Taken with Python: json.load(gzip.open(f))["traceEvents"] and the filters above.
const FixtureCounts kCounts[] = {
    {"h200-torch2.11/traces/bert_sdpa_fp16_b16_s512.pt.trace.json.gz", 928, 543, 58, 0, 176, 147},
    {"h200-torch2.11/traces/bert_sdpa_fp16_b16_s512_padmask.pt.trace.json.gz", 1238, 736, 85, 0, 236, 204},
    {"h200-torch2.11/traces/gpt2_eager_fp16_b8_s1024.pt.trace.json.gz", 1549, 860, 123, 0, 338, 289},
    {"h200-torch2.11/traces/gpt2_sdpa_fp16_b8_s1024.pt.trace.json.gz", 1097, 563, 82, 0, 264, 208},
    {"h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s1024.pt.trace.json.gz", 2574, 1463, 230, 0, 506, 543},
    {"h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s2048.pt.trace.json.gz", 2574, 1463, 230, 0, 506, 543},
    {"h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s4096.pt.trace.json.gz", 2702, 1527, 262, 0, 506, 607},
    {"h200-torch2.11/traces/llama7b4l_eager_bf16_b4_s512.pt.trace.json.gz", 2478, 1415, 230, 0, 506, 495},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b1_s2048_train.pt.trace.json.gz", 6896, 3872, 544, 0, 1094, 1868},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024.pt.trace.json.gz", 2040, 1118, 181, 0, 416, 446},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz", 3073, 2151, 181, 1033, 416, 446},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048.pt.trace.json.gz", 2040, 1118, 181, 0, 416, 446},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_cudnn_attention.pt.trace.json.gz", 2040, 1118, 181, 0, 416, 446},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_efficient_attention.pt.trace.json.gz", 2040, 1138, 181, 0, 408, 434},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_flash_attention.pt.trace.json.gz", 2064, 1150, 181, 0, 416, 438},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_force_math.pt.trace.json.gz", 2868, 1622, 273, 0, 576, 610},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s2048_padmask.pt.trace.json.gz", 2316, 1294, 205, 0, 466, 496},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s4096.pt.trace.json.gz", 2040, 1118, 181, 0, 416, 446},
    {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s512.pt.trace.json.gz", 1960, 1078, 181, 0, 416, 406},
    {"h200-torch2.11/traces/llama7b4l_sdpa_fp32_b4_s2048.pt.trace.json.gz", 1741, 977, 160, 0, 366, 336},
    {"h200-torch2.11/traces/llama_hd256_gqa_sdpa_bf16_b4_s2048.pt.trace.json.gz", 2010, 1102, 181, 0, 416, 430},
    {"h200-torch2.11/traces/llama_hd512_gqa_sdpa_bf16_b4_s2048.pt.trace.json.gz", 2054, 1142, 181, 0, 416, 434},
    {"h200-torch2.11/traces/llama_hd96_gqa_sdpa_bf16_b4_s2048.pt.trace.json.gz", 2010, 1102, 181, 0, 416, 430},
    {"h200-torch2.11/traces/llama_hd96_gqa_sdpa_bf16_b4_s2048_padmask.pt.trace.json.gz", 2414, 1374, 213, 0, 482, 496},
    {"h200-torch2.11/traces/mistral_sw1024_sdpa_bf16_b2_s4096.pt.trace.json.gz", 2397, 1355, 213, 0, 486, 494},
    {"h200-torch2.11/traces/vit_sdpa_bf16_b16_384.pt.trace.json.gz", 907, 516, 58, 0, 170, 159},
    {"hta/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz", 220, 113, 14, 0, 0, 45},
    {"hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 30, 16, 0, 0, 0, 0},
    {"hta/mtia_inference_trace_mtia_inference_rank_0.json.gz", 16158, 14179, 0, 0, 0, 1801},
    {"hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 68692, 45420, 4350, 0, 0, 23234},
    {"hta/trace_diff_control_control.json.gz", 109123, 74937, 8568, 0, 0, 34142},
    {"hta/trace_diff_test_test.json.gz", 105167, 68324, 9876, 0, 0, 36799},
    {"hta/trace_filter_sampled_rank-0.json.gz", 4855, 4811, 1154, 0, 0, 0},
    {"hta/trace_filter_sampled_rank-1.json.gz", 4720, 4676, 1104, 0, 0, 0},
    {"hta/triton_example_triton_example.json.gz", 71, 8, 1, 0, 0, 3},
    {"tracelens/b200_eager_trace.json.gz", 24656, 22355, 768, 15230, 0, 2301},
    {"tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 18221, 12080, 1465, 4262, 2450, 3629},
    {"tracelens/h100_facebook_timesformer-base-finetuned-k400__1016002.json.gz", 50125, 47336, 446, 42330, 1264, 1463},
    {"tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz", 2551, 2060, 60, 1385, 236, 193},
    {"tracelens/mi300_gaunernst_bert-small-uncased__1016001.json.gz", 2653, 2133, 60, 1389, 236, 222},
    {"tracelens/torch_compile_triton_trace.json.gz", 246, 115, 12, 0, 0, 71},
};

TEST(FixtureLoad, EveryFixtureLoadsWithTheEventCountsPythonSees) {
  for (const auto& c : kCounts) {
    SCOPED_TRACE(c.path);
    const Trace t = load(c.path);
    EXPECT_EQ(t.event_count, c.events);
    EXPECT_EQ(t.slices.size(), c.complete);
    EXPECT_EQ(count_cat(t, Category::kKernel), c.kernels);
    EXPECT_EQ(count_cat(t, Category::kPythonFunction), c.python);
    EXPECT_EQ(t.memory.size(), c.memory);
    EXPECT_EQ(t.flows.size(), c.flows);
    EXPECT_TRUE(t.issues.empty()) << t.issues.front().kind << ": " << t.issues.front().samples.front();
    // Every args row belongs to exactly one slice of its category (ops without inputs or a
    // sequence number have none).
    size_t op_rows = 0;
    for (const Slice& s : t.slices) op_rows += t.op_args_of(s) != nullptr;
    EXPECT_EQ(t.op_args.size(), op_rows);
    EXPECT_EQ(t.python_args.size(), c.python);
  }
}

// Cutting traceEvents into many small chunks (events straddle every block boundary) must
// give exactly the tables of one big chunk.
TEST(FixtureLoad, SmallChunksGiveTheSameTablesAsOneChunk) {
  IngestOptions small;
  small.chunk_bytes = 4096;
  for (const char* rel : {"h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz",
                          "hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                          "tracelens/b200_eager_trace.json.gz"}) {
    SCOPED_TRACE(rel);
    const Trace a = load(rel);
    const Trace b = load(rel, small);
    ASSERT_EQ(a.slices.size(), b.slices.size());
    for (size_t i = 0; i < a.slices.size(); ++i) {
      ASSERT_EQ(a.name_of(a.slices[i]), b.name_of(b.slices[i]));
      ASSERT_EQ(a.slices[i].ts_ns, b.slices[i].ts_ns);
      ASSERT_EQ(a.slices[i].dur_ns, b.slices[i].dur_ns);
      ASSERT_EQ(a.slices[i].correlation(), b.slices[i].correlation());
    }
    EXPECT_EQ(a.event_count, b.event_count);
    EXPECT_EQ(a.memory.size(), b.memory.size());
    EXPECT_EQ(a.flows.size(), b.flows.size());
    EXPECT_EQ(a.op_args.size(), b.op_args.size());
    EXPECT_EQ(a.meta.devices.size(), b.meta.devices.size());
    EXPECT_EQ(a.meta.display_time_unit, b.meta.display_time_unit);
    EXPECT_EQ(a.meta.distributed.has_value(), b.meta.distributed.has_value());
  }
}

TEST(FixtureLoad, H200LlamaHasDeviceCudnnSdpaKernelsAndMemoryEvents) {
  const Trace t = load("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024.pt.trace.json.gz");
  ASSERT_EQ(t.meta.devices.size(), 1u);
  EXPECT_EQ(t.meta.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.meta.devices[0].compute_major, 9);
  EXPECT_EQ(t.meta.devices[0].compute_minor, 0);
  EXPECT_EQ(t.meta.devices[0].num_sms, 132);
  EXPECT_EQ(t.meta.devices[0].total_global_mem, 150109880320);
  EXPECT_EQ(t.meta.schema_version, 1);
  EXPECT_EQ(t.meta.display_time_unit, "ms");
  EXPECT_EQ(t.meta.base_time_ns, 1790857026000000000);
  EXPECT_TRUE(t.meta.record_shapes);
  EXPECT_TRUE(t.meta.profile_memory);
  EXPECT_FALSE(t.meta.with_stack);
  EXPECT_EQ(t.meta.trace_name, "/tmp/cap/traces/llama7b4l_sdpa_bf16_b4_s1024.pt.trace.json");
  const auto has_version = [&](const char* k, const char* v) {
    return std::find(t.meta.versions.begin(), t.meta.versions.end(), std::pair<std::string, std::string>{k, v}) !=
           t.meta.versions.end();
  };
  EXPECT_TRUE(has_version("cuda_runtime_version", "13000"));
  EXPECT_TRUE(has_version("cupti_version", "130001"));

  EXPECT_EQ(count_named_prefix(t, Category::kKernel, "cudnn_generated_fort_native_sdpa"), 4u);
  const auto k = std::find_if(t.slices.begin(), t.slices.end(), [&](const Slice& s) {
    return t.name_of(s).starts_with("cudnn_generated_fort_native_sdpa");
  });
  // {"ts": 5136433173328.493, "dur": 84.8, "External id": 1191, "correlation": 20126,
  //  "stream": 7, "grid": [132, 1, 1], "block": [384, 1, 1]}
  EXPECT_EQ(k->ts_ns, 5136433173328493);
  EXPECT_EQ(k->dur_ns, 84800);
  EXPECT_EQ(t.external_id_of(*k), 1191);
  EXPECT_EQ(k->correlation(), 20126);
  EXPECT_EQ(t.pid_of(*k), 0);
  EXPECT_EQ(t.tid_of(*k), 7);
  const GpuArgs* g = t.gpu_args_of(*k);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->device, 0);
  EXPECT_EQ(g->stream, 7);

  // First [memory] event: Total Reserved 2499805184, Total Allocated 1948362240,
  // Bytes 33554432, Device Id 0, Device Type 1, Addr 139668343488512, ts 5136433169593.588.
  ASSERT_FALSE(t.memory.empty());
  const MemoryEvent& m = t.memory.front();
  EXPECT_EQ(m.ts_ns, 5136433169593588);
  EXPECT_EQ(m.total_reserved, 2499805184);
  EXPECT_EQ(m.total_allocated, 1948362240);
  EXPECT_EQ(m.bytes, 33554432);
  EXPECT_EQ(m.device_id, 0);
  EXPECT_EQ(m.device_type, 1);
  EXPECT_EQ(m.addr, 139668343488512);
  EXPECT_EQ(t.pid_of(m), 418);
}

TEST(FixtureLoad, CpuOpShapesTypesAndConcreteInputsAreParallelLists) {
  const Trace t = load("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024.pt.trace.json.gz");
  // First event: aten::embedding, ts 5136433169502.610, dur 710.301, External id 1025,
  // "Input Dims": [[32000, 4096], [4, 1024], [], [], []], "Input Strides": [[4096, 1], [1024, 1], ...],
  // "Input type": ["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"],
  // "Concrete Inputs": ["", "", "-1", "False", "False"].
  const Slice& s = t.slices.front();
  EXPECT_EQ(t.name_of(s), "aten::embedding");
  EXPECT_EQ(s.cat, Category::kCpuOp);
  EXPECT_EQ(s.ts_ns, 5136433169502610);
  EXPECT_EQ(s.dur_ns, 710301);
  EXPECT_EQ(t.external_id_of(s), 1025);
  EXPECT_EQ(s.correlation(), kNoId);
  EXPECT_EQ(t.pid_of(s), 418);
  EXPECT_EQ(t.tid_of(s), 418);
  const OpArgs* a = t.op_args_of(s);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->inputs.size(), 5u);
  EXPECT_EQ(a->inputs[0].dims, (std::vector<int64_t>{32000, 4096}));
  EXPECT_EQ(a->inputs[1].dims, (std::vector<int64_t>{4, 1024}));
  EXPECT_TRUE(a->inputs[2].dims.empty());
  EXPECT_EQ(t.strings.get(a->inputs[0].type), "c10::BFloat16");
  EXPECT_EQ(t.strings.get(a->inputs[1].type), "long int");
  EXPECT_EQ(t.strings.get(a->inputs[2].type), "Scalar");
  EXPECT_EQ(t.strings.get(a->inputs[2].concrete), "-1");
  EXPECT_EQ(t.strings.get(a->inputs[3].concrete), "False");
  EXPECT_EQ(t.strings.get(a->inputs[0].concrete), "");

  // aten::cat takes a TensorList: "Input Dims": [[[4, 1], [4, 1024]], []].
  const auto cat = std::find_if(t.slices.begin(), t.slices.end(),
                                [&](const Slice& x) { return t.name_of(x) == "aten::cat"; });
  ASSERT_NE(cat, t.slices.end());
  const OpArgs* ca = t.op_args_of(*cat);
  ASSERT_NE(ca, nullptr);
  ASSERT_EQ(ca->inputs.size(), 2u);
  EXPECT_EQ(t.strings.get(ca->inputs[0].type), "TensorList");
  EXPECT_TRUE(ca->inputs[0].dims.empty());  // no analysis reads a TensorList's member shapes
}

TEST(FixtureLoad, StringPidsGetStableNegativeIdsAndMetadataNamesAreKept) {
  const Trace t = load("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024.pt.trace.json.gz");
  // {"cat": "Trace", "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)"}
  const auto span = std::find_if(t.slices.begin(), t.slices.end(),
                                 [&](const Slice& s) { return t.name_of(s) == "PyTorch Profiler (0)"; });
  ASSERT_NE(span, t.slices.end());
  EXPECT_EQ(span->cat, Category::kOther);
  ASSERT_LT(t.pid_of(*span), 0);
  ASSERT_LT(t.tid_of(*span), 0);
  EXPECT_EQ(t.meta.string_ids.at(static_cast<size_t>(-t.pid_of(*span) - 1)), "Spans");
  EXPECT_EQ(t.meta.string_ids.at(static_cast<size_t>(-t.tid_of(*span) - 1)), "PyTorch Profiler");
  EXPECT_EQ(t.meta.process_names.at(418), "python3");
  EXPECT_EQ(t.meta.process_labels.at(418), "CPU");
  EXPECT_EQ(t.meta.process_labels.at(0), "GPU 0");
  EXPECT_EQ(t.meta.thread_names.at({418, 418}), "thread 418 (python3)");
}

TEST(FixtureLoad, StackTraceHasPythonTreeWithModuleIds) {
  const Trace t = load("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b4_s1024_stack.pt.trace.json.gz");
  EXPECT_TRUE(t.meta.with_stack);
  EXPECT_TRUE(t.meta.with_modules);
  size_t roots = 0, modules = 0;
  for (const Slice& s : t.slices) {
    const PythonArgs* p = t.python_args_of(s);
    if (p == nullptr) continue;
    EXPECT_NE(p->python_id, kNoId);
    roots += p->parent_id == kNoId;
    modules += p->module_id != kNoId;
    if (t.name_of(s) == "nn.Module: LlamaModel_0") {
      // {"Python parent id": 27, "Python id": 35, "Python module id": 0}
      EXPECT_EQ(p->parent_id, 27);
      EXPECT_EQ(p->python_id, 35);
      EXPECT_EQ(p->module_id, 0);
    }
  }
  EXPECT_EQ(roots, 1u);     // one python_function has "Python parent id": null
  EXPECT_EQ(modules, 56u);  // 56 carry "Python module id"
}

TEST(FixtureLoad, TrainTraceCarriesAutogradSequenceNumbers) {
  const Trace t = load("h200-torch2.11/traces/llama7b4l_sdpa_bf16_b1_s2048_train.pt.trace.json.gz");
  size_t with_seq = 0;
  for (const OpArgs& a : t.op_args) with_seq += a.sequence_number != kNoId;
  EXPECT_EQ(with_seq, 1026u);
  const auto mean_bwd = std::find_if(t.slices.begin(), t.slices.end(), [&](const Slice& s) {
    return t.name_of(s) == "autograd::engine::evaluate_function: MeanBackward0";
  });
  ASSERT_NE(mean_bwd, t.slices.end());
  EXPECT_EQ(t.op_args_of(*mean_bwd)->sequence_number, 2071);
  EXPECT_GT(std::count_if(t.flows.begin(), t.flows.end(),
                          [&](const FlowEvent& f) { return t.strings.get(f.cat) == "fwdbwd"; }),
            0);
}

TEST(FixtureLoad, Mi300TraceHasHipLaunchesAndAotritonAttnFwd) {
  const Trace t = load("tracelens/mi300_gaunernst_bert-small-uncased__1016001.json.gz");
  EXPECT_EQ(count_named_prefix(t, Category::kRuntime, "hipLaunchKernel"), 30u);
  EXPECT_EQ(count_named_prefix(t, Category::kKernel, "attn_fwd"), 4u);
  ASSERT_FALSE(t.meta.devices.empty());
  EXPECT_EQ(t.meta.devices[0].name, "AMD Instinct MI300X VF");
  EXPECT_EQ(t.meta.devices[0].compute_major, 9);
  EXPECT_EQ(t.meta.devices[0].compute_minor, 4);
  EXPECT_NE(std::find(t.meta.versions.begin(), t.meta.versions.end(),
                      std::pair<std::string, std::string>{"hip_runtime_version", "60443483"}),
            t.meta.versions.end());
}

TEST(FixtureLoad, B200TraceHasDistributedInfo) {
  const Trace t = load("tracelens/b200_eager_trace.json.gz");
  ASSERT_TRUE(t.meta.distributed.has_value());
  EXPECT_EQ(t.meta.distributed->backend, "nccl");
  EXPECT_EQ(t.meta.distributed->rank, 0);
  EXPECT_EQ(t.meta.distributed->world_size, 8);
  EXPECT_NE(std::find(t.meta.versions.begin(), t.meta.versions.end(),
                      std::pair<std::string, std::string>{"nccl_version", "2.27.5"}),
            t.meta.versions.end());
  ASSERT_FALSE(t.meta.devices.empty());
  EXPECT_EQ(t.meta.devices[0].name, "NVIDIA B200");
  EXPECT_EQ(t.meta.devices[0].compute_major, 10);
  EXPECT_EQ(t.meta.devices[0].num_sms, 148);
}

TEST(FixtureLoad, CpuOnlyTraceHasNoKernels) {
  const Trace t = load("hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  EXPECT_EQ(count_cat(t, Category::kKernel), 0u);
  EXPECT_EQ(count_cat(t, Category::kUserAnnotation), 11u);
  EXPECT_TRUE(t.meta.distributed.has_value());
}

// displayTimeUnit "ns" only changes how viewers display time: ts and dur are still µs
// ("ts": 1712195495505582.988, "dur": 4.928 on a 4.9 µs CatArrayBatchedCopy kernel).
TEST(FixtureLoad, NsDisplayUnitTraceStillWritesMicrosecondsAndKeepsEveryNanosecond) {
  const Trace t = load("hta/ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
  EXPECT_EQ(t.meta.display_time_unit, "ns");  // written after traceEvents
  EXPECT_EQ(t.meta.trace_name, "/tmp/libkineto_activities_1102.json");
  const auto k = std::find_if(t.slices.begin(), t.slices.end(), [](const Slice& s) { return s.cat == Category::kKernel; });
  ASSERT_NE(k, t.slices.end());
  EXPECT_EQ(k->ts_ns, 1712195495505582988);
  EXPECT_EQ(k->dur_ns, 4928);
  EXPECT_EQ(k->correlation(), 135071);
  EXPECT_EQ(t.gpu_args_of(*k)->stream, 7);
  EXPECT_EQ(t.meta.devices.size(), 8u);
  EXPECT_EQ(t.meta.devices[0].name, "Tesla V100-SXM2-32GB");
}

// 2022-era traces write integer microseconds since the epoch.
TEST(FixtureLoad, IntegerMicrosecondTimestampsBecomeNanoseconds) {
  const Trace t = load("hta/trace_diff_control_control.json.gz");
  ASSERT_FALSE(t.slices.empty());
  for (const Slice& s : t.slices) {
    ASSERT_EQ(s.ts_ns % 1000, 0);
    ASSERT_GT(s.ts_ns, int64_t{1600000000} * 1000000000);  // after 2020
  }
}

}  // namespace
}  // namespace attnprof
