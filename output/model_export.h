// `mlasim export`: the scenario's seeded model as a Hugging Face checkpoint (config.json +
// model.safetensors, float32) that transformers' modeling of its family loads (DeepSeek-V3; A.X-K1,
// GLM-4.7-Flash and LongCat-Flash as themselves), and reading it back.
#pragma once

#include <cstdint>
#include <string>

#include "model/mla_weights.h"
#include "config/model_config.h"
#include "base/status.h"

namespace mlasim {

// The config of the model's transformers class (DeepseekV3ForCausalLM, and for model_type axk1,
// glm4_moe_lite and longcat_flash AXK1ForCausalLM, Glm4MoeLiteForCausalLM and
// LongcatFlashForCausalLM): every layer dense (first_k_dense_replace = num_hidden_layers, or
// mlp_layer_types; LongCat-Flash's shortcut MoE one identity expert at weight 1), YaRN
// rope_scaling with mscale = mscale_all_dim (so the cos/sin tables are unscaled, as in DeepSeek's
// configs), q_lora_rank null when 0, index_topk when sparse.
std::string hf_config_json(const ModelConfig& model);

// The bytes export_hf_checkpoint writes for `model` (both files), known before the weights exist.
std::uint64_t export_bytes(const ModelConfig& model);

// Creates `dir` if needed and writes config.json and model.safetensors, each atomically.
Status export_hf_checkpoint(const std::string& dir, const MlaWeights& weights);

// Reads model.safetensors from `dir` into weights for `model` (names and shapes checked).
Result<MlaWeights> read_hf_checkpoint(const std::string& dir, const ModelConfig& model);

}  // namespace mlasim
