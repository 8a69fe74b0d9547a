// The two MLA attention forms on the CPU and merge_attn_states (docs/spec/mla.md §2, docs/spec/routing.md §4),
// blocked like flash attention, GEMMs through cpu_gemm, items on the thread pool
// (docs/spec/cpu_reference.md).
#include "attention/cpu/mla_attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/attention_metadata.h"
#include "attention/cpu/cpu_gemm.h"
#include "model/cpu_thread_pool.h"
#include "attention/cpu/online_softmax.h"

namespace mlasim {
namespace {

using ll = long long;

// Keys per block and queries per block of the prefill form, and keys per block of the decode
// form: fixed, so results do not depend on the thread count (docs/spec/cpu_reference.md §3).
constexpr int kKeyBlock = 512;
constexpr int kQueryBlock = 512;

// One head's keys and values for a block of latent rows: K = [W_UK_h c | k_pe] [nk, d_n + d_r],
// V = W_UV_h c [nk, d_v] (the prefill form's up-projection, two GEMMs).
template <typename T>
struct HeadKeyBlock {
  std::vector<T> k, v;
  int nk = 0;

  void project(const MlaAttentionParams<T>& p, int h, const T* lat, int rows) {
    const MlaDims& d = p.dims;
    const int L = d.latent_dim(), dqk = d.d_qk();
    const T* w = p.kv_b_proj + static_cast<ll>(h) * (d.d_n + d.d_v) * d.r_kv;
    nk = rows;
    k.resize(static_cast<size_t>(rows) * dqk);
    v.resize(static_cast<size_t>(rows) * d.d_v);
    gemm_nt(rows, d.d_n, d.r_kv, lat, L, w, d.r_kv, k.data(), dqk);
    gemm_nt(rows, d.d_v, d.r_kv, lat, L, w + static_cast<ll>(d.d_n) * d.r_kv, d.r_kv, v.data(), d.d_v);
    for (int j = 0; j < rows; ++j)
      std::copy_n(lat + static_cast<ll>(j) * L + d.r_kv, d.d_r, &k[static_cast<size_t>(j) * dqk + d.d_n]);
  }
};

// Where a source's latent rows come from: contiguous (this step's new tokens) or gathered from
// the paged cache (a context chunk), kKeyBlock rows at a time.
template <typename T>
struct LatentSource {
  const T* contiguous = nullptr;  // [len, L], or null: read from the cache
  const LatentCache<T>* cache = nullptr;
  const std::vector<int>* blocks = nullptr;
  int start = 0, len = 0;

  const T* rows(int j0, int n, int L, std::vector<T>& buf) const {
    if (contiguous) return contiguous + static_cast<ll>(j0) * L;
    buf.resize(static_cast<size_t>(n) * L);
    for (int j = 0; j < n; ++j) std::copy_n(cache->row(cache->slot_of(*blocks, start + j0 + j)), L, &buf[static_cast<size_t>(j) * L]);
    return buf.data();
  }
};

// The cache rows of positions sel[j0, j0 + n) of a sequence with this block table, into buf.
template <typename T>
const T* gather_positions(const LatentCache<T>& cache, const std::vector<int>& blocks, const std::vector<int>& sel, int j0,
                          int n, int L, std::vector<T>& buf) {
  buf.resize(static_cast<size_t>(n) * L);
  for (int j = 0; j < n; ++j)
    std::copy_n(cache.row(cache.slot_of(blocks, sel[static_cast<size_t>(j0 + j)])), L, &buf[static_cast<size_t>(j) * L]);
  return buf.data();
}

// A sparse row's key mask: keep[i * stride + pos] != 0 when the row's query i attends to position
// pos (its indexer's top-k); `pos0` is the position of the source's first key.
struct KeyMask {
  const char* keep = nullptr;
  int stride = 0;
  int pos0 = 0;
};

// MHA attention of one head: nq queries (row stride ldq) over a source's keys, query i seeing
// keys j < i + 1 + offset (offset >= len: all), and with a mask only its selected ones. Writes
// o [nq, d_v] and lse [nq]. Key blocks outer (each projected once), query blocks inner, one online
// softmax per query block.
template <typename T>
void attend_head(const MlaAttentionParams<T>& p, int h, const T* q, ll ldq, int nq, const LatentSource<T>& src,
                 int offset, T* o, T* lse, KeyMask mask = {}) {
  const MlaDims& d = p.dims;
  const int L = d.latent_dim(), dqk = d.d_qk(), nqb = (nq + kQueryBlock - 1) / kQueryBlock;
  const T scale = static_cast<T>(p.scale);
  std::vector<OnlineSoftmax<T>> state(static_cast<size_t>(nqb));
  for (int b = 0; b < nqb; ++b) state[static_cast<size_t>(b)].reset(std::min(kQueryBlock, nq - b * kQueryBlock), d.d_v);
  HeadKeyBlock<T> kb;
  std::vector<T> gathered, s(static_cast<size_t>(kQueryBlock) * kKeyBlock);
  for (int j0 = 0; j0 < src.len; j0 += kKeyBlock) {
    const int nk = std::min(kKeyBlock, src.len - j0);
    bool projected = false;
    for (int b = 0; b < nqb; ++b) {
      const int i0 = b * kQueryBlock, rows = std::min(kQueryBlock, nq - i0);
      const ll visible_base = static_cast<ll>(i0) + 1 + offset - j0;
      if (visible_base + rows - 1 <= 0) continue;  // the whole block is after every query of it
      if (!projected) kb.project(p, h, src.rows(j0, nk, L, gathered), nk), projected = true;
      gemm_nt(rows, nk, dqk, q + i0 * ldq, static_cast<int>(ldq), kb.k.data(), dqk, s.data(), nk);
      OnlineSoftmax<T>& st = state[static_cast<size_t>(b)];
      if (mask.keep) {
        st.add_block_masked(s.data(), nk, nk, visible_base, scale,
                            mask.keep + static_cast<ll>(i0) * mask.stride + mask.pos0 + j0, mask.stride);
      } else {
        st.add_block(s.data(), nk, nk, visible_base, scale);
      }
      gemm_nn(rows, d.d_v, nk, s.data(), nk, kb.v.data(), d.d_v, st.o(), d.d_v, true);
    }
  }
  for (int b = 0; b < nqb; ++b)
    state[static_cast<size_t>(b)].finish(o + static_cast<ll>(b) * kQueryBlock * d.d_v, d.d_v, lse + b * kQueryBlock);
}

// o_ctx <- merge(o_ctx, o_c) per query (merge_attn_states, chunk order).
template <typename T>
void merge_into(std::vector<T>& o_ctx, std::vector<T>& lse_ctx, const std::vector<T>& o_c, const std::vector<T>& lse_c,
                int dv, bool swapped) {
  std::vector<T> tmp(static_cast<size_t>(dv));
  for (size_t k = 0; k < lse_ctx.size(); ++k) {
    T* oc = &o_ctx[k * static_cast<size_t>(dv)];
    merge_attn_states(oc, lse_ctx[k], &o_c[k * static_cast<size_t>(dv)], lse_c[k], dv, tmp.data(), &lse_ctx[k], swapped);
    std::copy(tmp.begin(), tmp.end(), oc);
  }
}

// The absorbed query of decode tokens [t_begin, t_end) for the rank's heads:
// qa [token, hh] = [W_UK_h^T q_nope_h ; q_pe_h] (L wide), one GEMM per head.
template <typename T>
void absorb_queries(const MlaAttentionParams<T>& p, const T* q, int t_begin, int t_end, std::vector<T>& qa) {
  const MlaDims& d = p.dims;
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim(), dqk = d.d_qk(), n = t_end - t_begin;
  const int dkv = d.d_n + d.d_v;
  const bool transposed = p.faults.has(Fault::kWUkTransposed);
  qa.assign(static_cast<size_t>(n) * nh * L, T(0));
  parallel_for(nh, [&](int hh) {
    const int h = p.head_begin + hh;
    const T* qn = q + (static_cast<ll>(t_begin) * H + h) * dqk;
    const T* w_uk = p.kv_b_proj + static_cast<ll>(h) * dkv * d.r_kv;
    T* out = &qa[static_cast<size_t>(hh) * L];
    if (transposed) {  // W_UK read as [r_kv, d_n]
      gemm_nt(n, d.r_kv, d.d_n, qn, H * dqk, w_uk, d.d_n, out, nh * L);
    } else {
      gemm_nn(n, d.r_kv, d.d_n, qn, H * dqk, w_uk, d.r_kv, out, nh * L);
    }
    for (int i = 0; i < n; ++i) std::copy_n(qn + static_cast<ll>(i) * H * dqk + d.d_n, d.d_r, out + static_cast<ll>(i) * nh * L + d.r_kv);
  });
}

}  // namespace

template <typename T>
void merge_attn_states(const T* o_a, T lse_a, const T* o_b, T lse_b, int n, T* o, T* lse, bool swapped) {
  const T ninf = -std::numeric_limits<T>::infinity();
  if (lse_a == ninf || lse_b == ninf) {  // one side saw no keys: the other side as it is
    const bool take_a = lse_b == ninf;
    const T* src = take_a ? o_a : o_b;
    std::copy(src, src + n, o);
    *lse = take_a ? lse_a : lse_b;
    return;
  }
  const T m = std::max(lse_a, lse_b);
  T wa = std::exp(lse_a - m), wb = std::exp(lse_b - m);
  const T sum = wa + wb;
  if (swapped) std::swap(wa, wb);
  for (int i = 0; i < n; ++i) o[i] = (o_a[i] * wa + o_b[i] * wb) / sum;
  *lse = m + std::log(sum);
}

template <typename T>
void mla_decode_form(const MlaAttentionParams<T>& p, const AttentionMetadata& md, int row_begin, int row_end,
                     const T* q, const LatentCache<T>& cache, T* o, T* lse) {
  const MlaDims& d = p.dims;
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim();
  const int dkv = d.d_n + d.d_v;
  MLASIM_CHECK(cache.row_dim() == L, "latent cache row width differs from r_kv + d_r");
  const T scale = static_cast<T>(p.faults.has(Fault::kDecodeScale1OverSqrt576) ? 1.0 / std::sqrt(static_cast<double>(L))
                                                                                 : p.scale);
  const int t_begin = md.query_start_loc[static_cast<size_t>(row_begin)];
  const int t_end = md.query_start_loc[static_cast<size_t>(row_end)], n = t_end - t_begin;
  std::vector<T> qa, acc(static_cast<size_t>(n) * nh * d.r_kv), acc_lse(static_cast<size_t>(n) * nh);
  absorb_queries(p, q, t_begin, t_end, qa);
  if (p.cache_quant) quantize_mla_query(*p.cache_quant, qa.data(), static_cast<int>(qa.size()));
  std::vector<int> row_of(static_cast<size_t>(n));
  for (int r = row_begin; r < row_end; ++r)
    for (int t = md.query_start_loc[static_cast<size_t>(r)]; t < md.query_start_loc[static_cast<size_t>(r) + 1]; ++t)
      row_of[static_cast<size_t>(t - t_begin)] = r;
  // Each token: all heads' scores against its keys, kKeyBlock cache rows at a time; values are the
  // keys' c_kv part, so acc = softmax(s) c_kv per head.
  parallel_for(n, [&](int i) {
    const int r = row_of[static_cast<size_t>(i)], t = t_begin + i;
    const int nq = md.query_start_loc[static_cast<size_t>(r) + 1] - md.query_start_loc[static_cast<size_t>(r)];
    const int nk = md.seq_lens[static_cast<size_t>(r)] - nq + (t - md.query_start_loc[static_cast<size_t>(r)]) + 1;
    const LatentSource<T> src{nullptr, &cache, &md.block_table[static_cast<size_t>(r)], 0, std::max(nk, 0)};
    const T* qi = &qa[static_cast<size_t>(i) * nh * L];
    OnlineSoftmax<T> st;
    st.reset(nh, d.r_kv);
    std::vector<T> gathered, s(static_cast<size_t>(nh) * kKeyBlock);
    // Sparse: the selected positions, gathered in order (all of them: the same rows as dense).
    const std::vector<int>* sel = p.topk.empty() ? nullptr : &p.topk[static_cast<size_t>(t)];
    const int len = sel ? static_cast<int>(sel->size()) : src.len;
    for (int j0 = 0; j0 < len; j0 += kKeyBlock) {
      const int nb = std::min(kKeyBlock, len - j0);
      const T* keys = sel ? gather_positions(cache, *src.blocks, *sel, j0, nb, L, gathered) : src.rows(j0, nb, L, gathered);
      gemm_nt(nh, nb, L, qi, L, keys, L, s.data(), nb);
      st.add_block(s.data(), nb, nb, nb, scale);
      gemm_nn(nh, d.r_kv, nb, s.data(), nb, keys, L, st.o(), d.r_kv, true);
    }
    st.finish(&acc[static_cast<size_t>(i) * nh * d.r_kv], d.r_kv, &acc_lse[static_cast<size_t>(i) * nh]);
  });
  // o_h = W_UV_h acc_h for every token, one GEMM per head.
  parallel_for(nh, [&](int hh) {
    const int h = p.head_begin + hh;
    const T* w_uv = p.kv_b_proj + (static_cast<ll>(h) * dkv + d.d_n) * d.r_kv;
    gemm_nt(n, d.d_v, d.r_kv, &acc[static_cast<size_t>(hh) * d.r_kv], nh * d.r_kv, w_uv, d.r_kv,
            o + (static_cast<ll>(t_begin) * H + h) * d.d_v, H * d.d_v);
    if (!lse) return;
    for (int i = 0; i < n; ++i) lse[static_cast<ll>(t_begin + i) * H + h] = acc_lse[static_cast<size_t>(i) * nh + hh];
  });
}

template <typename T>
void mla_prefill_form(const MlaAttentionParams<T>& p, const AttentionMetadata& md, int row_begin, int row_end,
                      std::span<const std::vector<ContextChunk>> chunks, const T* q, const T* latent,
                      const LatentCache<T>& cache, T* o, T* lse) {
  const MlaDims& d = p.dims;
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim(), dqk = d.d_qk();
  MLASIM_CHECK(static_cast<int>(chunks.size()) == row_end - row_begin, "one chunk list per prefill-form row");
  const bool swapped = p.faults.has(Fault::kChunkLseMergeWrong);
  // Sparse rows whose queries do not all see every causal position: their key masks.
  std::vector<std::vector<char>> keep(static_cast<size_t>(row_end - row_begin));
  if (!p.topk.empty())
    for (int r = row_begin; r < row_end; ++r) {
      const int t0 = md.query_start_loc[static_cast<size_t>(r)], t1 = md.query_start_loc[static_cast<size_t>(r) + 1];
      const int seq = md.seq_lens[static_cast<size_t>(r)];
      bool partial = false;
      for (int t = t0; t < t1; ++t)
        partial = partial || static_cast<int>(p.topk[static_cast<size_t>(t)].size()) < seq - (t1 - t) + 1;
      if (!partial) continue;
      std::vector<char>& k = keep[static_cast<size_t>(r - row_begin)];
      k.assign(static_cast<size_t>(t1 - t0) * seq, 0);
      for (int t = t0; t < t1; ++t)
        for (int pos : p.topk[static_cast<size_t>(t)]) {
          MLASIM_CHECK(pos >= 0 && pos <= seq - (t1 - t), "a selected position after the query's own");
          k[static_cast<size_t>(t - t0) * seq + pos] = 1;
        }
    }
  // One item per (row, head): the context chunks one by one merged in order, then the new tokens
  // (causal among themselves), then the two merged.
  parallel_for((row_end - row_begin) * nh, [&](int item) {
    const int r = row_begin + item / nh, h = p.head_begin + item % nh;
    const int t0 = md.query_start_loc[static_cast<size_t>(r)];
    const int nq = md.query_start_loc[static_cast<size_t>(r) + 1] - t0;
    const std::vector<int>& blocks = md.block_table[static_cast<size_t>(r)];
    const T* qh = q + (static_cast<ll>(t0) * H + h) * dqk;
    const ll ldq = static_cast<ll>(H) * dqk;
    std::vector<T> o_new(static_cast<size_t>(nq) * d.d_v), lse_new(static_cast<size_t>(nq)), o_ctx, lse_ctx, o_c, lse_c;
    bool have_ctx = false;
    const std::vector<char>& row_keep = keep[static_cast<size_t>(r - row_begin)];
    const int seq = md.seq_lens[static_cast<size_t>(r)];
    auto mask_at = [&](int pos0) { return row_keep.empty() ? KeyMask{} : KeyMask{row_keep.data(), seq, pos0}; };
    for (const ContextChunk& ch : chunks[static_cast<size_t>(r - row_begin)]) {
      if (ch.len <= 0) continue;
      o_c.resize(o_new.size()), lse_c.resize(lse_new.size());
      attend_head(p, h, qh, ldq, nq, LatentSource<T>{nullptr, &cache, &blocks, ch.start, ch.len}, ch.len, o_c.data(), lse_c.data(),
                  mask_at(ch.start));
      if (!have_ctx) {
        o_ctx = o_c, lse_ctx = lse_c, have_ctx = true;
      } else {
        merge_into(o_ctx, lse_ctx, o_c, lse_c, d.d_v, swapped);
      }
    }
    attend_head(p, h, qh, ldq, nq, LatentSource<T>{latent + static_cast<ll>(t0) * L, nullptr, nullptr, 0, nq}, 0,
                o_new.data(), lse_new.data(), mask_at(seq - nq));
    for (int i = 0; i < nq; ++i) {
      const size_t k = static_cast<size_t>(i);
      const ll at = static_cast<ll>(t0 + i) * H + h;
      T out_lse = lse_new[k];
      if (have_ctx) {
        merge_attn_states(&o_ctx[k * d.d_v], lse_ctx[k], &o_new[k * d.d_v], lse_new[k], d.d_v, o + at * d.d_v, &out_lse, swapped);
      } else {
        std::copy_n(&o_new[k * d.d_v], d.d_v, o + at * d.d_v);
      }
      if (lse) lse[at] = out_lse;
    }
  });
}

#define MLASIM_INSTANTIATE(T)                                                                                        \
  template void merge_attn_states<T>(const T*, T, const T*, T, int, T*, T*, bool);                                  \
  template void mla_decode_form<T>(const MlaAttentionParams<T>&, const AttentionMetadata&, int, int, const T*,       \
                                   const LatentCache<T>&, T*, T*);                                                   \
  template void mla_prefill_form<T>(const MlaAttentionParams<T>&, const AttentionMetadata&, int, int,                \
                                    std::span<const std::vector<ContextChunk>>, const T*, const T*,                  \
                                    const LatentCache<T>&, T*, T*);
MLASIM_INSTANTIATE(float)
MLASIM_INSTANTIATE(double)
#undef MLASIM_INSTANTIATE

}  // namespace mlasim
