// The model presets of docs/spec/mla.md §9: real MLA attention geometry, shrunk everything else.
#include "config/model_config.h"

namespace mlasim {

std::optional<ModelConfig> model_preset(std::string_view name) {
  ModelConfig c;
  c.preset = std::string(name);
  if (name == "tiny") {
    // CI goldens on the CPU; YaRN as DeepSeek-V2-Lite (mscale_all_dim 0.707).
    c.vocab_size = 512;
    c.hidden_size = 256;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.q_lora_rank = 0;
    c.intermediate_size = 512;
    c.mscale_all_dim = 0.707;
    return c;
  }
  if (name == "v2-lite-attn") {
    c.vocab_size = 32768;
    c.hidden_size = 2048;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 16;
    c.q_lora_rank = 0;
    c.intermediate_size = 2816;
    c.mscale_all_dim = 0.707;
    return c;
  }
  if (name == "v3-attn") {
    c.vocab_size = 32768;
    c.hidden_size = 7168;
    c.num_hidden_layers = 1;
    c.num_attention_heads = 128;
    c.q_lora_rank = 1536;
    c.intermediate_size = 2048;
    c.mscale_all_dim = 1.0;
    return c;
  }
  return std::nullopt;
}

std::vector<std::string> model_preset_names() { return {"tiny", "v2-lite-attn", "v3-attn"}; }

}  // namespace mlasim
