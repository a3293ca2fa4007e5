// PYTORCH_CUDA_ALLOC_CONF parsing and the size rules of the caching allocator
// (docs/cost.md, "Allocator simulation": c10/core/AllocatorConfig.cpp lexes the string into
// words and the separators , : [ ]; the same tokens and checks here, as values, not throws).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>

#include "attnprof/allocator_sim.h"

namespace attnprof {
namespace {

using namespace caching_allocator;
constexpr int kFirstIntervalLog2 = 20;  // the roundup intervals start at 1 MiB

std::vector<std::string> lex(std::string_view text) {
  std::vector<std::string> tokens;
  std::string word;
  for (char c : text) {
    if (c == ',' || c == ':' || c == '[' || c == ']') {
      if (!word.empty()) tokens.push_back(std::move(word));
      word.clear();
      tokens.emplace_back(1, c);
    } else if (c != ' ') {
      word += c;
    }
  }
  if (!word.empty()) tokens.push_back(std::move(word));
  return tokens;
}

Error bad(std::string_view what) {
  return make_error(ErrorCode::kInvalidArgument, fmt::format("PYTORCH_CUDA_ALLOC_CONF: {}", what));
}

template <typename T>
bool parse_number(const std::string& token, T& out) {
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), out);
  return ec == std::errc() && end == token.data() + token.size();
}

bool is_power_of_two(int64_t v) { return v > 0 && std::has_single_bit(static_cast<uint64_t>(v)); }

class ConfigParser {
 public:
  explicit ConfigParser(std::string_view text) : tokens_(lex(text)) {}

  Result<AllocatorConfig> run() {
    for (; i_ < tokens_.size(); ++i_) {
      const std::string key = tokens_[i_];
      if (auto e = expect(":", key); !e.empty()) return bad(e);
      ++i_;
      if (i_ >= tokens_.size()) return bad(fmt::format("{} has no value", key));
      if (auto e = option(key); !e.empty()) return bad(e);
      if (i_ + 1 < tokens_.size()) {
        if (auto e = expect(",", key); !e.empty()) return bad(e);
      }
    }
    return config_;
  }

 private:
  std::vector<std::string> tokens_;
  size_t i_ = 0;
  AllocatorConfig config_;

  // Advances over the separator `sep`; a message when it is not there.
  std::string expect(std::string_view sep, std::string_view key) {
    ++i_;
    if (i_ < tokens_.size() && tokens_[i_] == sep) return "";
    return fmt::format("expected '{}' after {}", sep, key);
  }

  std::string boolean(std::string_view key, bool& out) {
    const std::string& v = tokens_[i_];
    if (v != "True" && v != "False") return fmt::format("{} must be True or False, not '{}'", key, v);
    out = v == "True";
    return "";
  }

  // long: one case per PYTORCH_CUDA_ALLOC_CONF key PyTorch accepts, each with its own check
  std::string option(const std::string& key) {
    const std::string& v = tokens_[i_];
    bool ignored = false;
    if (key == "expandable_segments") return boolean(key, config_.expandable_segments);
    if (key == "max_split_size_mb" || key == "max_non_split_rounding_mb") {
      int64_t mb = 0;
      if (!parse_number(v, mb) || mb < kLargeBuffer / kMiB)
        return fmt::format("{} must be an integer >= {}, not '{}'", key, kLargeBuffer / kMiB, v);
      const int64_t bytes = mb > INT64_MAX / kMiB ? INT64_MAX : mb * kMiB;
      (key == "max_split_size_mb" ? config_.max_split_size : config_.max_non_split_rounding) = bytes;
      return "";
    }
    if (key == "garbage_collection_threshold") {
      double t = 0;
      if (!parse_number(v, t) || !(t > 0 && t < 1))
        return fmt::format("garbage_collection_threshold must be in (0, 1), not '{}'", v);
      config_.garbage_collection_threshold = t;
      return "";
    }
    if (key == "roundup_power2_divisions") return v == "[" ? division_list() : single_division(v);
    if (key == "release_lock_on_cudamalloc" || key == "release_lock_on_hipmalloc" ||
        key == "pinned_use_cuda_host_register" || key == "pinned_use_hip_host_register" ||
        key == "pinned_use_background_threads")
      return boolean(key, ignored);
    if (key == "pinned_num_register_threads") {
      int64_t n = 0;
      return parse_number(v, n) && is_power_of_two(n) ? "" : fmt::format("{} must be a power of 2, not '{}'", key, v);
    }
    if (key == "backend") {
      if (v == "native") return "";
      if (v == "cudaMallocAsync" || v == "hipMallocAsync")
        return fmt::format("backend:{} is the driver's allocator, which this simulation does not model", v);
      return fmt::format("backend must be native or cudaMallocAsync, not '{}'", v);
    }
    return fmt::format("unrecognized option '{}'", key);
  }

  std::string single_division(const std::string& v) {
    int64_t d = 0;
    if (!parse_number(v, d) || !is_power_of_two(d))
      return fmt::format("roundup_power2_divisions must be a power of 2, not '{}'", v);
    std::fill(config_.roundup_power2_divisions.begin(), config_.roundup_power2_divisions.end(), d);
    return "";
  }

  // One "<MiB>:<d>" entry of the list: `d` divisions for the interval (a power of 2); the
  // first entry also sets every smaller interval. `last` becomes its index.
  std::string interval_divisions(const std::string& interval, int64_t d, bool& first, size_t& last) {
    auto& table = config_.roundup_power2_divisions;
    int64_t mb = 0;
    if (!parse_number(interval, mb) || !is_power_of_two(mb))
      return fmt::format("roundup_power2_divisions: interval '{}' is not a power of 2", interval);
    const size_t index = std::min(static_cast<size_t>(std::bit_width(static_cast<uint64_t>(mb)) - 1), table.size() - 1);
    if (first) std::fill(table.begin(), table.begin() + static_cast<std::ptrdiff_t>(index), d);
    first = false;
    table[index] = d;
    last = index;
    return "";
  }

  // "[256:1,512:2,>:4]": interval (MiB, a power of 2) -> divisions; the first entry also
  // covers every smaller interval, ">" every interval from the last one named.
  std::string division_list() {
    auto& table = config_.roundup_power2_divisions;
    size_t last = 0;
    bool first = true;
    while (++i_ < tokens_.size() && tokens_[i_] != "]") {
      const std::string interval = tokens_[i_];
      if (auto e = expect(":", interval); !e.empty()) return e;
      if (++i_ >= tokens_.size()) return "roundup_power2_divisions: missing value";
      int64_t d = 0;
      if (!parse_number(tokens_[i_], d) || (d != 0 && !is_power_of_two(d)))
        return fmt::format("roundup_power2_divisions: '{}' is not 0 or a power of 2", tokens_[i_]);
      if (interval == ">") {
        std::fill(table.begin() + static_cast<std::ptrdiff_t>(last), table.end(), d);
      } else if (auto e = interval_divisions(interval, d, first, last); !e.empty()) {
        return e;
      }
      if (i_ + 1 < tokens_.size() && tokens_[i_ + 1] != "]") {
        if (auto e = expect(",", "a roundup_power2_divisions entry"); !e.empty()) return e;
      }
    }
    if (i_ >= tokens_.size()) return "roundup_power2_divisions: missing ']'";
    return "";
  }
};

int64_t divisions_for(const AllocatorConfig& config, int64_t bytes) {
  const int log_size = std::bit_width(static_cast<uint64_t>(bytes)) - 1;
  const int last = static_cast<int>(config.roundup_power2_divisions.size()) - 1;
  const int index = std::clamp(log_size - kFirstIntervalLog2, 0, last);
  return config.roundup_power2_divisions[static_cast<size_t>(index)];
}

// The next multiple of (floor power of two / divisions) at or above `bytes`.
int64_t next_power2_division(int64_t bytes, int64_t divisions) {
  const auto u = static_cast<uint64_t>(bytes);
  if (std::has_single_bit(u)) return bytes;
  const uint64_t floor = std::bit_floor(u);
  const uint64_t step = floor >> (std::bit_width(static_cast<uint64_t>(divisions)) - 1);
  if (step == 0) return static_cast<int64_t>(floor << 1);
  const uint64_t down = u & ~(step - 1);
  return static_cast<int64_t>(down == u ? u : down + step);
}

}  // namespace

Result<AllocatorConfig> parse_allocator_config(std::string_view text) { return ConfigParser(text).run(); }

int64_t allocator_round_size(const AllocatorConfig& config, int64_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  const int64_t divisions = divisions_for(config, bytes);
  if (divisions > 1 && bytes > kMinBlockSize * divisions) return next_power2_division(bytes, divisions);
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

int64_t allocator_segment_size(int64_t rounded_bytes) {
  if (rounded_bytes <= kSmallSize) return kSmallBuffer;
  if (rounded_bytes < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded_bytes + kRoundLarge - 1) / kRoundLarge);
}

}  // namespace attnprof
