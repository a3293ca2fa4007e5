// A table as CSV and as JSON (table.h).
#include "attnprof/table.h"

#include <nlohmann/json.hpp>

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

}  // namespace

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
