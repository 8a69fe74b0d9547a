// The hybrid MLA families' config.json, read as vLLM 0.33 reads them: DeepseekV4ForCausalLM
// (transformers 5.20 DeepseekV4Config), KimiLinearForCausalLM (vLLM's own KimiLinearConfig,
// transformers_utils/configs/kimi_linear.py) and Glm5NextForCausalLM (transformers
// Glm5NextTextConfig, a flat text-only checkpoint). Their layers are not all alike: vLLM 0.33 gives
// them several KV cache groups (config/kv_cache_plan.h). read_hf_config (hf_config.h) calls this for
// their MLA dimensions and per-layer plan; everything else is read there as for every MLA model.
#pragma once

#include <string>
#include <vector>

#include "config/model_config.h"
#include "scenario/json_field_reader.h"

namespace mlasim {

// The hybrid architectures (model_executor/models/registry.py ~99, ~127, ~148); their model types
// are scenario/hf_families.h's kSeveralGroups rows.
std::vector<std::string> hf_hybrid_architectures();
bool is_hybrid_architecture(const std::string& architecture);

// Reads the family's MLA dimensions (into kv_lora_rank, qk_*_head_dim, v_head_dim, q_lora_rank,
// intermediate_size), out.attention_layers and out.hybrid. Throws LoadError naming the file, line,
// column and key: a missing head_dim (DeepSeek-V4) or kv_lora_rank (the others), a layer kind the
// config class refuses, a layer list of the wrong length, a compress ratio with no layer type.
// Notes (out.hf_config_notes) for what vLLM reads past without a word (a 1-based KDA layer number
// that names no layer).
void read_hybrid_attention(const JsonFieldReader& r, const JsonNode& root, const std::string& architecture,
                           ModelConfig& out, std::vector<std::string>& notes);

// A config's layer-type list (`key`) as transformers' PreTrainedConfig.validate_layer_type takes
// it (configuration_utils.py ~66-99, ~694-709): each entry folded by `fold` first (a config class's
// own spellings, e.g. HYV4Config's), the legacy names remapped, checked against
// ALLOWED_ATTN_LAYER_TYPES and the layer count. Throws LoadError naming the entry.
std::vector<std::string> read_transformers_layer_types(const JsonFieldReader& r, const JsonNode& list, const char* key,
                                                       int num_layers,
                                                       std::string (*fold)(const std::string&) = nullptr);

}  // namespace mlasim
