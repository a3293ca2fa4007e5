// The Kineto / Chrome trace vocabulary attnprof reads: every key of an event, of its args and
// of the top-level object, and every `cat` spelling, exactly once. Ingest compares against
// these; category_name() prints them; docs/ingest.md lists them (a test checks each is there).
// Spellings follow libkineto (ActivityType.h, output_json.cpp) and torch.profiler's writer.
#pragma once

#include <string_view>

#include "attnprof/trace.h"

namespace attnprof::kineto {

// Keys of one traceEvents element.
inline constexpr std::string_view kPhase = "ph";
inline constexpr std::string_view kCat = "cat";
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kPid = "pid";
inline constexpr std::string_view kTid = "tid";
inline constexpr std::string_view kTs = "ts";
inline constexpr std::string_view kDur = "dur";
inline constexpr std::string_view kFlowId = "id";
inline constexpr std::string_view kArgs = "args";

// args of complete ('X') events that some analysis reads. The others (Input Strides, Fwd
// thread id, grid, block, bytes, Record function id, ...) are stepped over unparsed.
inline constexpr std::string_view kExternalId = "External id";
inline constexpr std::string_view kCorrelation = "correlation";
// The External id of runtime, kernel, memcpy and memset events in torch 1.8-1.9 traces
// (pytorch/kineto libkineto/src/output_json.cpp of 2021 wrote "external id" there).
inline constexpr std::string_view kLegacyExternalId = "external id";
inline constexpr std::string_view kInputDims = "Input Dims";          // cpu_op, user_annotation
inline constexpr std::string_view kInputType = "Input type";
inline constexpr std::string_view kConcreteInputs = "Concrete Inputs";
inline constexpr std::string_view kSequenceNumber = "Sequence number";
inline constexpr std::string_view kPythonId = "Python id";             // python_function
inline constexpr std::string_view kPythonParentId = "Python parent id";
inline constexpr std::string_view kPythonModuleId = "Python module id";
inline constexpr std::string_view kDevice = "device";                  // kernel, gpu_memcpy, gpu_memset
inline constexpr std::string_view kStream = "stream";

// `[memory]` instant events and their args (profile_memory=True).
inline constexpr std::string_view kMemoryEventName = "[memory]";
inline constexpr std::string_view kDeviceType = "Device Type";
inline constexpr std::string_view kDeviceId = "Device Id";
inline constexpr std::string_view kAddr = "Addr";
inline constexpr std::string_view kMemoryBytes = "Bytes";
inline constexpr std::string_view kTotalAllocated = "Total Allocated";
inline constexpr std::string_view kTotalReserved = "Total Reserved";

// The name of a python_function frame of an nn.Module call starts with this.
inline constexpr std::string_view kModuleFramePrefix = "nn.Module: ";

// Metadata ('M') events: their names and the arg each carries.
inline constexpr std::string_view kProcessName = "process_name";
inline constexpr std::string_view kThreadName = "thread_name";
inline constexpr std::string_view kProcessLabels = "process_labels";
inline constexpr std::string_view kMetaName = "name";
inline constexpr std::string_view kMetaLabels = "labels";

// Top-level keys.
inline constexpr std::string_view kTraceEvents = "traceEvents";
inline constexpr std::string_view kSchemaVersion = "schemaVersion";
inline constexpr std::string_view kDeviceProperties = "deviceProperties";
inline constexpr std::string_view kDistributedInfo = "distributedInfo";
inline constexpr std::string_view kDisplayTimeUnit = "displayTimeUnit";
inline constexpr std::string_view kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr std::string_view kTraceName = "traceName";
inline constexpr std::string_view kVersionSuffix = "_version";  // cuda_runtime_version, hip_version, ...
inline constexpr std::string_view kRecordShapes = "record_shapes";
inline constexpr std::string_view kProfileMemory = "profile_memory";
inline constexpr std::string_view kWithStack = "with_stack";
inline constexpr std::string_view kWithModules = "with_modules";
inline constexpr std::string_view kWithFlops = "with_flops";

// One deviceProperties entry.
inline constexpr std::string_view kDeviceName = "name";
inline constexpr std::string_view kDeviceIndex = "id";
inline constexpr std::string_view kTotalGlobalMem = "totalGlobalMem";
inline constexpr std::string_view kComputeMajor = "computeMajor";
inline constexpr std::string_view kComputeMinor = "computeMinor";
inline constexpr std::string_view kNumSms = "numSms";
inline constexpr std::string_view kWarpSize = "warpSize";

// distributedInfo.
inline constexpr std::string_view kBackend = "backend";
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kWorldSize = "world_size";
inline constexpr std::string_view kNcclVersion = "nccl_version";
inline constexpr std::string_view kPgConfig = "pg_config";  // [{pg_name, pg_desc, pg_size, ranks}]
inline constexpr std::string_view kPgName = "pg_name";
inline constexpr std::string_view kPgDesc = "pg_desc";
inline constexpr std::string_view kPgSize = "pg_size";
inline constexpr std::string_view kPgRanks = "ranks";

// Every key above, for the docs check and for anyone listing what ingest reads.
inline constexpr std::string_view kAllKeys[] = {
    kPhase, kCat, kName, kPid, kTid, kTs, kDur, kFlowId, kArgs,
    kExternalId, kCorrelation, kLegacyExternalId, kInputDims, kInputType, kConcreteInputs,
    kSequenceNumber, kPythonId, kPythonParentId, kPythonModuleId,
    kDevice, kStream,
    kMemoryEventName, kDeviceType, kDeviceId, kAddr, kMemoryBytes, kTotalAllocated, kTotalReserved,
    kProcessName, kThreadName, kProcessLabels, kMetaName, kMetaLabels,
    kTraceEvents, kSchemaVersion, kDeviceProperties, kDistributedInfo, kDisplayTimeUnit,
    kBaseTimeNanoseconds, kTraceName, kVersionSuffix, kRecordShapes, kProfileMemory, kWithStack,
    kWithModules, kWithFlops,
    kDeviceName, kDeviceIndex, kTotalGlobalMem, kComputeMajor, kComputeMinor, kNumSms, kWarpSize,
    kBackend, kRank, kWorldSize, kNcclVersion, kPgConfig, kPgName, kPgDesc, kPgSize, kPgRanks,
};

// `cat` spellings -> Category. The first spelling of a category is the one category_name()
// prints; the capitalised forms are what PyTorch 1.8-era traces wrote. Anything else is kOther
// (ingest::category_of, cpp/src/ingest/trace_builder.h, reads this table).
struct CategorySpelling {
  std::string_view text;
  Category category;
};
inline constexpr CategorySpelling kCategories[] = {
    {"cpu_op", Category::kCpuOp},
    {"kernel", Category::kKernel},
    {"cuda_runtime", Category::kRuntime},
    {"python_function", Category::kPythonFunction},
    {"cuda_driver", Category::kDriver},
    {"user_annotation", Category::kUserAnnotation},
    {"gpu_user_annotation", Category::kGpuUserAnnotation},
    {"gpu_memcpy", Category::kMemcpy},
    {"gpu_memset", Category::kMemset},
    {"Operator", Category::kCpuOp},
    {"Kernel", Category::kKernel},
    {"Runtime", Category::kRuntime},
    {"Memcpy", Category::kMemcpy},
    {"Memset", Category::kMemset},
    // torch 1.8-1.10: record_function ranges projected on a GPU stream were "User" (tid
    // "stream N user", output_json.cpp handleGenericActivity), and ActivityType.cpp spelt
    // GPU_USER_ANNOTATION "gpu_user_Annotation"; torch-tb-profiler reads "Python" frames
    // (tb_plugin/torch_tb_profiler/profiler/trace.py EventTypes.PYTHON). "Trace" (the
    // profiler's span, pid "Traces") is kOther in every version.
    {"User", Category::kGpuUserAnnotation},
    {"gpu_user_Annotation", Category::kGpuUserAnnotation},
    {"Python", Category::kPythonFunction},
};

}  // namespace attnprof::kineto
