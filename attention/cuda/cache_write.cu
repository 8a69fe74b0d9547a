// The latent cache write: one warp per token copies c_kv then k_pe into the token's cache row.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/cuda/cache_write.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

constexpr int kWarpsPerCta = 8;

// Copies n elements of 2 bytes from src to dst with `lane` of 32, in units of U (uint4 or uint16_t).
template <typename U>
__device__ __forceinline__ void copy_row(const __nv_bfloat16* src, __nv_bfloat16* dst, int n, int lane) {
  constexpr int kPer = static_cast<int>(sizeof(U) / sizeof(__nv_bfloat16));
  const U* s = reinterpret_cast<const U*>(src);
  U* d = reinterpret_cast<U*>(dst);
  for (int i = lane; i < n / kPer; i += 32) d[i] = s[i];
}

template <typename U>
__global__ void __launch_bounds__(kWarpsPerCta * 32) cache_write_kernel(const CacheWriteParams p) {
  const int64_t token = static_cast<int64_t>(blockIdx.x) * kWarpsPerCta + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (token >= p.num_tokens) return;
  const int slot = p.slot_mapping[token];
  if (slot < 0) return;  // padding token: no cache row
  if (slot >= p.num_slots) __trap();  // a slot outside the cache is a caller bug: fail loudly
  const int row_dim = p.kv_lora_rank + p.rope_dim;
  auto* row = static_cast<__nv_bfloat16*>(p.kv_cache) + static_cast<int64_t>(slot) * row_dim;
  copy_row<U>(static_cast<const __nv_bfloat16*>(p.kv_c) + token * p.kv_c_stride, row, p.kv_lora_rank, lane);
  copy_row<U>(static_cast<const __nv_bfloat16*>(p.k_pe) + token * p.k_pe_stride, row + p.kv_lora_rank, p.rope_dim,
              lane);
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

void cache_write(const CacheWriteParams& p) {
  MLASIM_CHECK(p.num_tokens >= 0 && p.kv_lora_rank >= 0 && p.rope_dim >= 0 && p.num_slots >= 0,
               "cache_write: negative size");
  if (p.num_tokens == 0) return;
  MLASIM_CHECK(p.kv_c && p.k_pe && p.slot_mapping && p.kv_cache, "cache_write: null pointer");
  MLASIM_CHECK(p.kv_c_stride >= p.kv_lora_rank && p.k_pe_stride >= p.rope_dim, "cache_write: stride below row width");
  const bool vec = aligned16(p.kv_c) && aligned16(p.k_pe) && aligned16(p.kv_cache) && p.kv_c_stride % 8 == 0 &&
                   p.k_pe_stride % 8 == 0 && p.kv_lora_rank % 8 == 0 && p.rope_dim % 8 == 0;
  const unsigned grid = static_cast<unsigned>((p.num_tokens + kWarpsPerCta - 1) / kWarpsPerCta);
  const auto stream = static_cast<cudaStream_t>(p.stream);
  if (vec)
    MLASIM_LAUNCH(grid, kWarpsPerCta * 32, 0, stream, cache_write_kernel<uint4>)(p);
  else
    MLASIM_LAUNCH(grid, kWarpsPerCta * 32, 0, stream, cache_write_kernel<uint16_t>)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
