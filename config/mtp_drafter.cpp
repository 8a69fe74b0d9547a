// SpeculativeConfig.hf_config_override's MTP drafters of MLA targets.
#include "config/mtp_drafter.h"

namespace mlasim {

std::optional<MtpDrafter> mtp_drafter(const std::string& model_type, const std::string& architecture) {
  // The branches of hf_config_override that MLA targets reach, in its order: a model_type
  // rewritten first, then one matched by its (possibly rewritten) architecture.
  if (model_type == "deepseek_v3" || model_type == "deepseek_mtp")
    return MtpDrafter{"deepseek_mtp", "DeepSeekMTPModel"};
  if (model_type == "deepseek_v32" || model_type == "glm_moe_dsa")
    return MtpDrafter{"deepseek_mtp", "DeepseekV32MTPModel"};  // use_v32_mtp
  // DeepSeek-V4 (speculative.py ~765-776): deepseek_mtp with DeepSeekV4MTPModel.
  if (model_type == "deepseek_v4") return MtpDrafter{"deepseek_mtp", "DeepSeekV4MTPModel"};
  if (model_type == "pangu_ultra_moe" || model_type == "pangu_ultra_moe_mtp")
    return MtpDrafter{"pangu_ultra_moe_mtp", "OpenPanguMTPModel"};
  if (architecture == "Glm4MoeLiteForCausalLM") return MtpDrafter{"glm4_moe_lite_mtp", "Glm4MoeLiteMTPModel"};
  if (model_type == "longcat_flash") return MtpDrafter{"longcat_flash_mtp", "LongCatFlashMTPModel"};
  if (model_type == "hy_v4") return MtpDrafter{"hy_v4_mtp", "HYV4MTPModel"};
  if (model_type == "glm5_next") return MtpDrafter{"glm5_next_mtp", "Glm5NextMTPModel"};  // ~1146-1158
  // Bailing (~946-970): BailingMoeV3 by its architecture first, then bailing_hybrid / V2.5.
  if (architecture == "BailingMoeV3ForCausalLM" || architecture == "BailingMoeV3VLForConditionalGeneration")
    return MtpDrafter{"bailing_hybrid_v3_mtp", "BailingMoeV3MTPModel"};
  if (model_type == "bailing_hybrid" || architecture == "BailingMoeV2_5ForCausalLM")
    return MtpDrafter{"bailing_hybrid_mtp", "BailingMoeV25MTPModel"};
  return std::nullopt;
}

}  // namespace mlasim
