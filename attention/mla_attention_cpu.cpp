// The two MLA attention forms on the CPU and merge_attn_states (docs/spec/mla.md §2, docs/spec/routing.md §4).
#include "attention/mla_attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention/attention_metadata.h"
#include "attention/mla_ops.h"
#include "attention/up_projection_cache.h"

namespace mlasim {
namespace {

using ll = long long;

// p <- softmax(s) in place over n scores; returns the LSE (max + log sum), -inf when n == 0.
template <typename T>
T softmax_in_place(T* s, int n) {
  if (n == 0) return -std::numeric_limits<T>::infinity();
  T m = s[0];
  for (int j = 1; j < n; ++j) m = std::max(m, s[j]);
  T sum = 0;
  for (int j = 0; j < n; ++j) sum += (s[j] = std::exp(s[j] - m));
  const T inv = T(1) / sum;
  for (int j = 0; j < n; ++j) s[j] *= inv;
  return m + std::log(sum);
}

template <typename T>
void axpy(T a, const T* x, T* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

// Up-projects nk latent rows lat [nk, r_kv + d_r] to k_nope [nk, nh, d_n] and v [nk, nh, d_v].
template <typename T>
void up_project(const MlaAttentionParams<T>& p, const T* lat, int nk, std::vector<T>& kn, std::vector<T>& vv) {
  const MlaDims& d = p.dims;
  const int nh = p.head_end - p.head_begin, L = d.latent_dim(), dkv = d.d_n + d.d_v;
  kn.assign(static_cast<size_t>(nk) * nh * d.d_n, T(0));
  vv.assign(static_cast<size_t>(nk) * nh * d.d_v, T(0));
  for (int j = 0; j < nk; ++j) {
    const T* c = lat + static_cast<ll>(j) * L;
    for (int hh = 0; hh < nh; ++hh) {
      const T* w = p.kv_b_proj + static_cast<ll>(p.head_begin + hh) * dkv * d.r_kv;
      linear(w, d.r_kv, 0, d.d_n, 0, d.r_kv, c, &kn[(static_cast<size_t>(j) * nh + hh) * d.d_n]);
      linear(w, d.r_kv, d.d_n, dkv, 0, d.r_kv, c, &vv[(static_cast<size_t>(j) * nh + hh) * d.d_v]);
    }
  }
}

// MHA attention of nq queries (tokens t0.. of q) over nk up-projected keys; query i sees keys
// j < i + 1 + offset (offset >= nk: all). k_pe of key j at lat + j (r_kv + d_r) + r_kv.
// Writes o_buf [nq, nh, d_v] and lse_buf [nq, nh].
template <typename T>
void attend_mha(const MlaAttentionParams<T>& p, const T* q, int t0, int nq, const T* lat, const std::vector<T>& kn,
                const std::vector<T>& vv, int nk, int offset, std::vector<T>& o_buf, std::vector<T>& lse_buf) {
  const MlaDims& d = p.dims;
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim(), dqk = d.d_qk();
  const T scale = static_cast<T>(p.scale);
  o_buf.assign(static_cast<size_t>(nq) * nh * d.d_v, T(0));
  lse_buf.assign(static_cast<size_t>(nq) * nh, T(0));
  std::vector<T> s(static_cast<size_t>(nk));
  for (int i = 0; i < nq; ++i) {
    const int n = std::min(nk, i + 1 + offset);
    for (int hh = 0; hh < nh; ++hh) {
      const T* qh = q + (static_cast<ll>(t0 + i) * H + p.head_begin + hh) * dqk;
      for (int j = 0; j < n; ++j) {
        const T nope = dot(qh, &kn[(static_cast<size_t>(j) * nh + hh) * d.d_n], d.d_n);
        const T rope = dot(qh + d.d_n, lat + static_cast<ll>(j) * L + d.r_kv, d.d_r);
        s[static_cast<size_t>(j)] = scale * (nope + rope);
      }
      lse_buf[static_cast<size_t>(i) * nh + hh] = softmax_in_place(s.data(), n);
      T* out = &o_buf[(static_cast<size_t>(i) * nh + hh) * d.d_v];
      for (int j = 0; j < n; ++j) axpy(s[static_cast<size_t>(j)], &vv[(static_cast<size_t>(j) * nh + hh) * d.d_v], out, d.d_v);
    }
  }
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
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim(), dqk = d.d_qk();
  const int dkv = d.d_n + d.d_v;
  MLASIM_CHECK(cache.row_dim() == L, "latent cache row width differs from r_kv + d_r");
  const bool transposed = p.faults.has(Fault::kWUkTransposed);
  const T scale = static_cast<T>(p.faults.has(Fault::kDecodeScale1OverSqrt576) ? 1.0 / std::sqrt(static_cast<double>(L))
                                                                                 : p.scale);
  std::vector<T> qa(static_cast<size_t>(nh) * L), acc(static_cast<size_t>(nh) * d.r_kv), s;
  std::vector<T> row_lse(static_cast<size_t>(nh));
  for (int r = row_begin; r < row_end; ++r) {
    const int t0 = md.query_start_loc[static_cast<size_t>(r)];
    const int nq = md.query_start_loc[static_cast<size_t>(r) + 1] - t0;
    const int seq_len = md.seq_lens[static_cast<size_t>(r)];
    const std::vector<int>& blocks = md.block_table[static_cast<size_t>(r)];
    for (int i = 0; i < nq; ++i) {
      const int t = t0 + i, nk = seq_len - nq + i + 1;
      // Absorb W_UK into the query: [q_lat_h ; q_pe_h] per head.
      for (int hh = 0; hh < nh; ++hh) {
        const int h = p.head_begin + hh;
        const T* qn = q + (static_cast<ll>(t) * H + h) * dqk;
        const T* w_uk = p.kv_b_proj + static_cast<ll>(h) * dkv * d.r_kv;
        T* qh = &qa[static_cast<size_t>(hh) * L];
        if (transposed) {
          for (int c = 0; c < d.r_kv; ++c) qh[c] = dot(w_uk + static_cast<ll>(c) * d.d_n, qn, d.d_n);
        } else {
          std::fill(qh, qh + d.r_kv, T(0));
          for (int k = 0; k < d.d_n; ++k) axpy(qn[k], w_uk + static_cast<ll>(k) * d.r_kv, qh, d.r_kv);
        }
        std::copy(qn + d.d_n, qn + dqk, qh + d.r_kv);
      }
      s.assign(static_cast<size_t>(nh) * std::max(nk, 0), T(0));
      for (int j = 0; j < nk; ++j) {
        const T* kr = cache.row(cache.slot_of(blocks, j));
        for (int hh = 0; hh < nh; ++hh)
          s[static_cast<size_t>(hh) * nk + j] = scale * dot(&qa[static_cast<size_t>(hh) * L], kr, L);
      }
      for (int hh = 0; hh < nh; ++hh) row_lse[static_cast<size_t>(hh)] = softmax_in_place(&s[static_cast<size_t>(hh) * nk], nk);
      std::fill(acc.begin(), acc.end(), T(0));
      for (int j = 0; j < nk; ++j) {
        const T* kr = cache.row(cache.slot_of(blocks, j));
        for (int hh = 0; hh < nh; ++hh) axpy(s[static_cast<size_t>(hh) * nk + j], kr, &acc[static_cast<size_t>(hh) * d.r_kv], d.r_kv);
      }
      for (int hh = 0; hh < nh; ++hh) {
        const int h = p.head_begin + hh;
        const T* w_uv = p.kv_b_proj + (static_cast<ll>(h) * dkv + d.d_n) * d.r_kv;
        linear(w_uv, d.r_kv, 0, d.d_v, 0, d.r_kv, &acc[static_cast<size_t>(hh) * d.r_kv], o + (static_cast<ll>(t) * H + h) * d.d_v);
        if (lse) lse[static_cast<ll>(t) * H + h] = row_lse[static_cast<size_t>(hh)];
      }
    }
  }
}

template <typename T>
void mla_prefill_form(const MlaAttentionParams<T>& p, const AttentionMetadata& md, int row_begin, int row_end,
                      std::span<const std::vector<ContextChunk>> chunks, const T* q, const T* latent,
                      const LatentCache<T>& cache, T* o, T* lse) {
  const MlaDims& d = p.dims;
  const int H = d.num_heads, nh = p.head_end - p.head_begin, L = d.latent_dim();
  MLASIM_CHECK(static_cast<int>(chunks.size()) == row_end - row_begin, "one chunk list per prefill-form row");
  const bool swapped = p.faults.has(Fault::kChunkLseMergeWrong);
  std::vector<T> kn, vv, o_new, lse_new, o_ctx, lse_ctx, o_c, lse_c, gathered, tmp(static_cast<size_t>(d.d_v));
  for (int r = row_begin; r < row_end; ++r) {
    const int t0 = md.query_start_loc[static_cast<size_t>(r)];
    const int nq = md.query_start_loc[static_cast<size_t>(r) + 1] - t0;
    const std::vector<int>& blocks = md.block_table[static_cast<size_t>(r)];
    // New tokens, causal among themselves.
    const T* lat_new = latent + static_cast<ll>(t0) * L;
    up_project(p, lat_new, nq, kn, vv);
    attend_mha(p, q, t0, nq, lat_new, kn, vv, nq, 0, o_new, lse_new);
    // Cached context, chunk by chunk, merged in order.
    bool have_ctx = false;
    for (const ContextChunk& ch : chunks[static_cast<size_t>(r - row_begin)]) {
      if (ch.len <= 0) continue;
      gathered.resize(static_cast<size_t>(ch.len) * L);
      for (int j = 0; j < ch.len; ++j) {
        const T* src = cache.row(cache.slot_of(blocks, ch.start + j));
        std::copy(src, src + L, &gathered[static_cast<size_t>(j) * L]);
      }
      if (p.up_cache) {  // the same projections, remembered per slot and head
        kn.resize(static_cast<size_t>(ch.len) * nh * d.d_n);
        vv.resize(static_cast<size_t>(ch.len) * nh * d.d_v);
        for (int j = 0; j < ch.len; ++j) {
          const int slot = cache.slot_of(blocks, ch.start + j);
          for (int hh = 0; hh < nh; ++hh) {
            const T* kv = p.up_cache->get(slot, p.head_begin + hh, &gathered[static_cast<size_t>(j) * L], p.kv_b_proj);
            std::copy(kv, kv + d.d_n, &kn[(static_cast<size_t>(j) * nh + hh) * d.d_n]);
            std::copy(kv + d.d_n, kv + d.d_n + d.d_v, &vv[(static_cast<size_t>(j) * nh + hh) * d.d_v]);
          }
        }
      } else {
        up_project(p, gathered.data(), ch.len, kn, vv);
      }
      attend_mha(p, q, t0, nq, gathered.data(), kn, vv, ch.len, ch.len, o_c, lse_c);
      if (!have_ctx) {
        o_ctx = o_c, lse_ctx = lse_c, have_ctx = true;
        continue;
      }
      for (size_t k = 0; k < lse_ctx.size(); ++k) {
        T* oc = &o_ctx[k * d.d_v];
        merge_attn_states(oc, lse_ctx[k], &o_c[k * d.d_v], lse_c[k], d.d_v, tmp.data(), &lse_ctx[k], swapped);
        std::copy(tmp.begin(), tmp.end(), oc);
      }
    }
    for (int i = 0; i < nq; ++i) {
      for (int hh = 0; hh < nh; ++hh) {
        const size_t k = static_cast<size_t>(i) * nh + hh;
        const ll at = static_cast<ll>(t0 + i) * H + p.head_begin + hh;
        T* out = o + at * d.d_v;
        T out_lse = lse_new[k];
        if (have_ctx) {
          merge_attn_states(&o_ctx[k * d.d_v], lse_ctx[k], &o_new[k * d.d_v], lse_new[k], d.d_v, out, &out_lse, swapped);
        } else {
          std::copy(&o_new[k * d.d_v], &o_new[k * d.d_v] + d.d_v, out);
        }
        if (lse) lse[at] = out_lse;
      }
    }
  }
}

std::vector<std::vector<ContextChunk>> context_chunks_from_metadata(const AttentionMetadata& md) {
  if (!md.prefill) return {};
  const PrefillMetadata& pm = *md.prefill;
  const ChunkedContextMetadata& cc = pm.chunked_context;
  std::vector<std::vector<ContextChunk>> out(static_cast<size_t>(pm.num_rows));
  for (size_t c = 0; c < cc.seq_lens.size(); ++c)
    for (size_t r = 0; r < out.size() && r < cc.seq_lens[c].size(); ++r)
      if (cc.seq_lens[c][r] > 0) out[r].push_back({cc.starts[c][r], cc.seq_lens[c][r]});
  return out;
}

std::vector<std::vector<ContextChunk>> single_context_chunks(const AttentionMetadata& md, int row_begin, int row_end) {
  std::vector<std::vector<ContextChunk>> out(static_cast<size_t>(row_end - row_begin));
  for (int r = row_begin; r < row_end; ++r) {
    const int ctx = md.seq_lens[static_cast<size_t>(r)] -
                    (md.query_start_loc[static_cast<size_t>(r) + 1] - md.query_start_loc[static_cast<size_t>(r)]);
    if (ctx > 0) out[static_cast<size_t>(r - row_begin)].push_back({0, ctx});
  }
  return out;
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
