// SDPA's priority order per torch version is data (cpp/src/rules/priority_table.cpp): the rows
// cover every release once, each names its source, docs/rules.md shows each, and the order the
// rules walk is the row's (reference §1.3, read by hand for the expected orders below).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "attnprof/rules.h"

namespace attnprof::rules {
namespace {

using B = Backend;
const std::vector<Backend> kCudnnFirst = {B::kCudnn, B::kFlash, B::kEfficient, B::kMath};
const std::vector<Backend> kFlashFirst = {B::kFlash, B::kEfficient, B::kMath, B::kCudnn};

std::string read_source(const char* relative) {
  std::ifstream in(std::filesystem::path(ATTNPROF_SOURCE_DIR) / relative);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Backend> order_of(Version torch, int sm, Version cudnn) {
  Env env;
  env.torch = torch;
  env.cudnn = cudnn;
  env.device = Device{DeviceKind::kCuda, sm, ""};
  return priority_order(env);
}

// The release right after `v` in the rows' encoding (patch 9999 = every patch of a minor).
Version next_release(const Version& v) {
  return v.patch == 9999 ? Version{v.major, v.minor + 1, 0} : Version{v.major, v.minor, v.patch + 1};
}

TEST(PriorityTable, RowsCoverEveryReleaseOnceInOrderAndEachNamesItsSource) {
  const auto rows = priority_table();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front().torch_min, (Version{0, 0, 0}));
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_LE(rows[i].torch_min, rows[i].torch_max) << rows[i].torch_range();
    EXPECT_FALSE(rows[i].source.empty()) << rows[i].torch_range();
    if (i + 1 < rows.size()) {
      EXPECT_EQ(rows[i + 1].torch_min, next_release(rows[i].torch_max)) << rows[i].torch_range();
    }
  }
  EXPECT_EQ(&priority_row({2, 9, 3}), &rows[3]);
  EXPECT_EQ(&priority_row({2, 99, 0}), &rows.back());
}

TEST(PriorityTable, DocsShowEveryRowWithItsOrder) {
  const std::string docs = read_source("docs/rules.md");
  for (const PriorityRow& row : priority_table())
    EXPECT_NE(docs.find("| " + row.torch_range() + " | " + order_text(row.order) + " |"), std::string::npos)
        << row.torch_range() << ": docs/rules.md, \"Priority order\", lacks its row";
}

TEST(PriorityTable, CudnnLeadsWhereEachReleasePrefersIt) {
  // <= 2.4: the constexpr order has cuDNN first on every arch.
  EXPECT_EQ(order_of({2, 4, 0}, 80, {9, 1, 0}), kCudnnFirst);
  // 2.5.0: H100 only; 2.5.1-2.8: never.
  EXPECT_EQ(order_of({2, 5, 0}, 90, {9, 1, 0}), kCudnnFirst);
  EXPECT_EQ(order_of({2, 5, 0}, 80, {9, 1, 0}), kFlashFirst);
  EXPECT_EQ(order_of({2, 5, 1}, 90, {9, 19, 0}), kFlashFirst);
  EXPECT_EQ(order_of({2, 8, 0}, 100, {9, 19, 0}), kFlashFirst);
  // 2.9: CUDNN_VERSION >= 90900 on sm90/sm100.
  EXPECT_EQ(order_of({2, 9, 0}, 90, {9, 9, 0}), kCudnnFirst);
  EXPECT_EQ(order_of({2, 9, 0}, 90, {9, 8, 0}), kFlashFirst);
  EXPECT_EQ(order_of({2, 9, 0}, 103, {9, 19, 0}), kFlashFirst);
  // >= 2.10: runtime cuDNN > 91500 on sm90/sm100/sm103.
  EXPECT_EQ(order_of({2, 10, 0}, 103, {9, 15, 1}), kCudnnFirst);
  EXPECT_EQ(order_of({2, 11, 0}, 100, {9, 15, 0}), kFlashFirst);
  EXPECT_EQ(order_of({2, 11, 0}, 120, {9, 19, 0}), kFlashFirst);
}

TEST(PriorityTable, TheOlderFlashFirstOrderIsTheNewestRowWhereCudnnNeverLeads) {
  const PriorityRow& row = newest_flash_first_row();
  EXPECT_EQ(row.torch_range(), "2.5.1-2.8");
  EXPECT_EQ(row.last_release(), (Version{2, 8, 0}));
  EXPECT_EQ(order_text(row.order), "flash > efficient > math > cudnn");
}

TEST(PriorityTable, NoRulesSourceButTheTableSpellsAReleaseOfTheOrder) {
  // decide.cpp once held the order as if/else on Version{2, 9, 0}..., explain.cpp a
  // Version{2, 8, 0} and the prose "2.5.1-2.8" of the older order.
  const std::regex release(R"(Version\{\s*\d|2\.5\.1-2\.8)");
  for (const char* file : {"cpp/src/rules/decide.cpp", "cpp/src/rules/explain.cpp"})
    EXPECT_FALSE(std::regex_search(read_source(file), release)) << file;
}

}  // namespace
}  // namespace attnprof::rules
