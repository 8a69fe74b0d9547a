// Sparse MLA in the absorbed form on the GPU (docs/spec/mla.md §10-§11): each query token attends
// to the cache rows its top-k selected (global slot ids, −1 skipped), as FlashMLA's sparse decode
// and prefill kernels take them, reading the cache in any of its formats (bf16, fp8 per tensor,
// fp8_ds_mla) and, on an fp8 cache whose backend does so, quantizing the query to e4m3. With every
// position listed it is dense MQA over an fp8 cache. Host-only header (no CUDA types).
#pragma once

#include "attention/cuda/cache_quant.h"

namespace mlasim {

inline constexpr int kMlaSparseHeadsPerCta = 16;
inline constexpr int kMlaSparseKeysPerTile = 32;

struct MlaSparseParams {
  int num_tokens = 0;
  int num_heads = 0;       // query heads
  int topk = 0;            // entries of `indices` per token
  float softmax_scale = 0;
  CacheFormat format = CacheFormat::kBf16;
  float k_scale = 1.0f;             // kFp8PerTensor
  bool quantize_query = false;      // e4m3(q / q_scale) · q_scale first (fp8 per tensor only)
  float q_scale = 1.0f;
  const void* q = nullptr;          // [num_tokens, num_heads, 576] bf16 (q_lat | q_pe)
  const std::uint8_t* kv_cache = nullptr;  // [slots, cache_row_bytes(format)]
  const int* indices = nullptr;     // [num_tokens, topk] slots; −1 = none
  void* out = nullptr;              // [num_tokens, num_heads, 512] bf16
  float* lse = nullptr;             // [num_tokens, num_heads] natural log; +inf with no key
  void* stream = nullptr;
};

// Dynamic shared memory per CTA (bytes): the query tile, one key tile, the scores.
int mla_sparse_smem_bytes();
void mla_sparse_fwd(const MlaSparseParams& p);

}  // namespace mlasim
