// parse_json_input: one SAX pass finds what nlohmann's DOM parser accepts silently (a key
// given twice keeps only its last value) or cannot bound (nesting depth), then the DOM parse.
#include "attnprof/json_input.h"

#include <fmt/format.h>

#include <set>
#include <vector>

namespace attnprof {
namespace {

using nlohmann::json;

// "/calls/3/id" for the JSON pointer of the value being read (RFC 6901 escapes).
struct Frame {
  bool object = false;
  std::set<std::string> keys;
  std::string key;
  size_t index = 0;
};

std::string escape_pointer_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

class InputChecker : public nlohmann::json_sax<json> {
 public:
  std::string problem;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      f.key = k;
      problem = fmt::format("has a duplicate key {}", pointer());
      return false;
    }
    f.key = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) override {
    problem = fmt::format("is not valid JSON (byte {})", position);
    return false;
  }

 private:
  std::vector<Frame> stack_;

  std::string pointer() const {
    std::string out;
    for (const Frame& f : stack_) out += "/" + (f.object ? escape_pointer_token(f.key) : std::to_string(f.index));
    return out.empty() ? "/" : out;
  }
  // A value inside an array moves the array's index on once it is complete.
  bool value() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  bool open(bool object) {
    if (stack_.size() >= static_cast<size_t>(kMaxJsonInputDepth)) {
      problem = fmt::format("nests deeper than {} levels at {}", kMaxJsonInputDepth, pointer());
      return false;
    }
    Frame f;
    f.object = object;
    stack_.push_back(std::move(f));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return value();
  }
};

std::string prefixed(const std::string& label, std::string_view what, const std::string& problem) {
  return label.empty() ? fmt::format("{} {}", what, problem) : fmt::format("{}: {} {}", label, what, problem);
}

}  // namespace

Result<json> parse_json_input(std::string_view text, const std::string& label, std::string_view what) {
  InputChecker checker;
  if (!json::sax_parse(text, &checker, json::input_format_t::json, /*strict=*/true))
    return make_error(ErrorCode::kMalformedJson,
                      prefixed(label, what, checker.problem.empty() ? "is not valid JSON" : checker.problem));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return make_error(ErrorCode::kMalformedJson, prefixed(label, what, "is not valid JSON"));
  return doc;
}

std::string json_error_text(const nlohmann::json::exception& e) {
  std::string_view text = e.what();
  if (text.starts_with("[json.exception.")) {
    const size_t close = text.find("] ");
    if (close != std::string_view::npos) text.remove_prefix(close + 2);
  }
  // JSON_DIAGNOSTICS puts the value's path first: "(/calls/0/id) type must be number, ...".
  if (text.starts_with("(")) {
    const size_t close = text.find(") ");
    if (close != std::string_view::npos)
      return fmt::format("field {}: {}", text.substr(1, close - 1), text.substr(close + 2));
  }
  return std::string(text);
}

}  // namespace attnprof
