// What per-rank trace file names spell: rank, tensor/pipeline rank, profiling stage, host.
#include <algorithm>
#include <cctype>

#include "attnprof/fleet.h"

namespace attnprof {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower_case(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// The number right after `key` (lower case) in `lower`, skipping '_' / '-' between them; -1 if
// none. With `whole_word`, key must start the name or follow a separator ("-tp-3", not "stp-3").
int64_t number_after(std::string_view lower, std::string_view key, bool whole_word) {
  for (size_t at = lower.find(key); at != std::string::npos; at = lower.find(key, at + 1)) {
    if (whole_word && at > 0 && std::isalnum(static_cast<unsigned char>(lower[at - 1]))) continue;
    size_t i = at + key.size();
    while (i < lower.size() && (lower[i] == '_' || lower[i] == '-')) ++i;
    if (i >= lower.size() || !is_digit(lower[i])) continue;
    int64_t n = 0;
    for (; i < lower.size() && is_digit(lower[i]); ++i) n = n * 10 + (lower[i] - '0');
    return n;
  }
  return -1;
}

}  // namespace

NameRank rank_of_file_name(std::string_view file_name) {
  const std::string lower = lower_case(file_name);
  NameRank r;
  r.rank = number_after(lower, "rank", false);
  r.tp = number_after(lower, "tp", true);
  r.pp = std::max<int64_t>(0, number_after(lower, "pp", true));
  return r;
}

std::string stage_of_file_name(std::string_view file_name) {
  std::string stem = lower_case(file_name.substr(0, file_name.find(".json")));
  if (ends_with(stem, ".trace")) stem.resize(stem.size() - std::string_view(".trace").size());
  const size_t dash = stem.rfind('-');
  if (dash == std::string::npos) return "";
  std::string_view last = std::string_view(stem).substr(dash + 1);
  // ForwardMode.EXTEND is str() of the enum in older releases, EXTEND its .name in newer ones.
  constexpr std::string_view kEnum = "forwardmode.";
  if (last.starts_with(kEnum)) last.remove_prefix(kEnum.size());
  if (last == "prefill" || last == "extend") return "prefill";
  if (last == "decode") return "decode";
  return "";
}

std::string host_of_file_name(std::string_view file_name) {
  // "<host>_<pid>.<ms>.pt.trace.json[.gz]": the last '_' before the first '.' ends the host.
  const size_t dot = file_name.find('.');
  if (dot == std::string_view::npos || file_name.find(".pt.trace.json") == std::string_view::npos) return "";
  const std::string_view worker = file_name.substr(0, dot);
  const size_t underscore = worker.rfind('_');
  if (underscore == std::string_view::npos || underscore == 0 || underscore + 1 == worker.size()) return "";
  const std::string_view pid = worker.substr(underscore + 1);
  if (!std::all_of(pid.begin(), pid.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return "";
  const std::string_view ms = file_name.substr(dot + 1, file_name.find('.', dot + 1) - dot - 1);
  if (ms.empty() || !std::all_of(ms.begin(), ms.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return "";
  return std::string(worker.substr(0, underscore));
}

}  // namespace attnprof
