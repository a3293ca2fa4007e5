// Inputs of the reader fuzzers (cpp/fuzz/fuzz_reader.cpp, docs/reliability.md), run through the
// same steps as the fuzzers (cpp/fuzz/reader_inputs.h). Every file of
// cpp/tests/fuzz/regressions/<target>/ is listed in kExpected with the error it must give; the
// committed seeds of cpp/fuzz/seeds/<target>/ must be read without one. Both seed every fuzz run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

#include "../../fuzz/reader_inputs.h"

namespace attnprof::fuzz {
namespace {

namespace fs = std::filesystem;

const fs::path kRegressionsDir = fs::path(ATTNPROF_SOURCE_DIR) / "cpp/tests/fuzz/regressions";
const fs::path kSeedsDir = fs::path(ATTNPROF_SOURCE_DIR) / "cpp/fuzz/seeds";

// What one saved input must give: an error containing `says` ("" = read without error).
struct Expected {
  std::string_view target, file, says;
};

const Expected kExpected[] = {
    // Found by the sidecar target's 10-minute run (minimised by hand): doc.value("format", "")
    // threw type_error out of parse_sidecar.
    {"sidecar", "format_not_a_string.json", "not an attnprof capture sidecar"},
    // Found by reading the readers when their targets were written (the first is issue 18's
    // example); each crashed, was undefined or escaped as "internal error" before the fix.
    // std::stoll threw out_of_range:
    {"heads", "layer_index_beyond_int64.safetensors", "layer index 99999999999999999999 is out of range"},
    // std::regex recursed once per character of the name (stack overflow):
    {"heads", "long_layer_digits.safetensors", "is out of range"},
    // The shape was trusted: the statistics read 8192 values of a tensor holding 8:
    {"heads", "shape_larger_than_data.safetensors", "data_offsets hold 8 values, its shape needs 8192"},
    {"heads", "nan_in_key.safetensors", "tensor layers.0.k: value 7 is nan"},
    // A float key length cast to int64_t unchecked:
    {"heads", "key_length_beyond_skv.safetensors", "is outside [0, Skv = 4]"},
    // nlohmann casts 1e300 to int64_t (undefined behaviour):
    {"report", "float_in_integer_field.json", "field /calls/0/id: number out of range for an integer field"},
    {"sidecar", "float_id_1e300.json", "field /calls/0/id: number out of range for an integer field"},
    {"explain_batch", "hd_v_float_1e30.jsonl", "line 1: field /hd_v: number out of range"},
    // Re-serialising each run of an array recursed once per nesting level:
    {"report", "deeply_nested_array.json", "nests deeper than 64 levels"},
    // nlohmann keeps the last of two equal keys silently:
    {"report", "duplicate_key.json", "duplicate key /calls"},
    {"report", "newer_major_version.json", "field schema_version: report schema 2.0"},
    {"sidecar", "negative_shape.json", "field /calls/0/query/shape: shape needs non-negative dimensions"},
    // parameter_count and the predictions overflowed int64_t:
    {"model_config", "hidden_size_2_62.json", "hidden_size = 4611686018427387904 is outside [1, 262144]"},
    // c.value("model_type", ...) threw type_error out of the reader:
    {"model_config", "model_type_number.json", "field /model_type: type must be string, but is number"},
    {"model_config", "layers_uint64_max.json", "field /num_hidden_layers: number out of range"},
    // The rules' round_up overflowed (now saturates); the row is a tensor PyTorch could hold:
    {"explain_batch", "head_dim_int64_max.jsonl", ""},
    // static_cast<int64_t> of inf and of 1e300:
    {"whatif_lengths", "infinite_length.txt", "line 2: 'inf' is not a token count"},
    {"whatif_lengths", "length_1e300.txt", "line 2: '1e300,2' is not a token count"},
    {"arguments", "memory_1e300GB", "'1e300GB' is more bytes than fit in 64 bits"},
    // cudnn_code (major * 10000 + ...) overflowed int:
    {"arguments", "version_part_beyond_9999", "bad version '300000.1'"},
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const ReaderTarget& target_named(std::string_view name) {
  const ReaderTarget* t = find_reader_target(name);
  if (t == nullptr) throw std::runtime_error("no reader target " + std::string(name));
  return *t;
}

TEST(ReaderFuzzRegressions, EverySavedInputIsListedWithItsOutcome) {
  std::set<std::string> listed;
  for (const Expected& e : kExpected) listed.insert(std::string(e.target) + "/" + std::string(e.file));
  if (!fs::exists(kRegressionsDir)) GTEST_SKIP() << "no saved inputs yet";
  for (const auto& dir : fs::directory_iterator(kRegressionsDir))
    for (const auto& f : fs::directory_iterator(dir.path()))
      EXPECT_TRUE(listed.count(dir.path().filename().string() + "/" + f.path().filename().string()))
          << f.path() << " is not in kExpected";
}

TEST(ReaderFuzzRegressions, SavedInputsGiveTheirErrorNamingTheFile) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(std::string(e.target) + "/" + std::string(e.file));
    const ReaderTarget& target = target_named(e.target);
    const std::string bytes = read_bytes(kRegressionsDir / e.target / e.file);
    ASSERT_FALSE(bytes.empty());
    std::string error;
    ASSERT_NO_THROW(error = target.run(bytes));
    EXPECT_EQ(contract_violation(target, error), "");
    if (e.says.empty()) EXPECT_EQ(error, "");
    else EXPECT_NE(error.find(e.says), std::string::npos) << error;
  }
}

TEST(ReaderFuzzRegressions, CommittedSeedsOfFileReadersAreReadWithoutError) {
  size_t seeds = 0;
  for (const ReaderTarget& target : kReaderTargets) {
    if (!target.names_file || !fs::exists(kSeedsDir / target.name)) continue;
    for (const auto& f : fs::directory_iterator(kSeedsDir / target.name)) {
      SCOPED_TRACE(f.path().string());
      EXPECT_EQ(target.run(read_bytes(f.path())), "");
      ++seeds;
    }
  }
  EXPECT_GE(seeds, 9u);  // heads 2, sidecar 1, model_config 3, whatif_lengths 3
}

// Each command-line seed is a value at least one of the argument parsers reads.
TEST(ReaderFuzzRegressions, EveryArgumentSeedIsReadByOneParser) {
  const ReaderTarget& target = target_named("arguments");
  for (const auto& f : fs::directory_iterator(kSeedsDir / "arguments")) {
    const std::string error = target.run(read_bytes(f.path()));
    const size_t failed = error.empty() ? 0 : 1 + static_cast<size_t>(std::count(error.begin(), error.end(), ';'));
    EXPECT_LT(failed, 9u) << f.path() << ": " << error;
  }
}

}  // namespace
}  // namespace attnprof::fuzz
