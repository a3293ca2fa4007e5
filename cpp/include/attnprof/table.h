// A table as attnprof's answers hold it: a title, a header, rows of cells as printed, and notes
// below. The cost sections, `matrix`, `heads`, `explain` and every command's CSV use this one
// shape; the renderers lay it out (cost_render.h, document.h). Cells are plain text: each form
// escapes its own.
#pragma once

#include <string>
#include <vector>

namespace attnprof {

struct Table {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
};

// RFC 4180, header first, CRLF line ends; a field with a comma, quote or line break is quoted.
std::string table_csv(const Table& table);
// Several tables as one CSV: a first column "table" with each row's table title, then every
// table's columns, in the order first seen (a column that a row's table lacks is empty). No
// tables: the "table" header alone.
std::string tables_csv(const std::vector<Table>& tables);
// The header and rows as a Markdown pipe table, cells escaped (no title, no notes).
std::string table_markdown(const Table& table);
// {"title", "rows": [{header: cell, ...}], "notes": [...]}
std::string table_json(const Table& table);

}  // namespace attnprof
