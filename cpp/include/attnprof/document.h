// What one command answers, in every form it can be written in. A command whose answer is a
// Report (analyze, diff, scale, ...) builds its Document from the Report (report_document); a
// command with a document type of its own (explain's decision, matrix's table) has one here. The
// CSV of a document is the table its Markdown shows, built once for every form. Every
// front end writes any form the same way: the CLI's --json/--md/--html/--csv/--text FILE
// (cpp/cli/outputs.h) and the binding's document texts.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/dashboard.h"
#include "attnprof/error.h"
#include "attnprof/explain_input.h"
#include "attnprof/report.h"
#include "attnprof/table.h"

namespace attnprof {

enum class DocumentForm { kText, kJson, kMarkdown, kHtml, kCsv };

// One row per form: its name (the binding's), the CLI flag that writes it, and the words its
// help uses.
struct DocumentFormWord {
  DocumentForm form;
  std::string_view name;  // "markdown"
  std::string_view flag;  // "--md"
  std::string_view as;    // "as Markdown": "write <what> as Markdown"
};
std::span<const DocumentFormWord> document_forms();
// The form named `name` ("json", "markdown", ...); the error lists the names there are.
Result<DocumentForm> document_form_named(std::string_view name);


struct Document {
  std::string title;                                  // the HTML page's title
  std::function<std::string()> text, json, markdown;  // every document has these three
  std::function<std::string()> html;                  // empty: the Markdown as a page (markdown_page)
  std::function<std::string()> csv;                   // empty: no table fits this document

  bool has(DocumentForm form) const { return form != DocumentForm::kCsv || static_cast<bool>(csv); }
  // The form's text; an error only for CSV of a document without a table.
  Result<std::string> render(DocumentForm form) const;
};

// A self-contained HTML page (no network, the dashboard's stylesheet) of a Markdown text,
// converted by cmark; raw HTML in the Markdown is not passed through.
std::string markdown_page(std::string_view title, std::string_view markdown);

// A table's document (table.h): text and Markdown laid out as the cost sections are
// (cost_render.h), CSV and JSON as table.h writes them.
Document table_document(Table table);

// `attnprof explain`'s answer (rules::explain_request): text, JSON and Markdown from the rules
// stage, CSV = its verdicts table. The CLI and attnprof.explain both write this one.
Document explain_document(rules::ExplainAnswer answer);

// A Report's document: JSON = the Report (docs/report-schema.md), HTML = the dashboard with
// `page.sections`, text and Markdown = the reports of every section it holds (render_text,
// render_markdown). `report` must outlive the document.
Document report_document(const Report& report, DashboardOptions page);

// The document of an answer that is the cost tables of a Report (`scale`, `predict`, `whatif`):
// the tables are built once (cost_tables), the text and Markdown lay them out under `lead` (a
// line above them; "" = none) and the CSV is all of them (tables_csv). JSON and HTML as
// report_document.
Document cost_document(const Report& report, std::string lead, DashboardOptions page);

// Writes one form to `path` ("-" = stdout) atomically: no partial file on failure.
Status write_document(const Document& document, DocumentForm form, const std::string& path);

}  // namespace attnprof
