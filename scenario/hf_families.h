// The MLA model families vLLM 0.33 serves, as a config.json names them: every model_type that
// ModelArchConfigConvertor.is_deepseek_mla lists (transformers_utils/model_arch_config_convertor.py
// ~294-330), and kimi_k25, whose text_config holds one. For each: the config class vLLM reads it
// with (transformers 5.20, or vLLM's _CONFIG_REGISTRY, transformers_utils/config.py ~124-190) and
// the class defaults a config.json may leave out, and how vLLM lays its KV cache out (one MLA group,
// or several). The MTP drafter vLLM makes of each: config/mtp_drafter.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

enum class HfFamilyKind {
  kOneGroup,       // one MLA KV cache group: mlasim reads it
  kSeveralGroups,  // its layers give vLLM several KV cache groups (sliding window, compressed MLA,
                   // linear attention): read by scenario/hf_config_hybrid.h, laid out by config/kv_cache_plan.h
  kHybrid,         // several KV cache groups too, in layer kinds mlasim does not read
  kDrafter,        // an MTP or DSpark drafter's model_type: vLLM writes it over a target's config
  kNoConfigClass,  // no config class in transformers 5.20 or vLLM 0.33: remote code only
};

struct HfFamily {
  std::string_view model_type;
  HfFamilyKind kind = HfFamilyKind::kOneGroup;
  std::string_view config_class;  // "transformers DeepseekV3Config", "vLLM Dots3NoteConfig", ...
  std::string_view why;           // kHybrid / kDrafter: what its layers or config are; kOneGroup: what
                                  // its attention class decides past the selector (HY-V4)
  // The class defaults read when the config.json leaves the key out (getattr on the config object).
  int max_position_embeddings = 0;
  std::optional<int> index_topk;  // GlmMoeDsaConfig's 2048: hasattr(config, "index_topk") holds
  bool text_config = false;       // the text model is the config's text_config (Kimi_K25Config)
};

// Every family above, in is_deepseek_mla's order, kimi_k25 last.
const std::vector<HfFamily>& hf_families();
const HfFamily* find_hf_family(std::string_view model_type);

// The model_types vLLM 0.33's is_deepseek_mla lists, in its order.
std::vector<std::string> vllm_deepseek_mla_model_types();

// The model_type of a text_config as Kimi_K25Config.__post_init__ leaves it: absent is
// "deepseek_v3" (its sub_configs_defaults), "kimi_k2" becomes "deepseek_v3"
// (transformers/models/kimi_k25/configuration_kimi_k25.py ~83-86).
std::string kimi_k25_text_model_type(const std::optional<std::string>& given);

}  // namespace mlasim
