// The MLA families of vLLM 0.33: their config classes, class defaults, KV cache groups and drafters.
#include "scenario/hf_families.h"

namespace mlasim {
namespace {

using K = HfFamilyKind;

HfFamily read(std::string_view type, std::string_view config_class, int max_position_embeddings,
              std::optional<int> index_topk = std::nullopt, bool text_config = false) {
  HfFamily f;
  f.model_type = type;
  f.config_class = config_class;
  f.max_position_embeddings = max_position_embeddings;
  f.index_topk = index_topk;
  f.text_config = text_config;
  return f;
}

// A family whose layers give vLLM several KV cache groups, read by scenario/hf_config_hybrid.h.
HfFamily several_groups(std::string_view type, std::string_view config_class, int max_position_embeddings,
                        std::string_view why) {
  HfFamily f = read(type, config_class, max_position_embeddings);
  f.kind = K::kSeveralGroups;
  f.why = why;
  return f;
}

// A one-group family whose attention class, not the selector alone, decides its backend.
HfFamily own_attention(HfFamily f, std::string_view why) {
  f.why = why;
  return f;
}

HfFamily not_read(std::string_view type, HfFamilyKind kind, std::string_view config_class, std::string_view why) {
  HfFamily f;
  f.model_type = type;
  f.kind = kind;
  f.config_class = config_class;
  f.why = why;
  return f;
}

// Class defaults: transformers 5.20's dataclass fields (models/*/configuration_*.py) or vLLM's
// config classes (transformers_utils/configs/*.py); deepseek_v32 and kimi_k2 are read with
// transformers' DeepseekV3Config (vLLM's _CONFIG_REGISTRY, transformers_utils/config.py ~131, ~141).
const std::vector<HfFamily> kFamilies{
    read("axk1", "transformers AXK1Config", 32768),
    read("deepseek_v2", "transformers DeepseekV2Config", 2048),
    read("deepseek_v3", "transformers DeepseekV3Config", 4096),
    read("deepseek_v32", "transformers DeepseekV3Config (vLLM's _CONFIG_REGISTRY)", 4096),
    several_groups("deepseek_v4", "transformers DeepseekV4Config", 1048576,
             "compressed MLA (tokens_per_state > 1) beside sliding-window MLA layers"),
    not_read("deepseek_v41", K::kHybrid, "vLLM DeepseekV41Config",
             "DeepSeek-V4's compressed and sliding-window MLA layers (models/deepseek_v4)"),
    not_read("dots3_note", K::kHybrid, "vLLM Dots3NoteConfig", "DSA layers beside sliding-window layers (layer_types)"),
    not_read("deepseek_mtp", K::kDrafter, "",
             "the MTP drafter vLLM makes of a deepseek_v3, deepseek_v32 or glm_moe_dsa target"),
    not_read("k3_dspark", K::kDrafter, "vLLM K3DSparkConfig",
             "the DSpark drafter of Kimi-K3, whose own layers are linear-attention hybrids"),
    several_groups("glm5_next", "transformers Glm5NextConfig", 1048576, "GLM-5-Next's mixed attention layers"),
    several_groups("glm5_next_text", "transformers Glm5NextTextConfig", 1048576,
                   "GLM-5-Next's mixed attention layers, as a text-only config"),
    read("glm_moe_dsa", "transformers GlmMoeDsaConfig", 202752, 2048),
    read("glm4_moe_lite", "transformers Glm4MoeLiteConfig", 202752),
    not_read("glm4_moe_lite_mtp", K::kDrafter, "", "the MTP drafter vLLM makes of a Glm4MoeLiteForCausalLM target"),
    read("kimi_k2", "transformers DeepseekV3Config (vLLM's _CONFIG_REGISTRY)", 4096),
    several_groups("kimi_linear", "vLLM KimiLinearConfig", 4096, "KDA linear-attention layers beside MLA layers"),
    read("longcat_flash", "transformers LongcatFlashConfig", 131072),
    not_read("pangu_ultra_moe", K::kNoConfigClass, "",
             "openPangu-Ultra-MoE ships its config class as remote code (auto_map)"),
    not_read("pangu_ultra_moe_mtp", K::kDrafter, "", "the MTP drafter vLLM makes of a pangu_ultra_moe target"),
    several_groups("bailing_hybrid", "transformers BailingHybridConfig", 262144,
                   "KDA linear-attention layers beside MLA layers (layer_group_size), served as BailingMoeV3ForCausalLM"),
    not_read("bailing_hybrid_mtp", K::kDrafter, "", "the MTP drafter vLLM makes of a bailing_hybrid target"),
    not_read("bailing_hybrid_v3_mtp", K::kDrafter, "", "the MTP drafter vLLM makes of a BailingMoeV3 target"),
    own_attention(read("hy_v4", "vLLM HYV4Config", 262144, 2048),
                  "its attention class binds a sink-capable backend (HY-V4's FLASHMLA_SPARSE) and then forces sparse "
                  "MQA (models/hy_v4/nvidia/attention.py ~486-500, ~544-664); DSA only on the layer_types that say so"),
    not_read("hy_v4_mtp", K::kDrafter, "", "the MTP drafter vLLM makes of a hy_v4 target"),
    read("kimi_k25", "transformers Kimi_K25Config", 0, std::nullopt, true),
};

}  // namespace

const std::vector<HfFamily>& hf_families() { return kFamilies; }

const HfFamily* find_hf_family(std::string_view model_type) {
  for (const HfFamily& f : kFamilies)
    if (f.model_type == model_type) return &f;
  return nullptr;
}

std::vector<std::string> vllm_deepseek_mla_model_types() {
  std::vector<std::string> out;
  for (const HfFamily& f : kFamilies)
    if (!f.text_config) out.emplace_back(f.model_type);
  return out;
}

std::string kimi_k25_text_model_type(const std::optional<std::string>& given) {
  if (!given || *given == "kimi_k2") return "deepseek_v3";
  return *given;
}

}  // namespace mlasim
