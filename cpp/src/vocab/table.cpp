// A table as CSV and as JSON (table.h).
#include "attnprof/table.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attnprof/text_format.h"

namespace attnprof {
namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (const char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + csv_field(cells[i]);
  return line + "\r\n";
}

std::string markdown_row(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + markdown_escape(c) + " |";
  return line + "\n";
}

// Every table's columns, in the order first seen.
std::vector<std::string> union_header(const std::vector<Table>& tables) {
  std::vector<std::string> header;
  for (const Table& t : tables)
    for (const auto& column : t.header)
      if (std::find(header.begin(), header.end(), column) == header.end()) header.push_back(column);
  return header;
}

// `row` of `table` laid out under `header`, after its title.
std::vector<std::string> union_row(const Table& table, const std::vector<std::string>& row,
                                   const std::vector<std::string>& header) {
  std::vector<std::string> cells(header.size() + 1);
  cells[0] = table.title;
  for (size_t i = 0; i < table.header.size() && i < row.size(); ++i) {
    const auto at = std::find(header.begin(), header.end(), table.header[i]) - header.begin();
    cells[static_cast<size_t>(at) + 1] = row[i];
  }
  return cells;
}

}  // namespace

std::string tables_csv(const std::vector<Table>& tables) {
  const std::vector<std::string> header = union_header(tables);
  std::vector<std::string> first{"table"};
  first.insert(first.end(), header.begin(), header.end());
  std::string out = csv_row(first);
  for (const Table& t : tables)
    for (const auto& r : t.rows) out += csv_row(union_row(t, r, header));
  return out;
}

std::string table_markdown(const Table& table) {
  std::string out = markdown_row(table.header) + "|";
  for (size_t i = 0; i < table.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : table.rows) out += markdown_row(r);
  return out;
}

std::string table_csv(const Table& table) {
  std::string out = csv_row(table.header);
  for (const auto& r : table.rows) out += csv_row(r);
  return out;
}

std::string table_json(const Table& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : table.rows) {
    nlohmann::ordered_json row;
    for (size_t i = 0; i < table.header.size() && i < r.size(); ++i) row[table.header[i]] = r[i];
    rows.push_back(std::move(row));
  }
  nlohmann::ordered_json doc = {{"title", table.title}, {"rows", std::move(rows)}, {"notes", table.notes}};
  return doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace attnprof
