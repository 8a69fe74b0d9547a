// The part of a config.json that holds the text model, as vLLM 0.33 finds it (ModelConfig's
// hf_text_config: get_hf_text_config, transformers_utils/config.py ~1258), the family it belongs to
// (scenario/hf_families.h), and the family-specific keys read from it. Used by scenario/hf_config.
#pragma once

#include <string>

#include "config/model_config.h"
#include "scenario/hf_families.h"
#include "scenario/json_field_reader.h"

namespace mlasim {

struct HfTextModel {
  const JsonNode* node = nullptr;    // the object holding the text model's keys: the root or its text_config
  std::string prefix;                // "" or "text_config.": error key paths below `node`
  const HfFamily* family = nullptr;  // the text model's family (its class defaults), kOneGroup
  std::string model_type;            // the text model's model_type (hf_text_config.model_type)
};

// The config's model_type (vLLM 0.33: absent is _ARCHITECTURE_TO_MODEL_TYPE[architecture] for
// LongCat-Flash, transformers_utils/config.py ~362-365), or "" when absent and not inferred.
std::string hf_config_model_type(const JsonFieldReader& r, const JsonNode& root, const std::string& architecture);

// Fails, naming `at`, unless `model_type` is a family mlasim reads; what vLLM does with each of the
// others (a drafter's model_type and a config class only remote code has: transformers' refusal;
// a hybrid; an attention class with its own backend choice; not MLA at all).
void require_readable_family(const JsonFieldReader& r, const JsonNode& at, const std::string& key_path,
                             const std::string& model_type);

// The text model of a config whose (top-level) model_type is a family mlasim reads: the root, or
// its text_config (Kimi_K25Config; Glm5NextConfig when nested), whose own model_type must be a
// family mlasim reads too.
HfTextModel find_text_model(const JsonFieldReader& r, const JsonNode& root, const std::string& model_type);

// The layer count and MLP width under their family's names: LongcatFlashConfig's num_layers (each
// decoder layer holds two MLA modules; num_hidden_layers, when given instead, counts the modules)
// and ffn_hidden_size (its attribute_map's intermediate_size), everyone else's num_hidden_layers
// and intermediate_size. Also sets out.num_attn_modules and out.mla_lora_scaling.
void read_layer_shape(const JsonFieldReader& r, const HfTextModel& text, ModelConfig& out);

}  // namespace mlasim
