// Decoder layer forward on the CPU with tensor-parallel partial sums in rank order; every Linear
// layer is one GEMM over the step's tokens (cpu_gemm.h).
#include "attention/cpu/model_forward_cpu.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "attention/attention_metadata.h"
#include "model/bf16.h"
#include "attention/cpu/cpu_gemm.h"
#include "attention/cpu/mla_ops.h"
#include "model/tp_shard.h"

namespace mlasim {
namespace {

using ll = long long;

// The tensor's values as T: in place for float, else a copy kept in `converted`.
template <typename T>
std::span<const T> view_as(const WeightTensor& t, std::vector<std::vector<T>>& converted) {
  if constexpr (std::is_same_v<T, float>) {
    return t.values;
  } else {
    return converted.emplace_back(t.values.begin(), t.values.end());
  }
}

template <typename T>
void rope(const CpuStepPlan& plan, T* x, int token) {
  const RopeAngles& a = plan.angles[static_cast<size_t>(token)];
  if (plan.faults.has(Fault::kRopeNeoxInsteadOfInterleaved)) {
    apply_rope_neox(x, a);
  } else {
    apply_rope_interleaved(x, a);
  }
}

// y[t] = RMSNorm(x[t]) for n rows of width `width`; y may alias x.
template <typename T>
void rms_norm_rows(const T* x, const T* w, int n, int width, double eps, T* y) {
  for (int t = 0; t < n; ++t)
    rms_norm(x + static_cast<ll>(t) * width, w, width, eps, y + static_cast<ll>(t) * width);
}

// sum += partial, element by element (the all-reduce, ranks added in order).
template <typename T>
void accumulate(std::vector<T>& sum, const std::vector<T>& partial) {
  for (size_t i = 0; i < sum.size(); ++i) sum[i] += partial[i];
}

// LongCat-Flash's MLA LoRA scaling (ModelConfig::mla_lora_scaling): the first `width` values of
// each of n rows of `row_stride` times sqrt(hidden_size / rank); nothing without it.
template <typename T>
void lora_scale_rows(const ModelConfig& c, int rank, T* x, int n, int width, int row_stride) {
  if (!c.mla_lora_scaling) return;
  const T s = static_cast<T>(std::sqrt(static_cast<double>(c.hidden_size) / rank));
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < width; ++i) x[static_cast<ll>(t) * row_stride + i] *= s;
}

}  // namespace

template <typename T>
CpuModel<T> to_cpu_model(const MlaWeights& w) {
  CpuModel<T> m;
  m.config = w.config;
  // Moving a std::vector keeps its buffer, so the spans stay valid as `converted` grows.
  const auto as_t = [&m](const WeightTensor& t) { return view_as<T>(t, m.converted); };
  m.embed_tokens = as_t(w.embed_tokens);
  m.norm = as_t(w.norm);
  m.lm_head = as_t(w.lm_head);
  for (const MlaLayerWeights& l : w.layers) {
    m.layers.push_back({as_t(l.input_layernorm), as_t(l.q_proj), as_t(l.q_a_proj), as_t(l.q_a_layernorm),
                        as_t(l.q_b_proj), as_t(l.kv_a_proj_with_mqa), as_t(l.kv_a_layernorm), as_t(l.kv_b_proj),
                        as_t(l.o_proj), as_t(l.post_attention_layernorm), as_t(l.gate_proj), as_t(l.up_proj),
                        as_t(l.down_proj),
                        {as_t(l.indexer_wq_b), as_t(l.indexer_wk), as_t(l.indexer_k_norm), as_t(l.indexer_k_norm_bias),
                         as_t(l.indexer_weights_proj)}});
  }
  m.inv_freq = yarn_inv_freq(w.config);
  m.scale = softmax_scale(w.config);
  return m;
}

template <typename T>
void layer_forward(const CpuModel<T>& model, int layer, const CpuStepPlan& plan, std::vector<T>& h, LatentCache<T>& cache,
                   std::vector<T>* mlp_input, LatentCache<T>* index_cache) {
  const ModelConfig& c = model.config;
  const CpuLayerWeights<T>& w = model.layers[static_cast<size_t>(layer)];
  const AttentionMetadata& md = *plan.md;
  const MlaDims dims = mla_dims(c);
  const int n = md.num_actual_tokens, d = c.hidden_size, H = dims.num_heads, dqk = dims.d_qk(), L = dims.latent_dim();
  const int r_q = c.q_lora_rank, inter = c.intermediate_size;
  const auto at = [](int token, int width) { return static_cast<size_t>(token) * static_cast<size_t>(width); };

  // Attention input, the replicated parts: RMSNorm, c_q (r_q > 0), [c_kv | k_pe].
  std::vector<T> x(at(n, d)), cq(at(n, std::max(r_q, 1))), latent(at(n, L));
  rms_norm_rows(h.data(), w.input_layernorm.data(), n, d, c.rms_norm_eps, x.data());
  if (r_q > 0) {
    parallel_gemm_nt(n, r_q, d, x.data(), d, w.q_a_proj.data(), d, cq.data(), r_q);
    rms_norm_rows(cq.data(), w.q_a_layernorm.data(), n, r_q, c.rms_norm_eps, cq.data());
    lora_scale_rows(c, r_q, cq.data(), n, r_q, r_q);  // q = q_b_proj(s c_q) = s q_b_proj(c_q)
  }
  parallel_gemm_nt(n, L, d, x.data(), d, w.kv_a_proj_with_mqa.data(), d, latent.data(), L);
  for (int t = 0; t < n; ++t) {
    T* lat = &latent[at(t, L)];
    if (!plan.faults.has(Fault::kKvNormDropped)) rms_norm(lat, w.kv_a_layernorm.data(), dims.r_kv, c.rms_norm_eps, lat);
    lora_scale_rows(c, dims.r_kv, lat, 1, dims.r_kv, L);  // c_kv only; k_pe is not scaled
    rope(plan, lat + dims.r_kv, t);
  }
  // The cache write comes first, for every token (docs/spec/routing.md §4).
  for (int t = 0; t < n; ++t) {
    if (!plan.write_cache[static_cast<size_t>(t)]) continue;
    const int slot = md.slot_mapping[static_cast<size_t>(t)];
    const T* src = &latent[at(t, L)];
    T* dst = cache.mutable_row(slot);
    if (plan.cache_quant.quantized()) {
      quantize_latent_row(plan.cache_quant, src, dims.r_kv, dims.d_r, dst);
      continue;
    }
    for (int i = 0; i < L; ++i) dst[i] = plan.bf16_cache ? static_cast<T>(round_to_bf16(static_cast<float>(src[i]))) : src[i];
  }

  // The DSA indexer: its keys into its cache, each token's top-k positions, which both forms attend
  // to (vLLM 0.33 takes the dense-MHA prefill only while every position is selected).
  const int num_reqs = md.num_reqs, ndec = plan.forms.num_decodes;
  std::vector<std::vector<int>> topk;
  if (index_cache) topk = dsa_indexer_topk(c, w.indexer, plan, plan.angles, x.data(), cq.data(), *index_cache);
  if (index_cache && plan.faults.has(Fault::kTopkOffByOne)) apply_topk_off_by_one(topk);

  // Per rank: its heads' q, attention in both forms, partial o_proj; summed in rank order.
  std::vector<T> q(at(n, H * dqk)), o(at(n, H * dims.d_v)), attn_sum(at(n, d), T(0)), partial(at(n, d));
  for (int rank = 0; rank < plan.tp; ++rank) {
    const TpShard s = tp_shard(c, plan.tp, rank);
    const int q0 = s.head_begin * dqk, q_cols = (s.head_end - s.head_begin) * dqk;
    if (r_q == 0) {
      parallel_gemm_nt(n, q_cols, d, x.data(), d, w.q_proj.data() + at(q0, d), d, q.data() + q0, H * dqk);
    } else {
      parallel_gemm_nt(n, q_cols, r_q, cq.data(), r_q, w.q_b_proj.data() + at(q0, r_q), r_q, q.data() + q0, H * dqk);
    }
    for (int t = 0; t < n; ++t)
      for (int hh = s.head_begin; hh < s.head_end; ++hh) rope(plan, &q[at(t, H * dqk)] + hh * dqk + dims.d_n, t);
    MlaAttentionParams<T> p{dims, s.head_begin, s.head_end, w.kv_b_proj.data(), model.scale, plan.faults, topk,
                            &plan.cache_quant};
    if (ndec > 0) mla_decode_form(p, md, 0, ndec, q.data(), cache, o.data());
    if (plan.prefill_rows_dense) p.topk = {};  // dense MHA: every causal position
    if (ndec < num_reqs) mla_prefill_form(p, md, ndec, num_reqs, plan.context_chunks, q.data(), latent.data(), cache, o.data());
    const int cols = (s.head_end - s.head_begin) * dims.d_v, col0 = s.head_begin * dims.d_v;
    parallel_gemm_nt(n, d, cols, o.data() + col0, H * dims.d_v, w.o_proj.data() + col0, H * dims.d_v, partial.data(), d);
    accumulate(attn_sum, partial);
  }
  accumulate(h, attn_sum);

  // MLP: column-parallel gate/up, row-parallel down, summed in rank order.
  rms_norm_rows(h.data(), w.post_attention_layernorm.data(), n, d, c.rms_norm_eps, x.data());
  if (mlp_input) *mlp_input = x;
  std::vector<T> mlp_sum(at(n, d), T(0)), g, u;
  for (int rank = 0; rank < plan.tp; ++rank) {
    const TpShard s = tp_shard(c, plan.tp, rank);
    const int m = s.mlp_end - s.mlp_begin;
    g.resize(at(n, m)), u.resize(at(n, m));
    parallel_gemm_nt(n, m, d, x.data(), d, w.gate_proj.data() + at(s.mlp_begin, d), d, g.data(), m);
    parallel_gemm_nt(n, m, d, x.data(), d, w.up_proj.data() + at(s.mlp_begin, d), d, u.data(), m);
    swiglu(g.data(), u.data(), n * m, g.data());
    parallel_gemm_nt(n, d, m, g.data(), m, w.down_proj.data() + s.mlp_begin, inter, partial.data(), d);
    accumulate(mlp_sum, partial);
  }
  accumulate(h, mlp_sum);
}

template <typename T>
void decoder_layer_forward(const CpuModel<T>& model, int layer, const CpuStepPlan& plan, std::vector<T>& h,
                           std::span<LatentCache<T>> caches, std::span<LatentCache<T>> index_caches) {
  const int modules = model.config.num_attn_modules;
  if (modules == 1) {
    layer_forward<T>(model, layer, plan, h, caches[static_cast<size_t>(layer)], nullptr,
                     index_caches.empty() ? nullptr : &index_caches[static_cast<size_t>(layer)]);
    return;
  }
  // LongCat-Flash (modeling_longcat_flash.py ~471-524): module 0's MLP input also feeds the
  // shortcut MoE, whose output is added after module 1's MLP. The dense stand-in's MoE is two
  // zero-computation (identity) experts, both chosen, with equal scores (model/mla_weights.h):
  // x/2 + x/2, times routed_scaling_factor 1, is that input itself.
  std::vector<T> shortcut;
  const int first = layer * modules;
  layer_forward(model, first, plan, h, caches[static_cast<size_t>(first)], &shortcut);
  for (int j = 1; j < modules; ++j)
    layer_forward<T>(model, first + j, plan, h, caches[static_cast<size_t>(first + j)], nullptr);
  accumulate(h, shortcut);
}

template <typename T>
void final_logits(const CpuModel<T>& model, const T* h, std::span<const int> tokens, T* logits) {
  const int d = model.config.hidden_size, n = static_cast<int>(tokens.size());
  std::vector<T> x(static_cast<size_t>(n) * static_cast<size_t>(d));
  for (int i = 0; i < n; ++i)
    rms_norm(h + static_cast<ll>(tokens[static_cast<size_t>(i)]) * d, model.norm.data(), d, model.config.rms_norm_eps,
             &x[static_cast<size_t>(i) * static_cast<size_t>(d)]);
  parallel_gemm_nt(n, model.config.vocab_size, d, x.data(), d, model.lm_head.data(), d, logits, model.config.vocab_size);
}

template CpuModel<float> to_cpu_model<float>(const MlaWeights&);
template CpuModel<double> to_cpu_model<double>(const MlaWeights&);
template void layer_forward<float>(const CpuModel<float>&, int, const CpuStepPlan&, std::vector<float>&, LatentCache<float>&,
                                   std::vector<float>*, LatentCache<float>*);
template void layer_forward<double>(const CpuModel<double>&, int, const CpuStepPlan&, std::vector<double>&,
                                    LatentCache<double>&, std::vector<double>*, LatentCache<double>*);
template void decoder_layer_forward<float>(const CpuModel<float>&, int, const CpuStepPlan&, std::vector<float>&,
                                           std::span<LatentCache<float>>, std::span<LatentCache<float>>);
template void decoder_layer_forward<double>(const CpuModel<double>&, int, const CpuStepPlan&, std::vector<double>&,
                                            std::span<LatentCache<double>>, std::span<LatentCache<double>>);
template void final_logits<float>(const CpuModel<float>&, const float*, std::span<const int>, float*);
template void final_logits<double>(const CpuModel<double>&, const double*, std::span<const int>, double*);

}  // namespace mlasim
