// Workload what-if (issue 5 item 7): full attention vs a sliding window over a distribution
// of request lengths; docs/cost.md, "What-if".
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include "attnprof/cost.h"
#include "attnprof/io.h"
#include "attnprof/predict.h"

namespace attnprof {
namespace {

constexpr double kMaxExactDouble = 9007199254740992.0;  // 2^53

// 1 + 2 + ... + n
double triangle(double n) { return n * (n + 1) / 2; }

// sum over j = 1..m of min(cap, j)
double capped_sum(int64_t m, int64_t cap) {
  if (m <= 0 || cap <= 0) return 0;
  const double md = static_cast<double>(m), c = static_cast<double>(cap);
  return m <= cap ? triangle(md) : triangle(c) + (md - c) * c;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_number(std::string_view s, double& out) {
  s = trim(s);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// {"tokens": 812} or {"length": 812, "count": 3} (the first length key present counts).
bool read_json_line(std::string_view line, double& tokens, double& count) {
  const auto parsed = parse_json_input(line, "", "line");
  if (!parsed || !parsed->is_object()) return false;
  const nlohmann::json& j = *parsed;
  for (const char* key : {"tokens", "length", "num_tokens", "len", "prompt_tokens"})
    if (j.contains(key) && j[key].is_number()) {
      tokens = j[key].get<double>();
      break;
    }
  if (j.contains("count") && j["count"].is_number()) count = j["count"].get<double>();
  return true;
}

// "812" or "812,3" (a comma, semicolon or tab before the count).
bool read_text_line(std::string_view line, double& tokens, double& count) {
  const size_t comma = line.find_first_of(",;\t");
  if (!parse_number(line.substr(0, comma), tokens)) return false;
  return comma == std::string_view::npos || parse_number(line.substr(comma + 1), count);
}

// One line: "812", "812,3", {"tokens": 812} or {"length": 812, "count": 3}.
bool parse_line(std::string_view line, LengthBin& bin) {
  double tokens = 0, count = 1;
  if (!(line.front() == '{' ? read_json_line(line, tokens, count) : read_text_line(line, tokens, count))) return false;
  // Whole token counts up to 2^53, where doubles (the FLOP sums) stop counting exactly; from_chars
  // reads "inf" and "nan" too, and neither is a count.
  if (!(tokens >= 1 && tokens <= kMaxExactDouble) || !(count > 0 && count <= kMaxExactDouble)) return false;
  bin = LengthBin{static_cast<int64_t>(tokens), count};
  return true;
}

}  // namespace

Result<std::vector<LengthBin>> parse_length_distribution(std::string_view text) {
  std::vector<LengthBin> bins;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    LengthBin bin;
    if (parse_line(line, bin)) {
      bins.push_back(bin);
    } else if (!(bins.empty() && line_no == 1)) {  // a non-numeric first line is a header
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("line {}: '{}' is not a token count (N, N,count or {{\"tokens\": N}})",
                                    line_no, line.substr(0, 60)));
    }
  }
  if (bins.empty()) return make_error(ErrorCode::kEmptyInput, "the length distribution holds no request");
  return bins;
}

double visible_key_sum(int64_t length, int64_t window, int64_t global_tokens) {
  if (window <= 0 || window >= length) return triangle(static_cast<double>(length));
  return capped_sum(length, window) + capped_sum(length - window, global_tokens);
}

// The requests per power-of-two length bucket, shortest first.
std::vector<LengthBucket> length_buckets(const std::vector<LengthBin>& bins, int64_t window) {
  std::map<int64_t, double> requests;  // first length of the bucket -> requests
  for (const LengthBin& bin : bins) {
    int64_t first = 1;
    while (first <= bin.tokens / 2) first *= 2;
    requests[first] += bin.count;
  }
  std::vector<LengthBucket> out;
  for (const auto& [first, count] : requests) out.push_back({first, 2 * first - 1, count, 2 * first - 1 <= window});
  return out;
}

WhatIfSection what_if(const ModelConfig& m, const std::vector<LengthBin>& bins, int64_t window,
                      int64_t global_tokens, std::string_view dtype) {
  WhatIfSection w;
  w.model = m.name;
  w.window = window;
  w.global_tokens = global_tokens;
  // Per visible (query, key) pair: QK^T and PV, 2 FLOPs each per head dim, every head and layer.
  const double flops_per_pair = 2.0 * static_cast<double>(m.layers * m.heads) * static_cast<double>(2 * m.head_dim);
  const double kv_per_token =
      static_cast<double>(m.layers * kv_cache_bytes_per_token(m.kv_heads, m.head_dim, dtype_bytes(dtype)));
  double tokens = 0, covered = 0;
  for (const auto& bin : bins) {
    w.requests += bin.count;
    tokens += bin.count * static_cast<double>(bin.tokens);
    if (bin.tokens <= window) covered += bin.count;
    const double full_pairs = visible_key_sum(bin.tokens, 0, 0);
    const double window_pairs = visible_key_sum(bin.tokens, window, global_tokens);
    w.full_flops += bin.count * flops_per_pair * full_pairs;
    w.window_flops += bin.count * flops_per_pair * window_pairs;
    const double full_kv = kv_per_token * static_cast<double>(bin.tokens);
    // In doubles: window + global_tokens come from the command line and may sum past int64_t.
    const double kept_tokens =
        std::min(static_cast<double>(bin.tokens), static_cast<double>(window) + static_cast<double>(global_tokens));
    const double window_kv = kv_per_token * kept_tokens;
    w.full_kv_bytes += bin.count * full_kv;
    w.window_kv_bytes += bin.count * window_kv;
    w.max_full_kv_bytes = std::max(w.max_full_kv_bytes, full_kv);
    w.max_window_kv_bytes = std::max(w.max_window_kv_bytes, window_kv);
  }
  w.length_buckets = length_buckets(bins, window);
  w.mean_tokens = tokens / w.requests;
  w.covered_share = covered / w.requests;
  w.flops_saving = w.full_flops > 0 ? 1 - w.window_flops / w.full_flops : 0;
  w.memory_saving = w.full_kv_bytes > 0 ? 1 - w.window_kv_bytes / w.full_kv_bytes : 0;
  return w;
}

Result<std::vector<LengthBin>> lengths_argument(std::string_view argument) {
  const std::string path(argument);
  if (std::filesystem::is_regular_file(path)) {
    Result<std::string> text = read_text_file(path);
    if (!text) return text.error();
    Result<std::vector<LengthBin>> bins = parse_length_distribution(*text);
    if (!bins) return make_error(bins.error().code, path + ": " + bins.error().message);
    return bins;
  }
  std::vector<LengthBin> bins;
  for (size_t start = 0; start <= argument.size();) {
    const size_t comma = std::min(argument.find(',', start), argument.size());
    const std::string_view item = argument.substr(start, comma - start);
    int64_t tokens = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), tokens);
    if (ec != std::errc() || end != item.data() + item.size() || tokens <= 0)
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("lengths '{}': expected positive token counts (512,1024) or a file of them", argument));
    bins.push_back({tokens, 1});
    start = comma + 1;
  }
  return bins;
}

}  // namespace attnprof
