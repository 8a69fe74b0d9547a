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
  if (name == "tiny-dsa") {
    // tiny with a DeepSeek-V3.2 DSA indexer (q_lora_rank for its queries, 16 index heads) and an
    // index_topk short enough that top-k selects among a CI-sized prompt's positions. 16 heads, not
    // fewer: a score is exactly 0 where every head's ReLU is, and equal scores at the top-k's edge
    // are ordered differently by every implementation (docs/spec/mla.md §10).
    ModelConfig d = *model_preset("tiny");
    d.preset = std::string(name);
    d.q_lora_rank = 128;
    d.index_topk = 16;
    d.index_n_heads = 16;
    d.index_head_dim = 128;
    d.architecture = "DeepseekV32ForCausalLM";
    d.model_type = "deepseek_v32";
    return d;
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

std::vector<std::string> model_preset_names() { return {"tiny", "tiny-dsa", "v2-lite-attn", "v3-attn"}; }

}  // namespace mlasim
