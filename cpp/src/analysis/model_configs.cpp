// Model configs: the shipped table of well-known models and the HF config.json reader.
// Dimensions are those of the models' published config.json files (docs/cost.md).
#include "attnprof/json_input.h"  // first: it configures nlohmann/json.hpp

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "attnprof/predict.h"

namespace attnprof {
namespace {

// name, hidden, layers, heads, kv_heads, head_dim, intermediate, vocab,
// gated_mlp, lm_head, tied_embeddings, causal, sliding_window
const ModelConfig kModels[] = {
    {"llama-2-7b", 4096, 32, 32, 32, 128, 11008, 32000, true, true, false, true, 0},
    {"llama-2-13b", 5120, 40, 40, 40, 128, 13824, 32000, true, true, false, true, 0},
    {"llama-2-70b", 8192, 80, 64, 8, 128, 28672, 32000, true, true, false, true, 0},
    {"llama-3-8b", 4096, 32, 32, 8, 128, 14336, 128256, true, true, false, true, 0},
    {"llama-3-70b", 8192, 80, 64, 8, 128, 28672, 128256, true, true, false, true, 0},
    {"mistral-7b", 4096, 32, 32, 8, 128, 14336, 32000, true, true, false, true, 4096},
    {"qwen2-7b", 3584, 28, 28, 4, 128, 18944, 152064, true, true, false, true, 0},
    {"gpt2", 768, 12, 12, 12, 64, 3072, 50257, false, true, true, true, 0},
    {"gpt2-xl", 1600, 48, 25, 25, 64, 6400, 50257, false, true, true, true, 0},
    {"bert-base", 768, 12, 12, 12, 64, 3072, 30522, false, false, false, false, 0},
    {"bert-large", 1024, 24, 16, 16, 64, 4096, 30522, false, false, false, false, 0},
    {"vit-base", 768, 12, 12, 12, 64, 3072, 0, false, false, false, false, 0},
    {"vit-large", 1024, 24, 16, 16, 64, 4096, 0, false, false, false, false, 0},
};

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// First present integer among `keys` (HF configs name the same thing differently per family);
// one out of int64_t's range throws nlohmann's out_of_range naming the field.
int64_t int_of(const nlohmann::json& j, std::initializer_list<const char*> keys, int64_t fallback = 0) {
  for (const char* key : keys) {
    const auto it = j.find(key);
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return fallback;
}

// Largest dimension a config may give, per field: far above every published model (Llama 3.1
// 405B: hidden 16384, 126 layers, 128 heads, intermediate 53248; Gemma 3: vocab 262144), low
// enough that parameter and byte counts of a forward pass stay far inside int64_t (the
// attention weights of all layers: 2^12 layers x 4 x 2^18 hidden x 2^24 = 2^56).
struct DimensionBound {
  const char* field;
  int64_t ModelConfig::*member;
  int64_t max;
};
constexpr DimensionBound kDimensionBounds[] = {
    {"hidden_size", &ModelConfig::hidden, int64_t{1} << 18},
    {"num_hidden_layers", &ModelConfig::layers, int64_t{1} << 12},
    {"num_attention_heads", &ModelConfig::heads, int64_t{1} << 12},
    {"num_key_value_heads", &ModelConfig::kv_heads, int64_t{1} << 12},
    {"head_dim", &ModelConfig::head_dim, int64_t{1} << 12},
    {"intermediate_size", &ModelConfig::intermediate, int64_t{1} << 20},
    {"vocab_size", &ModelConfig::vocab, int64_t{1} << 24},
    {"sliding_window", &ModelConfig::sliding_window, int64_t{1} << 32},
};

// The first `count` bounds (the table's order: the dimensions the others default from first).
Status check_dimensions(const ModelConfig& m, const std::string& name, size_t count = std::size(kDimensionBounds)) {
  for (size_t i = 0; i < count; ++i) {
    const DimensionBound& b = kDimensionBounds[i];
    const int64_t v = m.*(b.member);
    const bool may_be_zero = b.member == &ModelConfig::vocab || b.member == &ModelConfig::sliding_window;
    if (v > b.max || v < 0 || (v == 0 && !may_be_zero))
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: {} = {} is outside [{}, {}]", name, b.field, v, may_be_zero ? 0 : 1, b.max));
  }
  return Ok{};
}

}  // namespace

std::span<const ModelConfig> known_models() { return kModels; }

const ModelConfig* find_known_model(std::string_view name) {
  const std::string wanted = lower(name);
  for (const auto& model : kModels)
    if (model.name == wanted) return &model;
  return nullptr;
}

namespace {

Result<ModelConfig> model_config_of(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) return make_error(ErrorCode::kMalformedJson, fmt::format("{}: not a JSON object", name));
  // Vision/multimodal configs keep the language/vision model under text_config / vision_config.
  const nlohmann::json& c = j.contains("text_config") && j["text_config"].is_object() ? j["text_config"] : j;
  ModelConfig m;
  m.name = name;
  m.hidden = int_of(c, {"hidden_size", "n_embd", "d_model", "dim"});
  m.layers = int_of(c, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"});
  m.heads = int_of(c, {"num_attention_heads", "n_head", "num_heads", "n_heads"});
  if (m.hidden <= 0 || m.layers <= 0 || m.heads <= 0)
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: needs hidden_size, num_hidden_layers and num_attention_heads", name));
  if (Status s = check_dimensions(m, name, 3); !s) return s.error();
  m.kv_heads = int_of(c, {"num_key_value_heads", "n_kv_heads", "multi_query_group_num"}, m.heads);
  m.head_dim = int_of(c, {"head_dim", "kv_channels"}, m.hidden / m.heads);
  m.intermediate = int_of(c, {"intermediate_size", "n_inner", "ffn_dim"}, 4 * m.hidden);
  m.vocab = int_of(c, {"vocab_size"});
  m.sliding_window = int_of(c, {"sliding_window"});
  const std::string type = lower(c.value("model_type", j.value("model_type", std::string())));
  static const std::set<std::string> kGated = {"llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma",
                                              "gemma2", "gemma3", "gemma3_text", "phi3", "olmo", "olmo2"};
  static const std::set<std::string> kEncoders = {"bert", "roberta", "deberta", "deberta-v2", "distilbert",
                                                 "electra", "vit", "deit", "beit", "dinov2", "clip_vision_model"};
  m.gated_mlp = kGated.count(type) > 0;
  m.causal = kEncoders.count(type) == 0;
  m.tied_embeddings = c.value("tie_word_embeddings", j.value("tie_word_embeddings", type == "gpt2"));
  if (const auto arch = j.find("architectures"); arch != j.end() && arch->is_array()) {
    for (const auto& a : *arch)
      if (a.is_string()) {
        const std::string s = a.get<std::string>();
        if (s.find("ForCausalLM") != std::string::npos || s.find("LMHead") != std::string::npos) m.lm_head = true;
      }
  }
  if (Status s = check_dimensions(m, name); !s) return s.error();
  return m;
}

}  // namespace

Result<ModelConfig> model_config_from_json(std::string_view json_text, const std::string& name) {
  auto parsed = parse_json_input(json_text, name, "model config");
  if (!parsed) return parsed.error();
  try {
    return model_config_of(*parsed, name);
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: model config has a bad {}", name, json_error_text(e)));
  }
}

int64_t parameter_count(const ModelConfig& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const int64_t attention = m.hidden * q + 2 * m.hidden * kv + q * m.hidden;
  const int64_t mlp = (m.gated_mlp ? 3 : 2) * m.hidden * m.intermediate;
  const int64_t norms = 2 * m.hidden;
  int64_t total = m.layers * (attention + mlp + norms) + m.vocab * m.hidden + m.hidden;
  if (m.lm_head && !m.tied_embeddings) total += m.vocab * m.hidden;
  return total;
}

}  // namespace attnprof
