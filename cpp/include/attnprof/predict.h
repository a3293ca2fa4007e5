// Config-only prediction (issue 5 item 5) and workload what-if (item 7): memory, time and
// FLOPs of a model's forward pass from its config alone, nothing run. Formulas, their sources
// and how they were checked against the H200 fixtures: docs/cost.md.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/hw.h"
#include "attnprof/report.h"
#include "attnprof/scaling.h"

namespace attnprof {

struct ModelConfig {
  std::string name;
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t intermediate = 0, vocab = 0;
  bool gated_mlp = true;         // SwiGLU-style MLP (3 matrices) vs 2-matrix MLP (GPT-2, BERT, ViT)
  bool lm_head = false;          // *ForCausalLM / *LMHeadModel: logits for every token
  bool tied_embeddings = false;  // lm_head shares the embedding matrix
  bool causal = true;            // decoder self-attention; encoders (BERT, ViT) are bidirectional
  int64_t sliding_window = 0;    // 0 = full attention
};

// The shipped table of well-known configs (llama-2-7b, llama-3-8b, mistral-7b, gpt2, ...).
std::span<const ModelConfig> known_models();
const ModelConfig* find_known_model(std::string_view name);  // case-insensitive; nullptr if unknown

// Reads a Hugging Face config.json (llama, mistral, qwen2, gemma, gpt2, bert, vit, ... keys).
// Errors: kMalformedJson, kInvalidArgument (missing hidden size / layers / heads).
Result<ModelConfig> model_config_from_json(std::string_view json_text, const std::string& name);

int64_t parameter_count(const ModelConfig& model);

struct PredictOptions {
  int64_t batch = 1;
  std::string dtype = "bf16";
  std::string attn = "sdpa";    // "eager" materialises the score matrix; "sdpa" is fused
  bool use_cache = false;       // keep the KV cache of the pass (generation prefill)
  std::vector<int64_t> lengths;
  const GpuSpec* gpu = nullptr; // for the time estimate (roofline lower bound)
  MemoryBudget budget;          // for fits / the OOM threshold
};

// Peak activation bytes of one inference forward pass at sequence length S: the largest of the
// attention phase, the MLP phase and the logits phase of a layer (docs/cost.md, "Predict").
int64_t predicted_activation_bytes(const ModelConfig& model, const PredictOptions& options, int64_t length);

struct PredictRow {
  int64_t length = 0;
  int64_t weights_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t kv_cache_bytes = 0;
  int64_t total_bytes = 0;
  double attention_flops = 0;  // all layers
  double linear_flops = 0;     // projections, MLP, logits
  double time_us = 0;          // whole forward pass, roofline lower bound on the GPU; 0 without --gpu
  double attention_time_us = 0;  // its attention part alone (same bound)
  bool fits = true;            // the simulated pass fits the budget (true when no budget)
};

struct Prediction {
  std::vector<PredictRow> rows;
  // Largest S whose pass fits the budget in the caching-allocator simulation (the allocations
  // predicted_allocation_sequence lists); -1 without a budget.
  int64_t oom_threshold_tokens = -1;
};

Result<Prediction> predict(const ModelConfig& model, const PredictOptions& options);

// The allocations of one forward pass at `length` as the memory formulas above imply them
// (weights as one resident block), for the caching-allocator simulation.
AllocationSequence predicted_allocation_sequence(const ModelConfig& model, const PredictOptions& options,
                                                 int64_t length);

// The prediction as a Report (scaling section with one analytic series), for every renderer.
Report prediction_report(const ModelConfig& model, const PredictOptions& options, const Prediction& prediction);

// ---- what-if: a distribution of request lengths, full attention vs a sliding window -------

struct LengthBin {
  int64_t tokens = 0;
  double count = 1;
};

// One request length per line ("812", CSV "812,3" = length,count, JSONL {"tokens": 812} or
// {"length": 812, "count": 3}); a non-numeric first line is a header. Errors: kEmptyInput,
// kInvalidArgument (the line that could not be read).
Result<std::vector<LengthBin>> parse_length_distribution(std::string_view text);

// A lengths argument as every front end takes it: a comma list of positive token counts
// ("512,1024", each counted once), or the path of a file parse_length_distribution reads.
Result<std::vector<LengthBin>> lengths_argument(std::string_view argument);

// Keys query i (1-based) sees: full causal i; window W: min(i, W) plus the global (first G)
// tokens that fell out of the window: min(G, max(0, i - W)). Summed over i = 1..S.
double visible_key_sum(int64_t length, int64_t window, int64_t global_tokens);

WhatIfSection what_if(const ModelConfig& model, const std::vector<LengthBin>& bins, int64_t window,
                      int64_t global_tokens, std::string_view dtype);

}  // namespace attnprof
