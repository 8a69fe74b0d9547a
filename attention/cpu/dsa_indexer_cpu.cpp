// The DSA indexer's keys, scores and top-k on the CPU (docs/spec/mla.md §10).
#include "attention/cpu/dsa_indexer_cpu.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attention/attention_metadata.h"
#include "attention/cpu/cpu_gemm.h"
#include "attention/cpu/mla_ops.h"
#include "model/cpu_thread_pool.h"

namespace mlasim {
namespace {

using ll = long long;

// LayerNorm with weight and bias (eps 1e-6, DeepseekV32Indexer.k_norm), y may alias x.
template <typename T>
void layer_norm(const T* x, const T* w, const T* b, int n, T* y) {
  T mean = 0;
  for (int i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<T>(n);
  T var = 0;
  for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<T>(n);
  const T inv = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var) + 1e-6));
  for (int i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv * w[i] + b[i];
}

// RoPE on the first qk_rope_head_dim values of an index head: NeoX (DeepSeek-V3.2) or interleaved
// (indexer_rope_interleave, GLM-5), models/deepseek_v32/attention.py ~279-284.
template <typename T>
void index_rope(const ModelConfig& c, T* x, const RopeAngles& a) {
  if (c.indexer_rope_interleave) {
    apply_rope_interleaved(x, a);
  } else {
    apply_rope_neox(x, a);
  }
}

}  // namespace

template <typename T>
std::vector<std::vector<int>> dsa_indexer_topk(const ModelConfig& c, const CpuIndexerWeights<T>& w, const StepPlan& plan,
                                               std::span<const RopeAngles> angles, const T* x, const T* cq,
                                               LatentCache<T>& cache) {
  const AttentionMetadata& md = *plan.md;
  const int n = md.num_actual_tokens, d = c.hidden_size, r_q = c.q_lora_rank;
  const int nh = c.index_n_heads, D = c.index_head_dim, topk = *c.index_topk;
  MLASIM_CHECK(cache.row_dim() == D, "indexer cache row width differs from index_head_dim");
  // Keys: wk(x), LayerNorm, RoPE on the rope part; every token writes its slot.
  std::vector<T> k(static_cast<size_t>(n) * D);
  parallel_gemm_nt(n, D, d, x, d, w.wk.data(), d, k.data(), D);
  for (int t = 0; t < n; ++t) {
    T* kt = &k[static_cast<size_t>(t) * D];
    layer_norm(kt, w.k_norm.data(), w.k_norm_bias.data(), D, kt);
    index_rope(c, kt, angles[static_cast<size_t>(t)]);
    std::copy_n(kt, D, cache.mutable_row(md.slot_mapping[static_cast<size_t>(t)]));
  }
  std::vector<std::vector<int>> selected(static_cast<size_t>(n));
  // Queries: wq_b(c_q) per head, RoPE on each head's rope part; weights: weights_proj(x) times
  // n_heads^-1/2 and head_dim^-1/2 (transformers' and vLLM's scales; positive, so the order of
  // the scores, and the top-k, do not depend on them).
  const int nd = n;
  std::vector<T> q(static_cast<size_t>(nd) * nh * D), wt(static_cast<size_t>(nd) * nh);
  parallel_gemm_nt(nd, nh * D, r_q, cq, r_q, w.wq_b.data(), r_q, q.data(), nh * D);
  parallel_gemm_nt(nd, nh, d, x, d, w.weights_proj.data(), d, wt.data(), nh);
  const T head_scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(nh)) / std::sqrt(static_cast<double>(D)));
  for (int t = 0; t < nd; ++t) {
    for (int h = 0; h < nh; ++h) index_rope(c, &q[(static_cast<size_t>(t) * nh + h) * D], angles[static_cast<size_t>(t)]);
    for (int h = 0; h < nh; ++h) wt[static_cast<size_t>(t) * nh + h] *= head_scale;
  }
  std::vector<int> row_of(static_cast<size_t>(nd));
  for (int r = 0; r < md.num_reqs; ++r)
    for (int t = md.query_start_loc[static_cast<size_t>(r)]; t < md.query_start_loc[static_cast<size_t>(r) + 1]; ++t)
      row_of[static_cast<size_t>(t)] = r;
  parallel_for(nd, [&](int t) {
    const int r = row_of[static_cast<size_t>(t)], pos = md.positions[static_cast<size_t>(t)], len = pos + 1;
    std::vector<int>& out = selected[static_cast<size_t>(t)];
    if (len <= topk) {  // every causal position
      out.resize(static_cast<size_t>(len));
      std::iota(out.begin(), out.end(), 0);
      return;
    }
    std::vector<T> score(static_cast<size_t>(len));
    const T* qt = &q[static_cast<size_t>(t) * nh * D];
    const T* wt_t = &wt[static_cast<size_t>(t) * nh];
    const std::vector<int>& blocks = md.block_table[static_cast<size_t>(r)];
    for (int j = 0; j < len; ++j) {
      const T s = dsa_index_score(qt, wt_t, cache.row(cache.slot_of(blocks, j)), nh, D);
      MLASIM_CHECK(std::isfinite(static_cast<double>(s)), "a DSA index score is not finite");
      score[static_cast<size_t>(j)] = s;
    }
    out = dsa_topk_positions<T>(score, topk);
  });
  return selected;
}

void apply_topk_off_by_one(std::vector<std::vector<int>>& selected) {
  for (std::vector<int>& out : selected) {
    for (int& pos : out) pos = std::max(pos - 1, 0);
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

template std::vector<std::vector<int>> dsa_indexer_topk<float>(const ModelConfig&, const CpuIndexerWeights<float>&,
                                                               const StepPlan&, std::span<const RopeAngles>,
                                                               const float*, const float*, LatentCache<float>&);
template std::vector<std::vector<int>> dsa_indexer_topk<double>(const ModelConfig&, const CpuIndexerWeights<double>&,
                                                                const StepPlan&, std::span<const RopeAngles>,
                                                                const double*, const double*, LatentCache<double>&);

}  // namespace mlasim
