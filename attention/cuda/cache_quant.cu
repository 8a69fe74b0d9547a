// fp8 cache write and gather (attention/cuda/cache_quant.h). One CTA of 128 threads per token:
// thread i owns element i of each 128-value tile, so fp8_ds_mla's per-tile max is one reduction
// over the CTA (warp shuffles, then 4 warps through shared memory), as concat_and_cache_ds_mla does.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

#include "attention/cuda/cache_quant.h"
#include "attention/cuda/cache_row.cuh"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/fp8.cuh"
#include "attention/cuda/launch.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

constexpr int kThreads = 128, kTiles = kCacheRkv / kThreads;

__global__ void __launch_bounds__(kThreads) cache_write_quantized_kernel(const CacheWriteQuantizedParams p) {
  __shared__ float warp_max[kTiles][kThreads / 32];
  const int64_t token = blockIdx.x;
  const int slot = p.slot_mapping[token];
  if (slot < 0) return;  // uniform over the CTA
  if (slot >= p.num_slots) __trap();
  const int i = threadIdx.x, lane = i & 31, warp = i >> 5;
  const auto* kv_c = static_cast<const __nv_bfloat16*>(p.kv_c) + token * p.kv_c_stride;
  const auto* k_pe = static_cast<const __nv_bfloat16*>(p.k_pe) + token * p.k_pe_stride;
  uint8_t* row = p.kv_cache + static_cast<int64_t>(slot) * cache_row_bytes(p.format);
  float x[kTiles];
#pragma unroll
  for (int t = 0; t < kTiles; ++t) x[t] = __bfloat162float(kv_c[t * kThreads + i]);
  if (p.format == CacheFormat::kFp8PerTensor) {
#pragma unroll
    for (int t = 0; t < kTiles; ++t) row[t * kThreads + i] = fp8::e4m3_bits(fp8::round_e4m3(x[t] / p.k_scale));
    if (i < kCacheDr) row[kCacheRkv + i] = fp8::e4m3_bits(fp8::round_e4m3(__bfloat162float(k_pe[i]) / p.k_scale));
    return;
  }
  // fp8_ds_mla: per tile s = max(max|x| / 448, FLT_MIN), bytes e4m3(x / s), then the 4 scales, then k_pe.
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    float m = fabsf(x[t]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) warp_max[t][warp] = m;
  }
  __syncthreads();
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const float amax = fmaxf(fmaxf(warp_max[t][0], warp_max[t][1]), fmaxf(warp_max[t][2], warp_max[t][3]));
    const float scale = fmaxf(amax / fp8::kE4m3Max, FLT_MIN);
    row[t * kThreads + i] = fp8::e4m3_bits(fp8::round_e4m3(x[t] / scale));
    if (i == 0) *reinterpret_cast<float*>(row + kCacheRkv + 4 * t) = scale;
  }
  if (i < kCacheDr) reinterpret_cast<__nv_bfloat16*>(row + kCacheRkv + 4 * kTiles)[i] = k_pe[i];
}

__global__ void __launch_bounds__(kThreads) cache_gather_dequant_kernel(const CacheGatherParams p) {
  const int64_t r = blockIdx.x;
  const int slot = p.slots[r];
  auto* out = static_cast<__nv_bfloat16*>(p.out) + r * (kCacheRkv + kCacheDr);
  const uint8_t* row = p.kv_cache + static_cast<int64_t>(slot < 0 ? 0 : slot) * cache_row_bytes(p.format);
  for (int c = threadIdx.x; c < kCacheRkv + kCacheDr; c += kThreads)
    out[c] = __float2bfloat16(slot < 0 ? 0.0f : cache_row_value(p.format, row, c, p.k_scale, p.read_scale_factor));
}

}  // namespace

void cache_write_quantized(const CacheWriteQuantizedParams& p) {
  MLASIM_CHECK(p.format != CacheFormat::kBf16, "cache_write_quantized: a bf16 cache is written by cache_write");
  MLASIM_CHECK(p.num_tokens >= 0 && p.num_slots >= 0, "cache_write_quantized: negative size");
  if (p.num_tokens == 0) return;
  MLASIM_CHECK(p.kv_c && p.k_pe && p.slot_mapping && p.kv_cache, "cache_write_quantized: null pointer");
  MLASIM_CHECK(p.kv_c_stride >= kCacheRkv && p.k_pe_stride >= kCacheDr, "cache_write_quantized: stride below row width");
  MLASIM_CHECK(p.k_scale > 0.0f, "cache_write_quantized: k_scale must be positive");
  const auto stream = static_cast<cudaStream_t>(p.stream);
  MLASIM_LAUNCH(static_cast<unsigned>(p.num_tokens), kThreads, 0, stream, cache_write_quantized_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void cache_gather_dequant(const CacheGatherParams& p) {
  MLASIM_CHECK(p.num_rows >= 0, "cache_gather_dequant: negative size");
  if (p.num_rows == 0) return;
  MLASIM_CHECK(p.kv_cache && p.slots && p.out, "cache_gather_dequant: null pointer");
  const auto stream = static_cast<cudaStream_t>(p.stream);
  MLASIM_LAUNCH(static_cast<unsigned>(p.num_rows), kThreads, 0, stream, cache_gather_dequant_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
