// --kernels FILE: kernel and op names a user adds to the two catalogs (docs/cost.md, "Kernels
// and ops of your own"), JSON or TOML. Every field is checked; the first bad one is a
// one-line error naming the file and the field ("kernels.json: kernels[0].match must be ...").
#include "user_document.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "attnprof/analyze.h"
#include "attnprof/io.h"
#include "attnprof/vocabulary.h"

namespace attnprof {
namespace {

using Json = nlohmann::json;
using Words = std::vector<std::string_view>;

constexpr std::array<std::string_view, 2> kTopKeys = {"kernels", "ops"};
constexpr std::array<std::string_view, 10> kKernelKeys = {"pattern", "match",     "priority", "kind", "backend",
                                                          "library", "vendor",    "direction", "part", "phase"};
constexpr std::array<std::string_view, 8> kOpKeys = {"name",      "match", "backend", "library",
                                                     "direction", "fused", "layout",  "args"};
// The op argument positions a user entry may give: AttentionOp's int8_t fields, by name.
struct ArgSlot {
  std::string_view name;
  int8_t AttentionOp::*slot;
};
constexpr std::array<ArgSlot, 14> kArgSlots = {{
    {"query", &AttentionOp::query},         {"key", &AttentionOp::key},
    {"value", &AttentionOp::value},         {"mask", &AttentionOp::mask},
    {"dropout", &AttentionOp::dropout},     {"causal", &AttentionOp::causal},
    {"scale", &AttentionOp::scale},         {"gqa", &AttentionOp::gqa},
    {"offsets", &AttentionOp::offsets},     {"max_seqlen_q", &AttentionOp::max_seqlen_q},
    {"max_seqlen_k", &AttentionOp::max_seqlen_k}, {"heads", &AttentionOp::heads},
    {"seq_lens", &AttentionOp::seq_lens},   {"block_table", &AttentionOp::block_table},
}};
constexpr int kMaxArgPosition = 127;  // AttentionOp's positions are int8_t
constexpr int kMaxPriority = 1000;

std::string joined(const Words& words) {
  std::string out;
  for (std::string_view w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

template <size_t N>
Words words_of(const std::array<std::string_view, N>& a) {
  return Words(a.begin(), a.end());
}

Error bad(const std::string& where, std::string_view message) {
  return make_error(ErrorCode::kInvalidArgument, fmt::format("{} {}", where, message));
}

// One entry of the file and the text that names it in errors ("kernels.json: kernels[0]").
struct Entry {
  const Json& j;
  std::string where;

  std::string field(std::string_view name) const { return fmt::format("{}.{}", where, name); }

  Status known_keys(const Words& keys) const {
    if (!j.is_object()) return bad(where, "must be an object");
    for (const auto& [key, value] : j.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        return bad(field(key), fmt::format("is not a field (known: {})", joined(keys)));
    return Ok{};
  }

  // A string field; `fallback` when absent, an error when absent and there is none.
  Result<std::string> text(std::string_view name, std::optional<std::string_view> fallback) const {
    if (!j.contains(name)) {
      if (!fallback) return bad(field(name), "is required");
      return std::string(*fallback);
    }
    if (!j[name].is_string()) return bad(field(name), fmt::format("must be a string, got {}", j[name].dump()));
    return j[name].get<std::string>();
  }

  Result<std::string> nonempty(std::string_view name) const {
    auto t = text(name, std::nullopt);
    if (t && t->empty()) return bad(field(name), "must not be empty");
    return t;
  }

  // One of `words` (as spelt), `fallback` when absent.
  Result<std::string> word(std::string_view name, const Words& words, std::optional<std::string_view> fallback) const {
    auto t = text(name, fallback);
    if (!t) return t;
    if (std::find(words.begin(), words.end(), *t) == words.end())
      return bad(field(name), fmt::format("must be one of {}, got \"{}\"", joined(words), *t));
    return t;
  }

  // An integer in [lo, hi], `fallback` when absent.
  Result<int> integer(std::string_view name, int lo, int hi, int fallback) const {
    if (!j.contains(name)) return fallback;
    return integer_of(j[name], field(name), lo, hi);
  }

  static Result<int> integer_of(const Json& v, const std::string& what, int lo, int hi) {
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      return bad(what, fmt::format("must be an integer from {} to {}, got {}", lo, hi, v.dump()));
    return static_cast<int>(v.get<int64_t>());
  }

  Result<bool> flag(std::string_view name, bool fallback) const {
    if (!j.contains(name)) return fallback;
    if (!j[name].is_boolean()) return bad(field(name), fmt::format("must be true or false, got {}", j[name].dump()));
    return j[name].get<bool>();
  }
};

Words backend_names() {
  Words names;
  for (const BackendWord& w : kBackendWords) names.push_back(w.name);
  return names;
}

Words kernel_kind_names() {
  Words names;
  for (int k = 0; k <= static_cast<int>(KernelKind::kOther); ++k)
    names.push_back(kernel_kind_name(static_cast<KernelKind>(k)));
  return names;
}

KernelKind kernel_kind_of(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(KernelKind::kOther); ++k)
    if (name == kernel_kind_name(static_cast<KernelKind>(k))) return static_cast<KernelKind>(k);
  return KernelKind::kOther;
}

MatchKind match_of(std::string_view name) {
  return name == "exact" ? MatchKind::kExact : name == "prefix" ? MatchKind::kPrefix : MatchKind::kContains;
}

KernelPart part_of(std::string_view name) {
  return name == "before" ? KernelPart::kBefore : name == "after" ? KernelPart::kAfter : KernelPart::kMain;
}

TensorLayout layout_of(std::string_view name) {
  if (name == "BSHD") return TensorLayout::kBSHD;
  if (name == "THD") return TensorLayout::kTHD;
  if (name == "paged") return TensorLayout::kPaged;
  if (name == "BSE") return TensorLayout::kBSE;
  return TensorLayout::kBHSD;
}

// The strings the entries view: a deque keeps each one where it is as more are added.
class Names {
 public:
  std::string_view keep(std::string s) { return names_->emplace_back(std::move(s)); }
  std::shared_ptr<const std::deque<std::string>> owned() const { return names_; }

 private:
  std::shared_ptr<std::deque<std::string>> names_ = std::make_shared<std::deque<std::string>>();
};

// Evaluates a Result-returning expression into `var`, or returns its error.
#define ATTNPROF_TRY_FIELD(var, expr) \
  auto var = (expr);                  \
  if (!var) return var.error()

Result<KernelPattern> kernel_entry(const Entry& e, Names& names) {
  if (Status s = e.known_keys(words_of(kKernelKeys)); !s) return s.error();
  ATTNPROF_TRY_FIELD(pattern, e.nonempty("pattern"));
  ATTNPROF_TRY_FIELD(match, e.word("match", {"contains", "prefix", "exact"}, "contains"));
  ATTNPROF_TRY_FIELD(priority, e.integer("priority", 0, kMaxPriority, kUserKernelPriority));
  ATTNPROF_TRY_FIELD(kind, e.word("kind", kernel_kind_names(), "fused_attention"));
  // Only attention kernels have a backend (KernelPattern::backend is "" for the others).
  const bool attention = *kind == "fused_attention";
  if (!attention && e.j.contains("backend")) return bad(e.field("backend"), "is for kind fused_attention only");
  ATTNPROF_TRY_FIELD(backend, attention ? e.word("backend", backend_names(), backend::kExternal) : Result<std::string>(std::string()));
  ATTNPROF_TRY_FIELD(library, e.nonempty("library"));
  ATTNPROF_TRY_FIELD(vendor, e.word("vendor", {"nvidia", "amd", "any"}, "any"));
  ATTNPROF_TRY_FIELD(direction, e.word("direction", {direction::kForward, direction::kBackward, "any"}, attention ? direction::kForward : "any"));
  ATTNPROF_TRY_FIELD(part, e.word("part", {"main", "before", "after"}, "main"));
  ATTNPROF_TRY_FIELD(phase, e.word("phase", {"", phase::kPrefill, phase::kDecode}, ""));
  KernelPattern p{names.keep(*pattern), match_of(*match), *priority, kernel_kind_of(*kind), names.keep(*backend),
                  names.keep(*library), names.keep(*vendor), names.keep(*direction == "any" ? "" : *direction),
                  part_of(*part), names.keep(*phase)};
  return p;
}

// The op's argument positions: query, key and value are required (they give the shape).
Status read_args(const Entry& e, AttentionOp& op) {
  if (!e.j.contains("args") || !e.j["args"].is_object())
    return bad(e.field("args"), "is required: an object of argument positions {\"query\": 0, \"key\": 1, \"value\": 2}");
  Words known;
  for (const ArgSlot& a : kArgSlots) known.push_back(a.name);
  const Entry args{e.j["args"], e.field("args")};
  if (Status s = args.known_keys(known); !s) return s;
  for (const ArgSlot& a : kArgSlots) {
    if (!args.j.contains(a.name)) {
      if (a.name == "query" || a.name == "key" || a.name == "value") return bad(args.field(a.name), "is required");
      continue;
    }
    auto position = Entry::integer_of(args.j[a.name], args.field(a.name), 0, kMaxArgPosition);
    if (!position) return position.error();
    op.*a.slot = static_cast<int8_t>(*position);
  }
  return Ok{};
}

Result<AttentionOp> op_entry(const Entry& e, Names& names) {
  if (Status s = e.known_keys(words_of(kOpKeys)); !s) return s.error();
  ATTNPROF_TRY_FIELD(name, e.nonempty("name"));
  ATTNPROF_TRY_FIELD(match, e.word("match", {"exact", "prefix"}, "exact"));
  ATTNPROF_TRY_FIELD(backend, e.word("backend", backend_names(), backend::kExternal));
  ATTNPROF_TRY_FIELD(library, e.text("library", ""));
  ATTNPROF_TRY_FIELD(direction, e.word("direction", {direction::kForward, direction::kBackward}, direction::kForward));
  ATTNPROF_TRY_FIELD(fused, e.flag("fused", true));
  ATTNPROF_TRY_FIELD(layout, e.word("layout", {"BHSD", "BSHD", "THD", "paged", "BSE"}, std::nullopt));
  AttentionOp op{names.keep(*name), match_of(*match), OpRole::kExternal, names.keep(*backend), names.keep(*direction),
                 *fused, layout_of(*layout), -1, -1, -1, -1, -1, -1, -1, -1};
  op.library = names.keep(*library);
  if (Status s = read_args(e, op); !s) return s.error();
  return op;
}

#undef ATTNPROF_TRY_FIELD

// Reads each entry of the array `key` with `read`, appending to `out`.
template <typename T, typename Read>
Status read_entries(const Json& doc, const std::string& path, std::string_view key, Read read, std::vector<T>& out) {
  if (!doc.contains(key)) return Ok{};
  if (!doc[key].is_array()) return bad(fmt::format("{}: {}", path, key), "must be an array of entries");
  for (size_t i = 0; i < doc[key].size(); ++i) {
    auto entry = read(Entry{doc[key][i], fmt::format("{}: {}[{}]", path, key, i)});
    if (!entry) return entry.error();
    out.push_back(*entry);
  }
  return Ok{};
}

}  // namespace

Result<CatalogExtension> parse_catalog_extension(std::string_view text, const std::string& path) {
  auto doc = parse_user_document(text, path, "kernels file", is_toml_path(path));
  if (!doc) return doc.error();
  if (!doc->is_object()) return bad(path + ":", "a kernels file is an object {\"kernels\": [...], \"ops\": [...]}");
  for (const auto& [key, value] : doc->items())
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end())
      return bad(path + ":", fmt::format("unknown field \"{}\" (known: kernels, ops)", key));
  Names names;
  CatalogExtension extension;
  extension.file = path;
  auto kernel = [&](const Entry& e) { return kernel_entry(e, names); };
  auto op = [&](const Entry& e) { return op_entry(e, names); };
  if (Status s = read_entries(*doc, path, "kernels", kernel, extension.kernels); !s) return s.error();
  if (Status s = read_entries(*doc, path, "ops", op, extension.ops); !s) return s.error();
  if (extension.kernels.empty() && extension.ops.empty()) return bad(path + ":", "has no kernels and no ops: nothing to add");
  extension.names = names.owned();
  return extension;
}

Result<CatalogExtension> load_catalog_extension(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_catalog_extension(*text, path);
}

}  // namespace attnprof
