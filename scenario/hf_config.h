// Reading a Hugging Face config.json of an MLA model as vLLM 0.33.0's ModelConfig reads it
// (transformers_utils/model_arch_config_convertor.py, model_executor/models/deepseek_v2.py), into
// the dimensions mlasim runs and the facts the backend selection needs. JSON is read with the
// scenario's YAML reader (JSON is YAML), so errors name the file, line, column and key.
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"
#include "base/status.h"

namespace mlasim {

// Architectures vLLM 0.33 serves with MLA that mlasim reads (model_executor/models/registry.py
// ~92-126): DeepseekV2ForCausalLM, DeepseekV3ForCausalLM (DeepSeek-V3/R1, Kimi-K2),
// DeepseekV32ForCausalLM, GlmMoeDsaForCausalLM.
std::vector<std::string> hf_mla_architectures();

// Fills `out` (every dimension, RoPE/YaRN, vocab, layers, index_topk, eos, torch_dtype,
// quantization) from the config at `path`. Errors: unreadable or malformed JSON, a missing MLA key,
// an architecture that is not MLA or not known, and what vLLM 0.33 refuses when it loads the
// model (a DeepseekV32 or GlmMoeDsa config without index_topk).
Status read_hf_config(const std::string& path, ModelConfig& out);

}  // namespace mlasim
