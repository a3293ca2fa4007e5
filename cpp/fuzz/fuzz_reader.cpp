// libFuzzer target for one input reader of reader_inputs.h, chosen at compile time
// (ATTNPROF_FUZZ_READER, set per executable by cpp/fuzz/CMakeLists.txt). A crash, undefined
// behaviour, leak or escaping exception fails the run, and so does an error message that breaks
// the contract (several lines, or not naming the file): that aborts with the message.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "reader_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const attnprof::fuzz::ReaderTarget* target = attnprof::fuzz::find_reader_target(ATTNPROF_FUZZ_READER);
  if (target == nullptr) std::abort();
  const std::string error = target->run(std::string_view(reinterpret_cast<const char*>(data), size));
  if (const std::string broken = attnprof::fuzz::contract_violation(*target, error); !broken.empty()) {
    std::fprintf(stderr, "error contract broken: %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}
