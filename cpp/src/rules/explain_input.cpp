// The readers of `attnprof explain` (explain_input.h): every bad value is an Error naming the
// argument, or the line and field of a batch.
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include "attnprof/explain_input.h"
#include "attnprof/vocabulary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <span>
#include <vector>

namespace attnprof::rules {
namespace {

Error bad(std::string message) { return make_error(ErrorCode::kInvalidArgument, std::move(message)); }

template <typename T>
Result<T> field(const nlohmann::json& row, const char* key, T fallback, size_t line) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    return bad(fmt::format("line {}: {}", line, json_error_text(e)));
  }
}

// A row's "device": cpu, or cuda on the GPU of --arch.
Result<Env> row_env(const std::string& device, const Env& base, size_t line) {
  Env env = base;
  if (device == "cpu") {
    env.device = {DeviceKind::kCpu, 0, ""};
    env.cudnn = {};
  } else if (device != "cuda") {
    return bad(fmt::format("line {}: device '{}': expected cuda or cpu", line, device));
  } else if (env.device.kind == DeviceKind::kCpu) {
    return bad(fmt::format("line {}: a cuda row needs a GPU --arch (sm90, gfx942, ...)", line));
  }
  return env;
}

#define ATTNPROF_FIELD(var, type, key, fallback)       \
  auto var##_r = field<type>(row, key, fallback, line); \
  if (!var##_r) return var##_r.error();                 \
  const type var = *var##_r

// long: one line per field of a batch row, read then checked in the order the schema lists them
Result<std::pair<SdpaInput, Env>> row_input(const nlohmann::json& row, const Env& base, size_t line) {
  if (!row.is_object()) return bad(fmt::format("line {}: expected a JSON object", line));
  for (const char* required : {"hd", "dtype", "Hq", "Sq", "Skv"})
    if (!row.contains(required)) return bad(fmt::format("line {}: missing field '{}'", line, required));
  ATTNPROF_FIELD(device, std::string, "device", "cuda");
  ATTNPROF_FIELD(hd, int64_t, "hd", 0);
  ATTNPROF_FIELD(hd_v, int64_t, "hd_v", hd);
  ATTNPROF_FIELD(dtype, std::string, "dtype", "");
  ATTNPROF_FIELD(B, int64_t, "B", 2);
  ATTNPROF_FIELD(Hq, int64_t, "Hq", 0);
  ATTNPROF_FIELD(Hkv, int64_t, "Hkv", Hq);
  ATTNPROF_FIELD(gqa, bool, "gqa", false);
  ATTNPROF_FIELD(Sq, int64_t, "Sq", 0);
  ATTNPROF_FIELD(Skv, int64_t, "Skv", 0);
  ATTNPROF_FIELD(mask, std::string, "mask", "none");
  ATTNPROF_FIELD(mask_dims, std::vector<int64_t>, "mask_dims", {});
  ATTNPROF_FIELD(causal, bool, "causal", false);
  ATTNPROF_FIELD(dropout, double, "dropout", 0.0);
  ATTNPROF_FIELD(grad, bool, "requires_grad", false);
  ATTNPROF_FIELD(nested, bool, "nested", false);
  ATTNPROF_FIELD(qs, int64_t, "q_stride_last", 1);
  ATTNPROF_FIELD(ks, int64_t, "k_stride_last", 1);
  ATTNPROF_FIELD(vs, int64_t, "v_stride_last", 1);
  if (hd <= 0 || hd_v <= 0 || Hq <= 0 || Hkv <= 0 || B <= 0 || Sq < 0 || Skv < 0)
    return bad(fmt::format("line {}: sizes must be positive", line));
  if (!(dropout >= 0 && dropout < 1)) return bad(fmt::format("line {}: field 'dropout' must be in [0, 1)", line));
  auto dt = parse_dtype(dtype);
  if (!dt) return bad(fmt::format("line {}: {}", line, dt.error().message));
  auto m = parse_mask(mask);
  if (!m) return bad(fmt::format("line {}: {}", line, m.error().message));
  auto env = row_env(device, base, line);
  if (!env) return env.error();
  SdpaInput in;
  in.B = B, in.Hq = Hq, in.Hkv = Hkv, in.Sq = Sq, in.Skv = Skv, in.D = hd, in.Dv = hd_v;
  in.dtype = *dt;
  in.mask = *m;
  in.mask_dims = mask_dims;
  in.causal = causal;
  in.dropout = dropout;
  in.enable_gqa = gqa;
  in.requires_grad = grad;
  in.nested = nested;
  in.q_stride_last = qs, in.k_stride_last = ks, in.v_stride_last = vs;
  if (Status st = check_shapes(in); !st) return bad(fmt::format("line {}: {}", line, st.error().message));
  return std::pair{in, *env};
}
#undef ATTNPROF_FIELD

nlohmann::json verdict_json(const Verdict* v) {
  if (!v) return {{"ok", false}, {"why", nlohmann::json::array()}};
  nlohmann::json failed = nlohmann::json::array();
  for (const RuleCheck& c : v->failed) failed.push_back(c.rule);
  return {{"ok", v->eligible}, {"why", v->why}, {"rules", failed}};
}

nlohmann::json decision_json(const Decision& d, const Env& env) {
  nlohmann::json j;
  j["fused_choice"] = d.choice;
  const bool cpu = env.device.kind == DeviceKind::kCpu;
  j["can_use_flash_attention"] = verdict_json(d.verdict(cpu ? Backend::kCpuFlash : Backend::kFlash));
  if (!cpu) {
    j["can_use_efficient_attention"] = verdict_json(d.verdict(Backend::kEfficient));
    j["can_use_cudnn_attention"] = verdict_json(d.verdict(Backend::kCudnn));
  }
  if (!d.error.empty()) j["error"] = d.error;
  return j;
}

}  // namespace

Result<std::vector<int64_t>> parse_dims(std::string_view text, std::string_view flag, size_t want) {
  std::vector<int64_t> dims;
  std::string_view rest = text;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view part = rest.substr(0, comma);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || v < 0)
      return bad(fmt::format("{} '{}': expected comma-separated non-negative integers", flag, text));
    dims.push_back(v);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (want && dims.size() != want) return bad(fmt::format("{} '{}': expected B,H,S,D", flag, text));
  return dims;
}

Status check_shapes(const SdpaInput& in) {
  const int64_t q[] = {in.B, in.Hq, in.Sq, in.D}, k[] = {in.B, in.Hkv, in.Skv, in.D}, v[] = {in.B, in.Hkv, in.Skv, in.Dv};
  if (!numel_fits(q) || !numel_fits(k) || !numel_fits(v))
    return bad(fmt::format("shapes q [{}, {}, {}, {}], k/v [{}, {}, {}, {}/{}] hold more elements than fit in 64 bits",
                           in.B, in.Hq, in.Sq, in.D, in.B, in.Hkv, in.Skv, in.D, in.Dv));
  if (!numel_fits(in.mask_dims)) return bad("the mask's shape holds more elements than fit in 64 bits (or is negative)");
  return Ok{};
}

Result<MaskKind> parse_mask(std::string_view m) {
  if (m == "none") return MaskKind::kNone;
  if (m == "bool") return MaskKind::kBool;
  if (m == "float") return MaskKind::kFloat;
  return bad(fmt::format("mask '{}': expected none, bool or float", m));
}

// Any spelling the vocabulary knows (bf16, bfloat16, c10::BFloat16, ...) or "half", of the
// dtypes the rules reason about.
Result<std::string> parse_dtype(std::string_view d) {
  const std::string_view name = d == "half" ? "fp16" : dtype_word(d) ? d : dtype_of_spelling(d);
  if (const DtypeWord* word = dtype_word(name); word && word->rules) return std::string(name);
  std::vector<std::string_view> known;
  for (const DtypeWord& w : kDtypeWords)
    if (w.rules) known.push_back(w.name);
  return bad(fmt::format("dtype '{}': expected {} or {}", d, fmt::join(std::span(known).first(known.size() - 1), ", "),
                         known.back()));
}

std::string decision_json_text(const Decision& decision, const Env& env, const std::string& fix) {
  nlohmann::json j = decision_json(decision, env);
  j["fix"] = fix;
  return j.dump(2) + "\n";
}

Result<std::string> explain_batch(std::string_view text, const std::string& label, const Env& base) {
  std::string out;
  size_t line = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line_text = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line;
    if (line_text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto row = parse_json_input(line_text, label, fmt::format("line {}", line));
    if (!row) return row.error();
    auto parsed = row_input(*row, base, line);
    if (!parsed) return make_error(parsed.error().code, label + ": " + parsed.error().message);
    const auto& [in, env] = *parsed;
    nlohmann::json j = decision_json(decide(in, env), env);
    if (row->contains("row")) j["row"] = (*row)["row"];
    out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return out;
}

}  // namespace attnprof::rules
