// libFuzzer target: any bytes -> parse_trace -> (when it is a trace) analyze_trace.
// Small chunks so that the event splitter cuts inside every input of a few KB, and two
// parsing threads so that chunks are parsed concurrently and merged (cpp/src/ingest/chunks.h).
// analyze_trace reads no file and runs no git (the pipeline's provenance_of does, and this
// target does not call it): each input costs ingest + analysis only.
// cpp/tests/ingest/fuzz_regressions_test.cpp runs the same steps on the saved inputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "attnprof/analyze.h"
#include "attnprof/ingest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnprof::IngestOptions options;
  options.chunk_bytes = 4096;
  options.threads = 2;
  auto trace = attnprof::parse_trace(std::string_view(reinterpret_cast<const char*>(data), size),
                                     "fuzz.json", options);
  if (trace.ok()) {
    attnprof::Report report = attnprof::analyze_trace(*trace);
    (void)report;
  }
  return 0;
}
