// The MLA model's weights (docs/spec/mla.md §3, §9) under Hugging Face DeepSeek-V3 names: seeded
// random values exactly representable in bf16, or tensors read back by name (e.g. from a file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "base/status.h"

namespace mlasim {

struct WeightTensor {
  std::vector<int> shape;     // [out, in] for a Linear weight, [n] for a norm, [V, d] embedding
  std::vector<float> values;  // row-major, product(shape) values
  long long numel() const;
};

struct MlaLayerWeights {
  WeightTensor input_layernorm;           // [d]
  WeightTensor q_proj;                    // [H*(d_n+d_r), d]      r_q == 0 only (else empty)
  WeightTensor q_a_proj;                  // [r_q, d]              r_q > 0 only
  WeightTensor q_a_layernorm;             // [r_q]                 r_q > 0 only
  WeightTensor q_b_proj;                  // [H*(d_n+d_r), r_q]    r_q > 0 only
  // q rows of head h: [h(d_n+d_r), +d_n) = nope part, the next d_r = rope part.
  WeightTensor kv_a_proj_with_mqa;        // [r_kv + d_r, d]: rows [0, r_kv) W_DKV, then W_KR
  WeightTensor kv_a_layernorm;            // [r_kv], on c_kv only
  WeightTensor kv_b_proj;                 // [H*(d_n+d_v), r_kv]: rows [h(d_n+d_v), +d_n) W_UK_h, next d_v W_UV_h
  WeightTensor o_proj;                    // [d, H*d_v]
  // The DSA indexer (has_dsa_indexer only, else empty; n = index_n_heads, D = index_head_dim).
  WeightTensor indexer_wq_b;              // [n*D, r_q]   self_attn.indexer.wq_b
  WeightTensor indexer_wk;                // [D, d]       self_attn.indexer.wk
  WeightTensor indexer_k_norm;            // [D]          self_attn.indexer.k_norm.weight (LayerNorm)
  WeightTensor indexer_k_norm_bias;       // [D]          self_attn.indexer.k_norm.bias
  WeightTensor indexer_weights_proj;      // [n, d]       self_attn.indexer.weights_proj
  WeightTensor post_attention_layernorm;  // [d]
  WeightTensor gate_proj;                 // [I, d]
  WeightTensor up_proj;                   // [I, d]
  WeightTensor down_proj;                 // [d, I]
  // LongCat-Flash's shortcut MoE router, on the first MLA module of a decoder layer only (else
  // empty). The dense stand-in's MoE is kLongcatZeroExperts zero-computation (identity) experts, all
  // chosen, with equal scores (a zero classifier): weights 1/2 each, so its output is its input.
  WeightTensor router_classifier;         // [kLongcatZeroExperts, d], zeros
  WeightTensor router_bias;               // [kLongcatZeroExperts]: e_score_correction_bias, zeros
};

// Two, not one: transformers 5.20's LongcatFlashExperts.forward cannot route top-1
// (modeling_longcat_flash.py ~190 squeezes the top-k axis away).
constexpr int kLongcatZeroExperts = 2;

enum class WeightKind { kEmbedding, kLinear, kNorm, kBias, kZeros };

// One tensor of the model: its Hugging Face name, shape and initialisation kind.
struct WeightSpec {
  std::string name;   // e.g. "model.layers.0.self_attn.kv_b_proj.weight"
  std::vector<int> shape;
  WeightKind kind = WeightKind::kLinear;
};

// Every tensor of the model in a fixed order: model.embed_tokens, then per layer
// input_layernorm, q_proj (r_q == 0) or q_a_proj/q_a_layernorm/q_b_proj, kv_a_proj_with_mqa,
// kv_a_layernorm, kv_b_proj, o_proj, post_attention_layernorm, mlp.gate_proj/up_proj/down_proj,
// then model.norm and lm_head. A LongCat-Flash decoder layer (config.num_attn_modules 2) has the
// same per MLA module j, under transformers' names (self_attn.j.*, input_layernorm.j,
// post_attention_layernorm.j, mlps.j.*), then its shortcut MoE's router (mlp.router.classifier,
// mlp.router.e_score_correction_bias).
std::vector<WeightSpec> weight_specs(const ModelConfig& config);

struct NamedWeight {
  std::string name;
  const WeightTensor* tensor = nullptr;
};

struct MlaWeights {
  ModelConfig config;
  WeightTensor embed_tokens;  // [V, d]
  std::vector<MlaLayerWeights> layers;  // one per MLA module: num_hidden_layers x num_attn_modules
  WeightTensor norm;          // [d]  model.norm
  WeightTensor lm_head;       // [V, d]

  // Every tensor in weight_specs() order, pointing into this object.
  std::vector<NamedWeight> tensors() const;
};

// Seeded weights. Tensor `name` draws from its own stream s = splitmix64(seed ^ stable_hash(name));
// value k uses z_k = splitmix64(s + k * 0x9e3779b97f4a7c15), u_k = ((z_k >> 11) + 0.5) * 2^-53,
// and pairs (2p, 2p+1) are a Box-Muller pair of N(0,1) from (u_2p, u_2p+1). Then, in double:
// Linear weights N(0, 1/fan_in) (fan_in = shape[1]), norm weights 1 + 0.2 N(0,1), embeddings
// N(0,1), kZeros 0 (LongCat-Flash's stand-in router); each value is rounded to float and then to
// the nearest bf16 (ties to even).
MlaWeights seeded_weights(const ModelConfig& config);

// Weights from tensors keyed by Hugging Face name: every name of weight_specs(config) must be
// present with its shape, and no other name. Errors name the tensor (Error::key_path).
Result<MlaWeights> weights_from_tensors(const ModelConfig& config, std::map<std::string, WeightTensor> tensors);

}  // namespace mlasim
