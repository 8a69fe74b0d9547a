// `mlasim export`: the scenario's seeded model as a Hugging Face DeepSeek-V3 checkpoint
// (config.json + model.safetensors, float32) that other tools can load, and reading it back.
#pragma once

#include <cstdint>
#include <string>

#include "model/mla_weights.h"
#include "config/model_config.h"
#include "base/status.h"

namespace mlasim {

// DeepseekV3ForCausalLM config: every layer dense (first_k_dense_replace = num_hidden_layers),
// YaRN rope_scaling with mscale = mscale_all_dim (so the cos/sin tables are unscaled, as in
// DeepSeek's configs), q_lora_rank null when 0, index_topk when sparse.
std::string hf_config_json(const ModelConfig& model);

// The bytes export_hf_checkpoint writes for `model` (both files), known before the weights exist.
std::uint64_t export_bytes(const ModelConfig& model);

// Creates `dir` if needed and writes config.json and model.safetensors, each atomically.
Status export_hf_checkpoint(const std::string& dir, const MlaWeights& weights);

// Reads model.safetensors from `dir` into weights for `model` (names and shapes checked).
Result<MlaWeights> read_hf_checkpoint(const std::string& dir, const ModelConfig& model);

}  // namespace mlasim
