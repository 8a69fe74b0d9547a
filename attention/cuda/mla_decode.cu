// Dense MLA decode, absorbed MQA form (docs/spec/mla.md §2.4, §6): split-KV main kernel + combine kernel.
// bf16 storage, fp32 accumulation, mma.sync m16n8k16 tensor cores, online softmax in base 2.
//
// Tiling (v1). Grid (num_sm_parts, ceil(q_rows / 64)), q_rows = s_q · H (row r = query i · H + head).
// One CTA = 256 threads = 8 warps, ~225 KB shared memory, one CTA per SM:
//   sQ  [64 rows][576] bf16  73,728 B  the query tile of the current request (zero past q_rows)
//   sK  2 × [64 tok][576]   147,456 B  double-buffered KV tiles (cp.async, one tile ahead); V is the
//                                      first 512 columns of the same buffer
//   sP  [64 rows][64 tok] bf16 8,192 B  probabilities, exchanged between the two warps of a row group
//   red [2][64] fp32           512 B    row max / row sum exchange
// 16-byte chunks of every smem row are XOR-swizzled by (row % 8) so ldmatrix is conflict-free.
// Warp w: row group rg = w / 2 owns query rows [16 rg, 16 rg + 16), column half ch = w % 2 owns
//   S = Q Kᵀ for tokens [32 ch, 32 ch + 32) of the tile   (16×32, k = 576: 36 k-steps × 4 mma)
//   O += P V for output columns [256 ch, 256 ch + 256)    (16×256, k = 64: 4 k-steps × 32 mma)
// so each thread holds 128 fp32 accumulators of O. The two warps of a row group meet on a named
// barrier twice per tile: to share the row max of their halves, and to publish P (bf16) in sP. Row
// sums stay per warp (both warps rescale by the same max) and are added once at the end. Row groups
// with no valid query row (e.g. H = 16, s_q = 1) skip all math and only help loading.
// Masking: key j of query i is live iff j < min(chunk end, causal ? len − s_q + i + 1 : len); dead
// scores are −inf, so P = 0. Tokens at or past the chunk end are never read (cp.async zero fill, the
// block table is not touched), so NaN in the cache tail or a sentinel block id cannot reach O.
// Split-KV: part p processes the (request, token range) chunks that mla_decode_get_metadata gave it;
// a request with one chunk is normalised and written straight to out/lse, otherwise the chunk's
// normalised O (fp32) and log2-LSE go to o_accum/lse_accum and the combine kernel (one warp per
// query row) merges them. Empty rows: O = 0, LSE = +inf.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/launch.cuh"
#include "attention/cuda/ptx.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

using namespace ptx;

constexpr int D = kMlaDecodeKDim, DV = kMlaDecodeVDim, BM = kMlaDecodeTileRows, BN = kMlaDecodeTileTokens;
constexpr int kThreads = 256;
constexpr int kRowBytes = D * 2;                   // 1152 B per Q / K row
constexpr int kChunksPerThread = D / 8 / 4;        // 72 chunks of 16 B per row, 4 threads per row
constexpr int kTileBytes = BM * kRowBytes;         // 73,728
constexpr int kPRowBytes = BN * 2;                 // 128
constexpr int kSmemQ = 0;
constexpr int kSmemK = kTileBytes;                 // two buffers
constexpr int kSmemP = 3 * kTileBytes;
constexpr int kSmemRed = kSmemP + BM * kPRowBytes;
constexpr int kSmemBytes = kSmemRed + 2 * BM * static_cast<int>(sizeof(float));  // 229,888
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
static_assert(BM == 64 && BN == 64 && kThreads == 4 * BM, "the loaders assume 4 threads per 64 rows");
static_assert(D % 32 == 0 && DV == 512, "576 / 512 geometry");

// Byte offset of 16-byte chunk `chunk` of row `row` in a [rows][576] bf16 swizzled buffer.
__device__ __forceinline__ uint32_t swz(int row, int chunk) {
  return static_cast<uint32_t>(row * kRowBytes + ((chunk ^ (row & 7)) << 4));
}
// Same for the [64][64] bf16 P buffer (8 chunks per row).
__device__ __forceinline__ uint32_t swz_p(int row, int chunk) {
  return static_cast<uint32_t>(row * kPRowBytes + ((chunk ^ (row & 7)) << 4));
}

// Rows [row0, row0 + 64) of the request's query block ([q_rows, 576]); rows ≥ q_rows are zero.
__device__ __forceinline__ void load_q_tile(uint32_t dst, const __nv_bfloat16* q_req, int row0, int q_rows) {
  const int row = threadIdx.x >> 2, sub = threadIdx.x & 3;
  const bool valid = row0 + row < q_rows;
  const __nv_bfloat16* src = valid ? q_req + static_cast<int64_t>(row0 + row) * D : q_req;
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = sub + 4 * i;
    cp_async_16(dst + swz(row, chunk), src + chunk * 8, valid ? 16 : 0);
  }
}

// Tokens [tok0, tok0 + 64) of a request; tokens ≥ tok_end are zero and their block ids never read.
__device__ __forceinline__ void load_kv_tile(uint32_t dst, const __nv_bfloat16* kv_cache, const int* block_table,
                                             int block_size, int tok0, int tok_end) {
  const int row = threadIdx.x >> 2, sub = threadIdx.x & 3;
  const int tok = tok0 + row;
  const bool valid = tok < tok_end;
  const __nv_bfloat16* src = kv_cache;
  if (valid) {
    const int64_t block = block_table[tok / block_size];
    src = kv_cache + (block * block_size + tok % block_size) * D;
  }
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = sub + 4 * i;
    cp_async_16(dst + swz(row, chunk), src + chunk * 8, valid ? 16 : 0);
  }
}

__global__ void __launch_bounds__(kThreads, 1) mla_decode_split_kernel(const MlaDecodeParams p) {
  MLASIM_DYNAMIC_SMEM(smem);
  const int* meta = p.tile_scheduler_metadata + blockIdx.x * kMlaDecodeMetadataInts;
  const int begin_req = meta[0], begin_tok = meta[1], end_req = meta[2], end_tok = meta[3], begin_split = meta[4];
  if (begin_req > end_req) return;  // a part with no work (uniform over the CTA)

  const int q_rows = p.s_q * p.num_heads;
  const int row0 = blockIdx.y * BM;  // first query row of this tile
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int rg = warp >> 1, ch = warp & 1;
  const bool active = row0 + rg * 16 < q_rows;
  const int bar_id = 1 + rg;

  const uint32_t sQ = smem_u32(smem + kSmemQ);
  const uint32_t sK0 = smem_u32(smem + kSmemK);
  const uint32_t sP = smem_u32(smem + kSmemP);
  unsigned char* const p_bytes = smem + kSmemP;
  float* const red = reinterpret_cast<float*>(smem + kSmemRed);  // [2][64]

  const auto* q = static_cast<const __nv_bfloat16*>(p.q);
  const auto* kv = static_cast<const __nv_bfloat16*>(p.kv_cache);
  const float scale_log2 = p.softmax_scale * kLog2e;

  // Per-lane ldmatrix coordinates.
  const int a_row = rg * 16 + (lane & 15);                        // A (Q or P) row of this lane
  const int a_hi = lane >> 4;                                     // A: k half (0: k 0-7, 1: k 8-15)
  const int bs_row = ch * 32 + ((lane >> 4) << 3) + (lane & 7);   // S: K row (token) for n-pair 0
  const int bs_hi = (lane >> 3) & 1;                              // S: k half
  const int bv_row = ((lane >> 3) & 1) * 8 + (lane & 7);          // PV: V row (token) within k-step
  const int bv_hi = lane >> 4;                                    // PV: n half
  const int c_row = rg * 16 + (lane >> 2);                        // C fragment row (and +8)

  for (int req = begin_req; req <= end_req; ++req) {
    const int seqlen = max(p.cache_seqlens[req], 0);
    const int tok_begin = req == begin_req ? begin_tok : 0;
    const int tok_stop = req == end_req ? end_tok : seqlen;
    const int split_idx = req == begin_req ? begin_split : 0;
    const int split_base = p.num_splits[req];
    const int n_splits = p.num_splits[req + 1] - split_base;
    const int* bt = p.block_table + static_cast<int64_t>(req) * p.max_blocks_per_seq;
    const int num_tiles = tok_stop > tok_begin ? (tok_stop - tok_begin + BN - 1) / BN : 0;

    __syncthreads();  // every read of sQ / sK / red for the previous request is done
    if (num_tiles > 0) {  // (an empty chunk loads nothing: no copy may outlive the request)
      load_q_tile(sQ, q + static_cast<int64_t>(req) * q_rows * D, row0, q_rows);
      load_kv_tile(sK0, kv, bt, p.block_size, tok_begin, tok_stop);
      cp_async_commit();
    }

    // Live-key limit of this thread's two C rows.
    int lim[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + c_row + 8 * h;
      const int qi = r < q_rows ? r / p.num_heads : p.s_q - 1;
      const int row_lim = p.causal ? seqlen - p.s_q + qi + 1 : seqlen;
      lim[h] = min(row_lim, tok_stop);
    }

    float acc[32][4];
#pragma unroll
    for (int n = 0; n < 32; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};

    for (int t = 0; t < num_tiles; ++t) {
      cp_async_wait<0>();
      __syncthreads();  // tile t (and Q) visible to all; everyone is done with tile t − 1's buffer
      if (t + 1 < num_tiles) {
        load_kv_tile(sK0 + ((t + 1) & 1) * kTileBytes, kv, bt, p.block_size, tok_begin + (t + 1) * BN, tok_stop);
        cp_async_commit();
      }
      if (!active) continue;
      const uint32_t sK = sK0 + (t & 1) * kTileBytes;

      // S = Q Kᵀ over this warp's 32 tokens.
      float s[4][4];
#pragma unroll
      for (int n = 0; n < 4; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        uint32_t a[4];
        ldmatrix_x4(a, sQ + swz(a_row, kk * 2 + a_hi));
#pragma unroll
        for (int np = 0; np < 2; ++np) {
          uint32_t b[4];
          ldmatrix_x4(b, sK + swz(bs_row + np * 16, kk * 2 + bs_hi));
          mma_bf16_16816(s[2 * np], a, b[0], b[1]);
          mma_bf16_16816(s[2 * np + 1], a, b[2], b[3]);
        }
      }

      // Mask, scale to log2 units, row max of this half.
      const int tok_base = tok_begin + t * BN + ch * 32 + 2 * (lane & 3);
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int h = j >> 1;
          const float x = tok_base + n * 8 + (j & 1) < lim[h] ? s[n][j] * scale_log2 : -INFINITY;
          s[n][j] = x;
          mx[h] = fmaxf(mx[h], x);
        }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        if ((lane & 3) == 0) red[ch * BM + c_row + 8 * h] = mx[h];
      }
      named_barrier_sync(bar_id, 64);

      // New running max (shared by both halves), rescale, P = 2^(x − m).
      float m_use[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float m_new = fmaxf(m_run[h], fmaxf(mx[h], red[(1 - ch) * BM + c_row + 8 * h]));
        m_use[h] = m_new == -INFINITY ? 0.f : m_new;
        const float alpha = exp2f(m_run[h] - m_use[h]);
        m_run[h] = m_new;
        l_run[h] *= alpha;
#pragma unroll
        for (int n = 0; n < 32; ++n) acc[n][2 * h] *= alpha, acc[n][2 * h + 1] *= alpha;
      }
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float p0 = exp2f(s[n][2 * h] - m_use[h]), p1 = exp2f(s[n][2 * h + 1] - m_use[h]);
          l_run[h] += p0 + p1;
          const int row = c_row + 8 * h;
          *reinterpret_cast<uint32_t*>(p_bytes + swz_p(row, ch * 4 + n) + (lane & 3) * 4) = pack_bf16x2(p0, p1);
        }
      named_barrier_sync(bar_id, 64);

      // O[:, 256 ch .. +256] += P V.
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        uint32_t a[4];
        ldmatrix_x4(a, sP + swz_p(a_row, kk * 2 + a_hi));
#pragma unroll
        for (int np = 0; np < 16; ++np) {
          uint32_t b[4];
          ldmatrix_x4_trans(b, sK + swz(kk * 16 + bv_row, ch * 32 + np * 2 + bv_hi));
          mma_bf16_16816(acc[2 * np], a, b[0], b[1]);
          mma_bf16_16816(acc[2 * np + 1], a, b[2], b[3]);
        }
      }
    }

    if (!active) continue;
    // Row sums: quad, then the two halves.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
      if ((lane & 3) == 0) red[ch * BM + c_row + 8 * h] = l_run[h];
    }
    named_barrier_sync(bar_id, 64);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = l_run[h] + red[(1 - ch) * BM + c_row + 8 * h];
      const float inv = l > 0.f ? 1.f / l : 0.f;
      const float lse2 = l > 0.f ? m_run[h] + log2f(l) : -INFINITY;
      const int r = row0 + c_row + 8 * h;
      if (r >= q_rows) continue;
      if (n_splits == 1) {
        auto* out = static_cast<__nv_bfloat16*>(p.out) + (static_cast<int64_t>(req) * q_rows + r) * DV + ch * 256 +
                    2 * (lane & 3);
#pragma unroll
        for (int n = 0; n < 32; ++n)
          *reinterpret_cast<uint32_t*>(out + n * 8) = pack_bf16x2(acc[n][2 * h] * inv, acc[n][2 * h + 1] * inv);
        if (ch == 0 && (lane & 3) == 0) {
          const int qi = r / p.num_heads, head = r % p.num_heads;
          p.lse[(static_cast<int64_t>(req) * p.num_heads + head) * p.s_q + qi] = l > 0.f ? lse2 * kLn2 : INFINITY;
        }
      } else {
        const int64_t split = split_base + split_idx;
        float* o = p.o_accum + (split * q_rows + r) * DV + ch * 256 + 2 * (lane & 3);
#pragma unroll
        for (int n = 0; n < 32; ++n)
          *reinterpret_cast<float2*>(o + n * 8) = make_float2(acc[n][2 * h] * inv, acc[n][2 * h + 1] * inv);
        if (ch == 0 && (lane & 3) == 0) p.lse_accum[split * q_rows + r] = lse2;
      }
    }
  }
}

// One warp per query row of a request with more than one chunk: LSE-weighted sum of the partials.
constexpr int kCombineRowsPerCta = 8;

__global__ void __launch_bounds__(kCombineRowsPerCta * 32) mla_decode_combine_kernel(const MlaDecodeParams p) {
  const int req = blockIdx.x;
  const int split_base = p.num_splits[req];
  const int n = p.num_splits[req + 1] - split_base;
  if (n <= 1) return;
  const int q_rows = p.s_q * p.num_heads;
  const int r = blockIdx.y * kCombineRowsPerCta + static_cast<int>(threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (r >= q_rows) return;

  const float* lse_p = p.lse_accum + static_cast<int64_t>(split_base) * q_rows + r;
  float mx = -INFINITY;
  for (int j = lane; j < n; j += 32) mx = fmaxf(mx, lse_p[static_cast<int64_t>(j) * q_rows]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  const int qi = r / p.num_heads, head = r % p.num_heads;
  float* lse_out = p.lse + (static_cast<int64_t>(req) * p.num_heads + head) * p.s_q + qi;
  auto* out = static_cast<__nv_bfloat16*>(p.out) + (static_cast<int64_t>(req) * q_rows + r) * DV;

  if (mx == -INFINITY) {  // no live key in any chunk
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int col = (lane + 32 * c) * 4;
      *reinterpret_cast<uint2*>(out + col) = make_uint2(0u, 0u);
    }
    if (lane == 0) *lse_out = INFINITY;
    return;
  }
  float sum = 0.f;
  for (int j = lane; j < n; j += 32) sum += exp2f(lse_p[static_cast<int64_t>(j) * q_rows] - mx);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  const float lse2 = mx + log2f(sum);

  float4 o4[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) o4[c] = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int j = 0; j < n; ++j) {
    const float w = exp2f(lse_p[static_cast<int64_t>(j) * q_rows] - lse2);
    const auto* src = reinterpret_cast<const float4*>(p.o_accum + ((static_cast<int64_t>(split_base) + j) * q_rows + r) * DV);
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const float4 v = src[lane + 32 * c];
      o4[c].x += w * v.x, o4[c].y += w * v.y, o4[c].z += w * v.z, o4[c].w += w * v.w;
    }
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int col = (lane + 32 * c) * 4;
    *reinterpret_cast<uint2*>(out + col) = make_uint2(pack_bf16x2(o4[c].x, o4[c].y), pack_bf16x2(o4[c].z, o4[c].w));
  }
  if (lane == 0) *lse_out = lse2 * kLn2;
}

}  // namespace

void mla_decode_fwd(const MlaDecodeParams& p) {
  MLASIM_CHECK(p.batch >= 0 && p.s_q >= 1 && p.num_heads >= 1, "mla_decode_fwd: bad shape");
  MLASIM_CHECK(p.block_size >= 1 && p.max_blocks_per_seq >= 0, "mla_decode_fwd: bad block_size / max_blocks_per_seq");
  MLASIM_CHECK(p.num_sm_parts >= 1, "mla_decode_fwd: num_sm_parts must be >= 1");
  MLASIM_CHECK(std::isfinite(p.softmax_scale) && p.softmax_scale > 0.f, "mla_decode_fwd: softmax_scale must be set");
  if (p.batch == 0) return;
  MLASIM_CHECK(p.q && p.kv_cache && p.block_table && p.cache_seqlens && p.out && p.lse,
               "mla_decode_fwd: null input/output pointer");
  MLASIM_CHECK(p.tile_scheduler_metadata && p.num_splits && p.o_accum && p.lse_accum,
               "mla_decode_fwd: scheduling metadata / workspace missing (mla_decode_get_metadata)");
  MLASIM_CHECK(reinterpret_cast<uintptr_t>(p.q) % 16 == 0 && reinterpret_cast<uintptr_t>(p.kv_cache) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(p.out) % 16 == 0 && reinterpret_cast<uintptr_t>(p.o_accum) % 16 == 0,
               "mla_decode_fwd: q, kv_cache, out and o_accum must be 16-byte aligned");
  const int q_rows = p.s_q * p.num_heads;
  const auto stream = static_cast<cudaStream_t>(p.stream);

  MLASIM_CUDA_CHECK(cudaFuncSetAttribute(mla_decode_split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(p.num_sm_parts), static_cast<unsigned>((q_rows + BM - 1) / BM));
  MLASIM_LAUNCH(grid, kThreads, kSmemBytes, stream, mla_decode_split_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
  const dim3 cgrid(static_cast<unsigned>(p.batch), static_cast<unsigned>((q_rows + kCombineRowsPerCta - 1) / kCombineRowsPerCta));
  MLASIM_LAUNCH(cgrid, kCombineRowsPerCta * 32, 0, stream, mla_decode_combine_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
