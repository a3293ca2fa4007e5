// Documents (document.h): a table in each form, Markdown as a page, form names, and the one
// writer the commands' outputs go through.
#include "attnprof/document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

namespace attnprof {
namespace {

Table sample() { return Table{"Kernels", {"GPU", "note"}, {{"H100", "a,b"}, {"L4", "say \"hi\"\nthere"}}, {"one note"}}; }

TEST(TableForms, CsvQuotesFieldsWithCommasQuotesAndLineBreaksOnly) {
  EXPECT_EQ(table_csv(sample()), "GPU,note\r\nH100,\"a,b\"\r\nL4,\"say \"\"hi\"\"\nthere\"\r\n");
}

TEST(TableForms, JsonKeysEachRowByTheHeaderAndKeepsTitleAndNotes) {
  const auto doc = nlohmann::json::parse(table_json(sample()));
  EXPECT_EQ(doc["title"], "Kernels");
  ASSERT_EQ(doc["rows"].size(), 2u);
  EXPECT_EQ(doc["rows"][0]["GPU"], "H100");
  EXPECT_EQ(doc["rows"][1]["note"], "say \"hi\"\nthere");
  EXPECT_EQ(doc["notes"][0], "one note");
}

TEST(TableForms, SeveralTablesShareOneCsvUnderATableColumnWithEveryColumnOnce) {
  const Table fits{"Scaling: flash", {"S", "time"}, {{"512", "1.0"}, {"1024", "2.5"}}, {"a note"}};
  const Table advice{"Advice", {"shape", "time"}, {{"B=1", "3.0"}}, {}};
  // Columns: table, then S and time (first table), then shape (the second adds only it).
  EXPECT_EQ(tables_csv({fits, advice}),
            "table,S,time,shape\r\nScaling: flash,512,1.0,\r\nScaling: flash,1024,2.5,\r\nAdvice,,3.0,B=1\r\n");
  EXPECT_EQ(tables_csv({}), "table\r\n");
}

TEST(TableForms, MarkdownTableEscapesEveryCellAndLeavesTitleAndNotesOut) {
  const Table t{"Title", {"a|b", "c"}, {{"x_y", "<z>"}}, {"note"}};
  EXPECT_EQ(table_markdown(t), "| a\\|b | c |\n|---|---|\n| x\\_y | &lt;z> |\n");
}

TEST(TableForms, TableDocumentHasEveryFormIncludingCsv) {
  const Document doc = table_document(sample());
  for (const DocumentFormWord& w : document_forms()) {
    ASSERT_TRUE(doc.has(w.form)) << w.name;
    EXPECT_TRUE(doc.render(w.form).ok()) << w.name;
  }
  EXPECT_NE(doc.render(DocumentForm::kMarkdown)->find("| H100 | a,b |"), std::string::npos);
  EXPECT_NE(doc.render(DocumentForm::kText)->find("H100"), std::string::npos);
}

TEST(DocumentForms, CsvOfADocumentWithoutATableIsAnErrorNotAnEmptyFile) {
  Document doc;
  doc.text = doc.json = doc.markdown = [] { return std::string("x"); };
  EXPECT_FALSE(doc.has(DocumentForm::kCsv));
  EXPECT_FALSE(doc.render(DocumentForm::kCsv).ok());
}

TEST(DocumentForms, NamesResolveAndAnUnknownNameListsTheKnownOnes) {
  EXPECT_EQ(*document_form_named("markdown"), DocumentForm::kMarkdown);
  auto bad = document_form_named("pdf");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("json, markdown, html, csv, text"), std::string::npos) << bad.error().message;
}

TEST(MarkdownPage, RendersTablesAndDropsRawHtmlAndScript) {
  const std::string page = markdown_page("t <b>", "| a | b |\n|---|---|\n| 1 | 2 |\n\n<script>alert(1)</script>\n");
  EXPECT_NE(page.find("<table>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td>1</td>"), std::string::npos) << page;
  EXPECT_EQ(page.find("<script"), std::string::npos) << page;
  EXPECT_NE(page.find("<title>t &lt;b&gt;</title>"), std::string::npos);
}

TEST(WriteDocument, WritesTheFormToAFileAndLeavesNoFileOnFailure) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnprof_doc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const Document doc = table_document(sample());
  ASSERT_TRUE(write_document(doc, DocumentForm::kCsv, (dir / "t.csv").string()).ok());
  std::ifstream in(dir / "t.csv");
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), table_csv(sample()));
  Document no_table;
  no_table.text = no_table.json = no_table.markdown = [] { return std::string("x"); };
  EXPECT_FALSE(write_document(no_table, DocumentForm::kCsv, (dir / "none.csv").string()).ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "none.csv"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attnprof
