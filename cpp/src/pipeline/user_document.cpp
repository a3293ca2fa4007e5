// JSON or TOML user files (user_document.h): toml++ (Debian libtomlplusplus-dev) parses TOML
// and writes the same data as JSON, which parse_json_input then reads as every JSON file is read.
#include "user_document.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <toml++/toml.h>

#include "attnprof/io.h"

namespace attnprof {

bool is_toml_path(std::string_view path) {
  constexpr std::string_view kExtension = ".toml";
  if (path.size() < kExtension.size()) return false;
  const std::string_view tail = path.substr(path.size() - kExtension.size());
  return std::equal(tail.begin(), tail.end(), kExtension.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

Result<nlohmann::json> parse_user_document(std::string_view text, const std::string& path, std::string_view what,
                                           bool toml) {
  if (!toml) return parse_json_input(text, path, what);
  std::ostringstream json;
  try {  // toml++ reports a syntax error by throwing (its library is built with exceptions)
    json << toml::json_formatter{toml::parse(text, path)};
  } catch (const toml::parse_error& e) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: not valid TOML: {} (line {}, column {})", path, e.description(),
                                  e.source().begin.line, e.source().begin.column));
  }
  return parse_json_input(json.str(), path, what);
}

Result<nlohmann::json> load_user_document(const std::string& path, std::string_view what) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_user_document(*text, path, what, is_toml_path(path));
}

}  // namespace attnprof
