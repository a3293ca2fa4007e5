// Documents and their forms (document.h): tables in each form, Markdown as a page, and the
// one writer every command's outputs go through.
#include "attnprof/document.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "attnprof/cost_render.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "attnprof/report_view.h"  // cost_tables
#include "attnprof/text_format.h"
#include "attnprof/utf8.h"

namespace attnprof {
namespace {

constexpr std::array kForms = {
    DocumentFormWord{DocumentForm::kJson, "json", "--json", "as JSON"},
    DocumentFormWord{DocumentForm::kMarkdown, "markdown", "--md", "as Markdown"},
    DocumentFormWord{DocumentForm::kHtml, "html", "--html", "as a self-contained HTML page"},
    DocumentFormWord{DocumentForm::kCsv, "csv", "--csv", "as CSV"},
    DocumentFormWord{DocumentForm::kText, "text", "--text", "as the terminal shows it"},
};

// cmark's parser and rendered text, freed on every path.
struct CmarkParser {
  cmark_parser* parser;
  explicit CmarkParser(int options) : parser(cmark_parser_new(options)) {}
  ~CmarkParser() { cmark_parser_free(parser); }
};

std::string markdown_to_html(std::string_view markdown) {
  cmark_gfm_core_extensions_ensure_registered();
  CmarkParser p(CMARK_OPT_DEFAULT);
  for (const char* name : {"table", "autolink", "strikethrough"})
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name)) cmark_parser_attach_syntax_extension(p.parser, ext);
  cmark_parser_feed(p.parser, markdown.data(), markdown.size());
  cmark_node* root = cmark_parser_finish(p.parser);
  // Without CMARK_OPT_UNSAFE raw HTML and javascript: links in the Markdown are not passed on.
  char* html = cmark_render_html(root, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(p.parser));
  std::string out(html);
  free(html);  // allocated by cmark's default allocator (malloc)
  cmark_node_free(root);
  return out;
}

}  // namespace

std::span<const DocumentFormWord> document_forms() { return kForms; }

Result<DocumentForm> document_form_named(std::string_view name) {
  std::string names;
  for (const DocumentFormWord& w : kForms) {
    if (w.name == name) return w.form;
    names += (names.empty() ? "" : ", ") + std::string(w.name);
  }
  return make_error(ErrorCode::kInvalidArgument, fmt::format("unknown form '{}' ({})", name, names));
}

Result<std::string> Document::render(DocumentForm form) const {
  switch (form) {
    case DocumentForm::kText: return text();
    case DocumentForm::kJson: return json();
    case DocumentForm::kMarkdown: return markdown();
    case DocumentForm::kHtml: return html ? html() : markdown_page(title, markdown());
    case DocumentForm::kCsv:
      if (csv) return csv();
      return make_error(ErrorCode::kInvalidArgument, "this answer is not a table: no CSV form");
  }
  return make_error(ErrorCode::kInternal, "unknown document form");
}

std::string markdown_page(std::string_view title, std::string_view markdown) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n";
  page += "<meta name=\"generator\" content=\"attnprof " + html_escape(ATTNPROF_VERSION) + "\">\n";
  page += "<title>" + html_escape(title) + "</title>\n<style>" + std::string(dashboard_stylesheet()) + "</style>\n";
  page += "</head>\n<body>\n<header><h1>" + html_escape(title) + "</h1></header>\n<main class=\"document\">\n";
  page += markdown_to_html(sanitize_utf8(markdown));
  return page + "</main>\n</body>\n</html>\n";
}

Document table_document(Table table) {
  auto shared = std::make_shared<const Table>(std::move(table));
  Document doc;
  doc.title = shared->title;
  doc.text = [shared] { return render_cost_text({*shared}); };
  doc.markdown = [shared] { return render_cost_markdown({*shared}); };
  doc.csv = [shared] { return table_csv(*shared); };
  doc.json = [shared] { return table_json(*shared); };
  return doc;
}

Document report_document(const Report& report, DashboardOptions page) {
  Document doc;
  doc.title = "attnprof";
  doc.text = [&report] { return render_text(report); };
  doc.markdown = [&report] { return render_markdown(report); };
  doc.json = [&report] { return report_to_json(report); };
  doc.html = [&report, page = std::move(page)] { return render_html(std::vector<Report>{report}, page); };
  return doc;
}

Document explain_document(rules::ExplainAnswer answer) {
  auto a = std::make_shared<const rules::ExplainAnswer>(std::move(answer));
  Document doc;
  doc.title = "attnprof explain";
  doc.text = [a] { return rules::explain_text(*a); };
  doc.json = [a] { return rules::explain_json(*a); };
  doc.markdown = [a] { return rules::explain_markdown(*a); };
  doc.csv = [a] { return table_csv(a->verdicts); };
  return doc;
}

Document cost_document(const Report& report, std::string lead, DashboardOptions page) {
  auto tables = std::make_shared<const std::vector<Table>>(cost_tables(report));
  Document doc = report_document(report, std::move(page));  // its text and Markdown: the tables
  doc.text = [tables, lead] { return (lead.empty() ? "" : lead + "\n") + render_cost_text(*tables); };
  doc.markdown = [tables, lead] {
    return (lead.empty() ? "" : markdown_escape(lead) + "\n\n") + render_cost_markdown(*tables);
  };
  doc.csv = [tables] { return tables_csv(*tables); };
  return doc;
}

Status write_document(const Document& document, DocumentForm form, const std::string& path) {
  Result<std::string> content = document.render(form);
  if (!content) return content.error();
  if (path == "-") {
    std::fwrite(content->data(), 1, content->size(), stdout);
    return Ok{};
  }
  return write_file_atomic(path, *content);
}

}  // namespace attnprof
