// Sparse MLA, absorbed form (attention/cuda/mla_sparse.h). fp32 FMA, no tensor cores (v1).
// Grid (tokens, ceil(H / 16)); CTA = 256 threads; shared memory: Q [16][576] and one tile of
// K [32][576] in fp32 (dequantized on load, so every format reads through one path), S [16][32].
// Per tile: the 32 selected rows are gathered (a −1 index is a dead key), each thread computes two
// of the 16 × 32 scores, then the 16 threads of a head run the online softmax over the tile (base
// 2) and add P V for their 32 of the 512 output columns. Rows with no live key: O = 0, LSE = +inf.
// The model is FlashMLA's sparse fp8 decode (sm90::decode::sparse_fp8, 64 heads per CTA, the top-k in
// blocks of 64 split across SMs, e4m3 dequantized to bf16 in shared memory with its tile scales, then
// wgmma), which vLLM's FLASHMLA_SPARSE also runs for prefill tokens in its mixed-batch mode (every
// token of the batch as one decode batch, flashmla_sparse.py): so one kernel serves both forms here.
// What v1 leaves out: tensor cores, split-KV, and sharing a gathered tile among head groups (each
// group's CTA gathers the same rows again, through L2).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/cuda/cache_row.cuh"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/fp8.cuh"
#include "attention/cuda/launch.cuh"
#include "attention/cuda/mla_sparse.h"
#include "base/check.h"

namespace mlasim {
namespace {

constexpr int HG = kMlaSparseHeadsPerCta, BN = kMlaSparseKeysPerTile, D = kCacheRkv + kCacheDr, DV = kCacheRkv;
constexpr int kThreads = 256, kColsPerThread = DV / (kThreads / HG);  // 32
constexpr int kSmemQ = 0, kSmemK = kSmemQ + HG * D * 4, kSmemS = kSmemK + BN * D * 4, kSmemValid = kSmemS + HG * BN * 4;
constexpr int kSmemBytes = kSmemValid + BN * 4;
constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;
static_assert(kThreads == HG * (DV / kColsPerThread) && 2 * kThreads == HG * BN, "thread layout");

__global__ void __launch_bounds__(kThreads, 1) mla_sparse_kernel(const MlaSparseParams p) {
  MLASIM_DYNAMIC_SMEM(smem);
  float* const sQ = reinterpret_cast<float*>(smem + kSmemQ);
  float* const sK = reinterpret_cast<float*>(smem + kSmemK);
  float* const sS = reinterpret_cast<float*>(smem + kSmemS);
  int* const sValid = reinterpret_cast<int*>(smem + kSmemValid);
  const int64_t t = blockIdx.x;
  const int h0 = blockIdx.y * HG, nh = min(HG, p.num_heads - h0);
  const int tid = threadIdx.x;

  const auto* q = static_cast<const __nv_bfloat16*>(p.q) + (t * p.num_heads + h0) * D;
  for (int i = tid; i < HG * D; i += kThreads) {
    float v = i < nh * D ? __bfloat162float(q[i]) : 0.f;
    if (p.quantize_query) v = fp8::round_e4m3(v / p.q_scale) * p.q_scale;
    sQ[i] = v;
  }
  const int* idx = p.indices + t * p.topk;
  const int row_bytes = cache_row_bytes(p.format);
  const float scale_log2 = p.softmax_scale * kLog2e;

  const int head = tid / (kThreads / HG), col0 = (tid % (kThreads / HG)) * kColsPerThread;
  float acc[kColsPerThread];
#pragma unroll
  for (int c = 0; c < kColsPerThread; ++c) acc[c] = 0.f;
  float m_run = -INFINITY, l_run = 0.f;

  for (int k0 = 0; k0 < p.topk; k0 += BN) {
    __syncthreads();  // Q loaded; the previous tile's readers are done
    if (tid < BN) sValid[tid] = k0 + tid < p.topk ? idx[k0 + tid] : -1;
    __syncthreads();
    for (int i = tid; i < BN * D; i += kThreads) {
      const int key = i / D, c = i % D, slot = sValid[key];
      sK[i] = slot < 0 ? 0.f : cache_row_value(p.format, p.kv_cache + static_cast<int64_t>(slot) * row_bytes, c, p.k_scale);
    }
    __syncthreads();
    // Scores: thread tid computes (head, key) pairs 2·tid and 2·tid + 1.
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int pair = 2 * tid + u, hh = pair / BN, key = pair % BN;
      float s = -INFINITY;
      if (hh < nh && sValid[key] >= 0) {
        const float* a = sQ + hh * D;
        const float* b = sK + key * D;
        float d = 0.f;
        for (int c = 0; c < D; ++c) d += a[c] * b[c];
        s = d * scale_log2;
      }
      sS[hh * BN + key] = s;
    }
    __syncthreads();
    if (head >= nh) continue;
    const float* srow = sS + head * BN;
    float mx = -INFINITY;
    for (int key = 0; key < BN; ++key) mx = fmaxf(mx, srow[key]);
    const float m_new = fmaxf(m_run, mx);
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    const float alpha = exp2f(m_run - m_use);
    l_run *= alpha;
#pragma unroll
    for (int c = 0; c < kColsPerThread; ++c) acc[c] *= alpha;
    for (int key = 0; key < BN; ++key) {
      const float pr = exp2f(srow[key] - m_use);
      if (pr == 0.f) continue;
      l_run += pr;
      const float* v = sK + key * D + col0;
#pragma unroll
      for (int c = 0; c < kColsPerThread; ++c) acc[c] += pr * v[c];
    }
    m_run = m_new;
  }
  if (head >= nh) return;
  const int hq = h0 + head;
  auto* out = static_cast<__nv_bfloat16*>(p.out) + (t * p.num_heads + hq) * DV + col0;
  const float inv = l_run > 0.f ? 1.f / l_run : 0.f;
#pragma unroll
  for (int c = 0; c < kColsPerThread; ++c) out[c] = __float2bfloat16(acc[c] * inv);
  if (col0 == 0) p.lse[t * p.num_heads + hq] = l_run > 0.f ? (m_run + log2f(l_run)) * kLn2 : INFINITY;
}

}  // namespace

int mla_sparse_smem_bytes() { return kSmemBytes; }

void mla_sparse_fwd(const MlaSparseParams& p) {
  MLASIM_CHECK(p.num_tokens >= 0 && p.num_heads >= 1 && p.topk >= 0, "mla_sparse_fwd: bad shape");
  MLASIM_CHECK(p.softmax_scale > 0.f, "mla_sparse_fwd: softmax_scale must be set");
  MLASIM_CHECK(!p.quantize_query || p.format == CacheFormat::kFp8PerTensor,
               "mla_sparse_fwd: only the per-tensor fp8 cache quantizes the query");
  if (p.num_tokens == 0) return;
  MLASIM_CHECK(p.q && p.kv_cache && (p.indices || p.topk == 0) && p.out && p.lse, "mla_sparse_fwd: null pointer");
  const auto stream = static_cast<cudaStream_t>(p.stream);
  MLASIM_CUDA_CHECK(cudaFuncSetAttribute(mla_sparse_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  const dim3 grid(static_cast<unsigned>(p.num_tokens), static_cast<unsigned>((p.num_heads + HG - 1) / HG));
  MLASIM_LAUNCH(grid, kThreads, kSmemBytes, stream, mla_sparse_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
