// The MTP drafter vLLM 0.33 makes of a target model for `--speculative-config '{"method": "mtp"}'`:
// SpeculativeConfig.hf_config_override (config/speculative.py ~720-1100) rewrites the target's
// config into the drafter's model_type and architecture, and SpeculativeConfig refuses `mtp` when
// the result is no MTP model type ("Unsupported speculative method: 'mtp'", ~1467-1499).
#pragma once

#include <optional>
#include <string>

namespace mlasim {

struct MtpDrafter {
  std::string model_type;    // deepseek_mtp, glm4_moe_lite_mtp, ...
  std::string architecture;  // DeepSeekMTPModel, Glm4MoeLiteMTPModel, ...
};

// The drafter of a target with this model_type and architecture, or nullopt when vLLM makes none.
std::optional<MtpDrafter> mtp_drafter(const std::string& model_type, const std::string& architecture);

}  // namespace mlasim
