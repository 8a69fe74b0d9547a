// One step of the MLA model on the CPU (docs/spec/mla.md §2, §9; docs/spec/routing.md §4): the weights in
// the scalar type, one decoder layer with tensor-parallel partial sums, the final norm and
// lm_head. Used by CpuBackend; templated on the scalar type.
#pragma once

#include <span>
#include <vector>

#include "attention/faults.h"
#include "attention/kv_cache_quant.h"
#include "attention/cpu/dsa_indexer_cpu.h"
#include "attention/cpu/latent_cache.h"
#include "attention/cpu/mla_attention_cpu.h"
#include "model/mla_weights.h"
#include "model/rope.h"
#include "attention/step_plan.h"

namespace mlasim {

template <typename T>
struct CpuLayerWeights {  // MlaLayerWeights in T (same names and layouts)
  std::span<const T> input_layernorm, q_proj, q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa, kv_a_layernorm,
      kv_b_proj, o_proj, post_attention_layernorm, gate_proj, up_proj, down_proj;
  CpuIndexerWeights<T> indexer;  // the DSA indexer's (has_dsa_indexer), else empty
};

// The model's weights as T. For float the spans view the MlaWeights' own values (no copy: at
// v3-attn sizes a copy is 2.8 GB), so those must outlive the model; for double they view
// `converted`, the model's own copy. Move-only, so the spans never point into a stale copy.
template <typename T>
struct CpuModel {
  ModelConfig config;
  std::span<const T> embed_tokens, norm, lm_head;
  std::vector<CpuLayerWeights<T>> layers;
  std::vector<double> inv_freq;  // yarn_inv_freq(config)
  double scale = 0.0;            // softmax_scale(config)
  std::vector<std::vector<T>> converted;

  CpuModel() = default;
  CpuModel(CpuModel&&) noexcept = default;
  CpuModel& operator=(CpuModel&&) noexcept = default;
  CpuModel(const CpuModel&) = delete;
  CpuModel& operator=(const CpuModel&) = delete;
};

template <typename T>
CpuModel<T> to_cpu_model(const MlaWeights& weights);

// The step plan plus what only the CPU backend derives per step.
struct CpuStepPlan : StepPlan {
  int tp = 1;
  FaultSet faults;
  std::vector<RopeAngles> angles;  // per token, at its position
  bool bf16_cache = false;         // cache entries rounded to bf16 (bf16 storage emulation)
  KvCacheQuant cache_quant;        // an fp8 cache: what its readers get back (overrides bf16_cache)
};

// One MLA module with its MLP, h [N, d] in place: h += MLA(RMSNorm(h)); h += MLP(RMSNorm(h)).
// `layer` indexes model.layers (num_hidden_layers x num_attn_modules). Writes the module's cache
// first. `mlp_input`, when given, receives the MLP's input RMSNorm(h). With `index_cache` (a
// model with the DSA indexer) the indexer writes its keys there and the decode form attends to
// each token's top-k positions.
template <typename T>
void layer_forward(const CpuModel<T>& model, int layer, const CpuStepPlan& plan, std::vector<T>& h, LatentCache<T>& cache,
                   std::vector<T>* mlp_input = nullptr, LatentCache<T>* index_cache = nullptr);

// Decoder layer `layer`: its one MLA module (layer_forward), or LongCat-Flash's two and the
// shortcut MoE. `caches` holds one cache per MLA module of the model; `index_caches` one indexer
// cache per layer of a model with the DSA indexer, else it is empty.
template <typename T>
void decoder_layer_forward(const CpuModel<T>& model, int layer, const CpuStepPlan& plan, std::vector<T>& h,
                           std::span<LatentCache<T>> caches, std::span<LatentCache<T>> index_caches = {});

// logits[i, V] = lm_head(RMSNorm(h[tokens[i]], model.norm)) for the sampled tokens (h [N, d]).
template <typename T>
void final_logits(const CpuModel<T>& model, const T* h, std::span<const int> tokens, T* logits);

}  // namespace mlasim
