// Reading one value of a latent cache row in any of its formats (attention/cuda/cache_quant.h), as
// every kernel that reads the cache does: bf16 as stored; fp8 per tensor as e4m3 · k_scale; fp8_ds_mla
// as bf16(e4m3 · tile scale), its RoPE part as stored bf16. `read_scale_factor` is 1 but under the
// fp8_dequant_scale_wrong fault.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "attention/cuda/cache_quant.h"
#include "attention/cuda/fp8.cuh"

namespace mlasim {

__device__ __forceinline__ float cache_row_value(CacheFormat f, const uint8_t* row, int c, float k_scale,
                                                 float read_scale_factor = 1.0f) {
  switch (f) {
    case CacheFormat::kBf16:
      return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row)[c]);
    case CacheFormat::kFp8PerTensor:
      return fp8::e4m3_value(row[c]) * k_scale * read_scale_factor;
    case CacheFormat::kFp8DsMla:
    default:
      if (c >= kCacheRkv) return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(row + kCacheRkv + 16)[c - kCacheRkv]);
      return fp8::round_bf16(fp8::e4m3_value(row[c]) *
                             (reinterpret_cast<const float*>(row + kCacheRkv)[c / 128] * read_scale_factor));
  }
}

}  // namespace mlasim
