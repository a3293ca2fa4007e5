// A table as attnprof's answers hold it: a title, a header, rows of cells as printed, and notes
// below. The cost sections, `matrix` and every command's CSV use this one shape; the renderers
// lay it out (cost_render.h, document.h).
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
// {"title", "rows": [{header: cell, ...}], "notes": [...]}
std::string table_json(const Table& table);

}  // namespace attnprof
