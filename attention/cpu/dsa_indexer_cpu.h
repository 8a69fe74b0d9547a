// DeepSeek sparse attention's indexer on the CPU (docs/spec/mla.md §10): per token its index
// queries (wq_b on the q latent), its index key (wk, LayerNorm; written to the layer's indexer
// cache), the per-head weights (weights_proj), and for the decode-form tokens the top-index_topk
// cached positions by score = sum_h w_h ReLU(q_h . k_j). vLLM 0.33: models/deepseek_v32/attention.py
// (DeepseekV32Indexer ~50-118, the fused q / k kernels common/kernels.py ~438-487, ~915-943),
// v1/attention/backends/mla/indexer.py and sparse_attn_indexer.py for the scores and top-k.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "attention/cpu/latent_cache.h"
#include "attention/cpu/mla_ops.h"
#include "attention/step_plan.h"
#include "config/model_config.h"
#include "model/rope.h"

namespace mlasim {

template <typename T>
struct CpuIndexerWeights {
  std::span<const T> wq_b, wk, k_norm, k_norm_bias, weights_proj;
};

// Writes every token's index key to `cache` (rows index_head_dim wide, at the step's slots), then
// returns, for each token t of the step, the positions its sparse attention reads:
// the index_topk best-scoring of positions [0, position(t)] (every one of them when there are no
// more than index_topk), in ascending order. Equal scores: the lower position first. x [N, d] is
// the attention input (after input_layernorm), cq [N, r_q] the normalised q latent; `angles` the
// tokens' RoPE angles (the main attention's). Every token writes its key (a fault that skips the
// latent cache's write leaves the indexer's alone).
template <typename T>
std::vector<std::vector<int>> dsa_indexer_topk(const ModelConfig& c, const CpuIndexerWeights<T>& w, const StepPlan& plan,
                                               std::span<const RopeAngles> angles, const T* x, const T* cq,
                                               LatentCache<T>& cache);

// score_j = sum_h w_h ReLU(q_h . k_j) of one query (q [nh, D], w [nh]) against one key (k [D]).
template <typename T>
T dsa_index_score(const T* q, const T* w, const T* k, int nh, int D) {
  T s = 0;
  for (int h = 0; h < nh; ++h) s += w[h] * std::max(T(0), dot(q + static_cast<long long>(h) * D, k, D));
  return s;
}

// The positions a query at position len - 1 attends to, given the scores of positions [0, len):
// the topk highest (equal scores: the lower position first), or all of them when len <= topk;
// ascending.
template <typename T>
std::vector<int> dsa_topk_positions(std::span<const T> score, int topk) {
  std::vector<int> out(score.size());
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = static_cast<int>(j);
  if (static_cast<int>(out.size()) <= topk) return out;
  std::partial_sort(out.begin(), out.begin() + topk, out.end(), [&](int a, int b) {
    const T sa = score[static_cast<std::size_t>(a)], sb = score[static_cast<std::size_t>(b)];
    return sa != sb ? sa > sb : a < b;
  });
  out.resize(static_cast<std::size_t>(topk));
  std::sort(out.begin(), out.end());
  return out;
}

// The fault topk_off_by_one (attention/faults.h): every selected position one lower (0 stays),
// duplicates merged; the lists stay ascending.
void apply_topk_off_by_one(std::vector<std::vector<int>>& selected);

}  // namespace mlasim
