// fp8 KV caches on the GPU (docs/spec/mla.md §11): the quantized cache write (vLLM's
// concat_and_cache_mla with an fp8 dtype, and concat_and_cache_ds_mla for fp8_ds_mla's 656-byte
// rows) and the gather that reads rows back in bf16 (gather_and_maybe_dequant_cache /
// cp_gather_and_upconvert), for the prefill form's context. Host-only header (no CUDA types).
#pragma once

#include <cstdint>

namespace mlasim {

// How a cache row is stored: [c_kv (512) | k_pe (64)] as bf16 (1152 B), as e4m3 with one
// per-tensor scale (576 B), or as fp8_ds_mla (656 B: 512 e4m3, 4 fp32 tile scales, 64 bf16).
enum class CacheFormat { kBf16, kFp8PerTensor, kFp8DsMla };

inline constexpr int kCacheRkv = 512, kCacheDr = 64;
constexpr int cache_row_bytes(CacheFormat f) {
  return f == CacheFormat::kBf16 ? (kCacheRkv + kCacheDr) * 2 : f == CacheFormat::kFp8PerTensor ? kCacheRkv + kCacheDr : 656;
}

struct CacheWriteQuantizedParams {
  int num_tokens = 0;
  CacheFormat format = CacheFormat::kFp8PerTensor;  // kFp8PerTensor or kFp8DsMla
  int num_slots = 0;            // slots of the cache (a slot ≥ this is a caller bug: trapped)
  const void* kv_c = nullptr;   // [num_tokens, kv_c_stride] bf16, first 512 columns used
  long long kv_c_stride = 512;
  const void* k_pe = nullptr;   // [num_tokens, k_pe_stride] bf16, first 64 columns used
  long long k_pe_stride = 64;
  const int* slot_mapping = nullptr;  // [num_tokens]; −1 = skip
  float k_scale = 1.0f;         // kFp8PerTensor: e4m3(x / k_scale)
  std::uint8_t* kv_cache = nullptr;   // [num_slots, cache_row_bytes(format)]
  void* stream = nullptr;
};
void cache_write_quantized(const CacheWriteQuantizedParams& p);

struct CacheGatherParams {
  int num_rows = 0;
  CacheFormat format = CacheFormat::kBf16;
  const std::uint8_t* kv_cache = nullptr;  // [slots, cache_row_bytes(format)]
  const int* slots = nullptr;              // [num_rows]; −1 reads as zeros
  float k_scale = 1.0f;                    // kFp8PerTensor's scale
  float read_scale_factor = 1.0f;          // 1, or 448/240 under fp8_dequant_scale_wrong
  void* out = nullptr;                     // [num_rows, 576] bf16: what a reader gets
  void* stream = nullptr;
};
void cache_gather_dequant(const CacheGatherParams& p);

}  // namespace mlasim
