// The DSA indexer's scores and top-k (attention/cuda/dsa_indexer.h).
// Scores: grid (tokens, ceil(max_len / 128)), one key per thread, the token's queries and weights
// in shared memory; the dot product in eight interleaved partial sums as the CPU reference's.
// Top-k: a key per position, (orderable score bits << 32) | (2^32 − 1 − position), unique, so the
// topk largest keys are the topk best scores with ties to the lower position; the threshold key
// is found bit by bit (64 counting passes), then the positions at or above it are written in
// ascending order through a block-wide prefix sum.
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/dsa_indexer.h"
#include "attention/cuda/launch.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

constexpr int kScoreThreads = 128, kTopkThreads = 256, kTopkWarps = kTopkThreads / 32;

__global__ void __launch_bounds__(kScoreThreads) dsa_indexer_scores_kernel(const DsaIndexerScoresParams p) {
  MLASIM_DYNAMIC_SMEM(smem);
  float* const sq = reinterpret_cast<float*>(smem);
  float* const sw = sq + p.num_heads * p.head_dim;
  const int64_t t = blockIdx.x;
  for (int i = threadIdx.x; i < p.num_heads * p.head_dim; i += kScoreThreads) sq[i] = p.q[t * p.num_heads * p.head_dim + i];
  for (int i = threadIdx.x; i < p.num_heads; i += kScoreThreads) sw[i] = p.weights[t * p.num_heads + i];
  __syncthreads();
  const int j = blockIdx.y * kScoreThreads + threadIdx.x;
  if (j >= p.max_len) return;
  const int pos = p.token_pos[t];
  float* out = p.scores + t * p.max_len + j;
  if (j > pos) {
    *out = -INFINITY;
    return;
  }
  const int* bt = p.block_table + static_cast<int64_t>(p.token_row[t]) * p.max_blocks_per_seq;
  const float* k = p.key_cache + (static_cast<int64_t>(bt[j / p.block_size]) * p.block_size + j % p.block_size) * p.head_dim;
  float s = 0.f;
  for (int h = 0; h < p.num_heads; ++h) {
    const float* qh = sq + h * p.head_dim;
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    int i = 0;
    for (; i + 8 <= p.head_dim; i += 8)
#pragma unroll
      for (int u = 0; u < 8; ++u) acc[u] += qh[i + u] * k[i + u];
    float d = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < p.head_dim; ++i) d += qh[i] * k[i];
    s += sw[h] * fmaxf(0.f, d);
  }
  *out = s;
}

__device__ __forceinline__ uint64_t topk_key(float score, int pos) {
  uint32_t u = __float_as_uint(score);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // order-preserving as unsigned
  return (static_cast<uint64_t>(u) << 32) | static_cast<uint32_t>(0xffffffffu - static_cast<uint32_t>(pos));
}

// Sum of v over the CTA (every thread gets it); `red` holds kTopkWarps ints.
__device__ __forceinline__ int block_sum(int v, int* red) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();  // red is free (its previous readers are done)
  if (lane == 0) red[warp] = v;
  __syncthreads();
  int total = 0;
#pragma unroll
  for (int w = 0; w < kTopkWarps; ++w) total += red[w];
  return total;
}

__global__ void __launch_bounds__(kTopkThreads) dsa_topk_kernel(const DsaTopkParams p) {
  __shared__ int red[kTopkWarps];
  __shared__ int warp_sums[kTopkWarps];
  const int64_t t = blockIdx.x;
  const int pos = p.token_pos[t], len = pos + 1;
  const float* score = p.scores + t * p.max_len;
  const int* bt = p.block_table + static_cast<int64_t>(p.token_row[t]) * p.max_blocks_per_seq;
  int* out_pos = p.positions ? p.positions + t * p.topk : nullptr;
  int* out_slot = p.slots + t * p.topk;
  const auto slot_of = [&](int j) { return bt[j / p.block_size] * p.block_size + j % p.block_size; };

  const int selected = len < p.topk ? len : p.topk;
  for (int i = selected + static_cast<int>(threadIdx.x); i < p.topk; i += kTopkThreads) {
    out_slot[i] = -1;
    if (out_pos) out_pos[i] = -1;
  }
  uint64_t threshold = 0;  // every key is ≥ 0: with len ≤ topk every position is selected
  if (len > p.topk) {
    for (int bit = 63; bit >= 0; --bit) {
      const uint64_t cand = threshold | (uint64_t{1} << bit);
      int count = 0;
      for (int j = threadIdx.x; j < len; j += kTopkThreads) count += topk_key(score[j], j) >= cand;
      if (block_sum(count, red) >= p.topk) threshold = cand;
    }
  }
  // Compaction in position order: each pass of kTopkThreads positions, an exclusive prefix sum.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int base = 0;
  for (int j0 = 0; j0 < len; j0 += kTopkThreads) {
    const int j = j0 + static_cast<int>(threadIdx.x);
    const int flag = j < len && topk_key(score[j], j) >= threshold;
    int incl = flag;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const int v = __shfl_up_sync(0xffffffffu, incl, o);
      if (lane >= o) incl += v;
    }
    __syncthreads();  // warp_sums free
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    int before = 0, total = 0;
#pragma unroll
    for (int w = 0; w < kTopkWarps; ++w) {
      before += w < warp ? warp_sums[w] : 0;
      total += warp_sums[w];
    }
    if (flag) {
      const int at = base + before + incl - 1;
      out_slot[at] = slot_of(j);
      if (out_pos) out_pos[at] = j;
    }
    base += total;
  }
}

}  // namespace

void dsa_indexer_scores(const DsaIndexerScoresParams& p) {
  MLASIM_CHECK(p.num_tokens >= 0 && p.num_heads > 0 && p.head_dim > 0 && p.block_size > 0,
               "dsa_indexer_scores: bad shape");
  if (p.num_tokens == 0 || p.max_len == 0) return;
  MLASIM_CHECK(p.q && p.weights && p.key_cache && p.block_table && p.token_row && p.token_pos && p.scores,
               "dsa_indexer_scores: null pointer");
  const int smem = (p.num_heads * p.head_dim + p.num_heads) * static_cast<int>(sizeof(float));
  const auto stream = static_cast<cudaStream_t>(p.stream);
  MLASIM_CUDA_CHECK(cudaFuncSetAttribute(dsa_indexer_scores_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>(p.num_tokens), static_cast<unsigned>((p.max_len + kScoreThreads - 1) / kScoreThreads));
  MLASIM_LAUNCH(grid, kScoreThreads, smem, stream, dsa_indexer_scores_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void dsa_topk(const DsaTopkParams& p) {
  MLASIM_CHECK(p.num_tokens >= 0 && p.topk > 0 && p.block_size > 0, "dsa_topk: bad shape");
  if (p.num_tokens == 0) return;
  MLASIM_CHECK(p.scores && p.block_table && p.token_row && p.token_pos && p.slots, "dsa_topk: null pointer");
  const auto stream = static_cast<cudaStream_t>(p.stream);
  MLASIM_LAUNCH(static_cast<unsigned>(p.num_tokens), kTopkThreads, 0, stream, dsa_topk_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
