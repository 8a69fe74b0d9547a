// MLA model dimensions (docs/spec/mla.md §1, §9) and the named presets a scenario starts from.
// Names follow Hugging Face's DeepSeek-V3 config.json keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

enum class ModelDtype { kFp32, kBf16 };

// The kind of one decoder layer's attention in a hybrid MLA family, as vLLM 0.33 builds it.
enum class AttentionLayerKind {
  kMla,            // MLAAttention (with the DSA indexer's caches when index_topk is set)
  kSlidingWindow,  // DeepSeek-V4 layer with compress ratio 0: its sliding-window cache only
  kCompressed,     // DeepSeek-V4 layer with compress ratio 4 (CSA, + indexer) or 128 (HCA)
  kLinear,         // linear attention (KDA): Mamba-style state, no KV per token
};

struct AttentionLayerPlan {
  AttentionLayerKind kind = AttentionLayerKind::kMla;
  int compress_ratio = 1;  // DeepSeek-V4: max(1, compress_rates[layer_type]) (deepseek_v4/attention.py ~240)
};

// What a hybrid family's config adds to the MLA dimensions (0 / nullopt: not in the family).
struct HybridAttentionDims {
  int head_dim = 0;                    // DeepSeek-V4 head_dim (the MLA head size, 512)
  int sliding_window = 0;              // DeepSeek-V4 sliding_window
  int index_head_dim = 0;              // the indexer's head dim (V4 / GLM-5-Next)
  int index_n_heads = 0;
  std::optional<int> index_kpool;      // GLM-5-Next: one indexer state per index_kpool tokens
  int linear_num_heads = 0;            // KDA heads, head dim and conv kernel
  int linear_head_dim = 0;
  int linear_conv_kernel_dim = 0;
  std::optional<double> linear_lower_bound;  // GLM-5-Next's KDA gate bound (FlashKDA needs one)
  int num_nextn_predict_layers = 0;    // MTP layers in the checkpoint
};

struct ModelConfig {
  std::string preset;                 // tiny | v2-lite-attn | v3-attn
  int vocab_size = 0;
  int hidden_size = 0;                // d
  int num_hidden_layers = 0;
  int num_attention_heads = 0;        // H
  int q_lora_rank = 0;                // r_q; 0 = no q compression (q_proj)
  int kv_lora_rank = 512;             // r_kv
  int qk_nope_head_dim = 128;         // d_n
  int qk_rope_head_dim = 64;          // d_r
  int v_head_dim = 128;               // d_v
  int intermediate_size = 0;          // dense SwiGLU MLP width
  int max_position_embeddings = 163840;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  // YaRN rope scaling (DeepSeek-V3 config "rope_scaling"); factor 1 disables it.
  double rope_scaling_factor = 40.0;
  double mscale_all_dim = 1.0;
  int original_max_position_embeddings = 4096;
  double beta_fast = 32.0;
  double beta_slow = 1.0;

  unsigned long long seed = 0;        // weights and seeded token ids
  ModelDtype dtype = ModelDtype::kFp32;
  int eos_token_id = 1;               // DeepSeek's <｜end▁of▁sentence｜> id
  std::optional<int> index_topk;      // present => sparse MLA (every token on the decode path)
  // The DSA indexer (DeepSeek-V3.2 / GLM-5, docs/spec/mla.md §10): index heads, their width (the
  // first qk_rope_head_dim dims rotated), and its RoPE layout (NeoX unless indexer_rope_interleave).
  // Used where has_dsa_indexer(): index_topk present on a one-group model.
  int index_n_heads = 64;
  int index_head_dim = 128;
  bool indexer_rope_interleave = false;
  // HY-V4 with no DSA layer: the config's index_topk, which no layer uses but backends' checks read
  // from hf_text_config (FLASHINFER_MLA_SPARSE*, FLASH_ATTN_MLA_SPARSE: hasattr, index_topk values).
  std::optional<int> unused_index_topk;

  // The serving model as vLLM sees it (from model.hf_config, else DeepSeek-V3's): what the
  // backend selection reads. torch_dtype is the serving dtype, not mlasim's compute `dtype`.
  std::string hf_config;              // resolved path of the config.json, "" without one
  std::string architecture = "DeepseekV3ForCausalLM";
  std::string model_type = "deepseek_v3";
  std::string torch_dtype = "bfloat16";
  std::string quant_method;           // quantization_config.quant_method, "" without one
  // The KV-cache dtype a modelopt quantization_config declares (kv_cache_quant_algo /
  // kv_cache_scheme), as vLLM resolves `--kv-cache-dtype auto` from it; "" when none.
  std::string quant_kv_cache_dtype;
  int config_num_hidden_layers = 0;   // the config's layer count when model.num_layers ran fewer
  // Family facts a config.json gives (scenario/hf_config.h, scenario/hf_families.h).
  std::string text_model_type = "deepseek_v3";  // hf_text_config.model_type (Kimi-K2.5: its text_config's)
  // MLA modules per decoder layer: LongCat-Flash's 2, each with its dense MLP, and one shortcut MoE
  // (gpu_model_runner.py ~6948 num_attn_module; transformers modeling_longcat_flash.py ~445-524).
  int num_attn_modules = 1;
  // LongCat-Flash's MLA LoRA scaling: q and c_kv times sqrt(hidden_size / rank) after their LoRA
  // norms (modeling_longcat_flash.py ~364-408; vLLM folds it into the norms' weights,
  // models/longcat_flash.py ~91-101).
  bool mla_lora_scaling = false;
  // HY-V4's per-head learnable attention sink (HYV4Config.learnable_sink, default on): its attention
  // class binds a backend that applies it, or disables it (config/hy_v4_attention.h).
  bool learnable_sink = false;
  int num_nextn_predict_layers = 0;   // the config's MTP layers (the MTP drafter's n_predict, config/speculative.py)
  double hf_derived_max_model_len = 0;  // vLLM's max_model_len derived from the config; 0 without one
  // The hybrid families' layers (DeepseekV4ForCausalLM, KimiLinearForCausalLM,
  // Glm5NextForCausalLM), one entry per config layer: what kinds of KV cache vLLM 0.33 gives each
  // (config/kv_cache_plan.h). Empty: every layer plain MLA (one KV cache group).
  std::vector<AttentionLayerPlan> attention_layers;
  HybridAttentionDims hybrid;
  // What reading the config.json noticed and let through (a key written twice: the last value
  // read, as vLLM's json.loads does), one "FILE:LINE:COL: KEY: ..." line each, for a note on stderr.
  std::vector<std::string> hf_config_notes;
};

// Whether the CPU model computes DeepSeek-V3.2's DSA indexer and attends to its top-k positions:
// a sparse model (index_topk) of one MLA KV cache group and one MLA module per layer, but HY-V4
// (its own indexer layout, computed dense). The hybrid families' CPU model is a one-layer MLA
// stand-in; LongCat-Flash (two modules) has no indexer in vLLM or transformers.
inline bool has_dsa_indexer(const ModelConfig& c) {
  return c.index_topk.has_value() && c.attention_layers.empty() && c.num_attn_modules == 1 &&
         c.architecture != "HYV4ForCausalLM";
}

// The preset's dimensions, or nullopt for an unknown name.
std::optional<ModelConfig> model_preset(std::string_view name);
std::vector<std::string> model_preset_names();

}  // namespace mlasim
