// MLA attention on the CPU in both forms (docs/spec/mla.md §2, docs/spec/routing.md §4): the absorbed decode
// form over the paged latent cache and the prefill form (up-projected keys/values, new tokens
// causal, cached context chunk by chunk, merged by log-sum-exp). Templated on the scalar type.
#pragma once

#include <span>
#include <vector>

#include "attention/context_chunk.h"
#include "attention/faults.h"
#include "attention/kv_cache_quant.h"
#include "attention/cpu/latent_cache.h"
#include "model/mla_dims.h"
#include "config/model_config.h"

namespace mlasim {

struct AttentionMetadata;

template <typename T>
struct MlaAttentionParams {
  MlaDims dims;
  int head_begin = 0, head_end = 0;  // the heads this (tensor-parallel) rank owns
  const T* kv_b_proj = nullptr;      // [H (d_n + d_v), r_kv], all heads; rows of other heads unused
  double scale = 0.0;                // the model's softmax scale (softmax_scale(config))
  FaultSet faults;                   // decode form: decode_scale_1_over_sqrt_576, w_uk_transposed;
                                     // prefill form: chunk_lse_merge_wrong
  // Sparse MLA (the DSA indexer's top-k, docs/spec/mla.md §10): per token of the step, the
  // positions it attends to in ascending order, in either form; empty: every causal one.
  std::span<const std::vector<int>> topk;
  // An fp8 cache whose decode kernel takes an fp8 query: the absorbed query is quantized (nullptr: none).
  const KvCacheQuant* cache_quant = nullptr;
};

// Shared layouts (N = metadata.num_actual_tokens, tokens in reordered order):
//   q      [N, H, d_n + d_r]  nope part, then the rope part already rotated
//   latent [N, r_kv + d_r]    this step's [c_kv | k_pe] per token (prefill form's new keys)
//   o      [N, H, d_v]        written for the rank's heads of the rows processed
//   lse    [N, H]             optional (nullptr): natural-log LSE of the scaled scores

// Decode (absorbed MQA) form for rows [row_begin, row_end): query token i of a row with q tokens
// and seq_len s sees cached positions j < s - q + i + 1 (bottom-right causal) through the row's
// block table, or with p.topk only its selected ones; q_lat_h = W_UK_h^T q_nope_h, keys
// [c_kv ; k_pe], values c_kv, o_h = W_UV_h o^_h.
template <typename T>
void mla_decode_form(const MlaAttentionParams<T>& p, const AttentionMetadata& md, int row_begin, int row_end,
                     const T* q, const LatentCache<T>& cache, T* o, T* lse = nullptr);

// Prefill (MHA) form for rows [row_begin, row_end): k_nope_h = W_UK_h c_kv, v_h = W_UV_h c_kv; new
// tokens attend causally to the row's new tokens (latents from `latent`); each context chunk of
// chunks[row - row_begin] is gathered from the cache and attended non-causally; the partial
// results are merged in chunk order, then with the new tokens' result (merge_attn_states). With
// p.topk a query skips the keys outside its selection (the sparse model in MHA form, as
// transformers computes it with its top-k mask).
template <typename T>
void mla_prefill_form(const MlaAttentionParams<T>& p, const AttentionMetadata& md, int row_begin, int row_end,
                      std::span<const std::vector<ContextChunk>> chunks, const T* q, const T* latent,
                      const LatentCache<T>& cache, T* o, T* lse = nullptr);

// merge_attn_states on one head: lse = log(e^a + e^b), o = o_a e^(a - lse) + o_b e^(b - lse);
// a side with LSE -inf (no keys) contributes nothing. `swapped` models chunk_lse_merge_wrong.
template <typename T>
void merge_attn_states(const T* o_a, T lse_a, const T* o_b, T lse_b, int n, T* o, T* lse, bool swapped = false);

}  // namespace mlasim
