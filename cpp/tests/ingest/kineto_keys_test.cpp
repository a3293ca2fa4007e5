// The Kineto vocabulary (attnprof/kineto_keys.h) is the one list of what ingest reads: the docs
// name every key and category spelling in it, and the category names printed are its spellings.
#include "attnprof/kineto_keys.h"
#include "ingest/trace_builder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace attnprof {
namespace {

std::string ingest_docs() {
  std::ifstream in(std::string(ATTNPROF_SOURCE_DIR) + "/docs/ingest.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(KinetoKeys, DocsIngestNamesEveryKeyIngestReads) {
  const std::string docs = ingest_docs();
  ASSERT_FALSE(docs.empty());
  for (std::string_view key : kineto::kAllKeys)
    EXPECT_NE(docs.find("`" + std::string(key) + "`"), std::string::npos) << "docs/ingest.md does not name `" << key << "`";
}

TEST(KinetoKeys, DocsIngestNamesEveryCategorySpelling) {
  const std::string docs = ingest_docs();
  for (const kineto::CategorySpelling& c : kineto::kCategories)
    EXPECT_NE(docs.find("`" + std::string(c.text) + "`"), std::string::npos) << c.text;
}

TEST(KinetoKeys, EverySpellingReadsAsItsCategoryAndTheNamePrintedIsASpelling) {
  for (const kineto::CategorySpelling& c : kineto::kCategories) {
    EXPECT_EQ(ingest::category_of(c.text), c.category) << c.text;
    EXPECT_EQ(ingest::category_of(category_name(c.category)), c.category) << c.text;
  }
  EXPECT_STREQ(category_name(Category::kCpuOp), "cpu_op");
  EXPECT_STREQ(category_name(Category::kRuntime), "cuda_runtime");
  EXPECT_EQ(ingest::category_of("cpu_instant_event"), Category::kOther);
  EXPECT_EQ(ingest::category_of("ac2g"), Category::kOther);
}

}  // namespace
}  // namespace attnprof
