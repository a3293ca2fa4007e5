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
  EXPECT_GE(seeds, 10u);
}

// Each command-line seed is a value at least one of the argument parsers reads.
TEST(ReaderFuzzRegressions, EveryArgumentSeedIsReadByOneParser) {
  const ReaderTarget& target = target_named("arguments");
  for (const auto& f : fs::directory_iterator(kSeedsDir / "arguments")) {
    const std::string error = target.run(read_bytes(f.path()));
    const size_t failed = error.empty() ? 0 : 1 + static_cast<size_t>(std::count(error.begin(), error.end(), ';'));
    EXPECT_LT(failed, 8u) << f.path() << ": " << error;
  }
}

}  // namespace
}  // namespace attnprof::fuzz
