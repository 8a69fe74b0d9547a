// Writes each token's latent row [c_kv (512) | k_pe (64)] (bf16) into its paged-cache slot given the
// slot mapping (vLLM's concat_and_cache_mla for the bf16 cache). Host-only header (no CUDA types).
#pragma once

namespace mlasim {

struct CacheWriteParams {
  int num_tokens = 0;
  int kv_lora_rank = 512;    // c_kv columns (r_kv)
  int rope_dim = 64;         // k_pe columns (d_r); cache row = kv_lora_rank + rope_dim
  int num_slots = 0;         // num_blocks · block_size (slots ≥ this are a caller bug; checked on device)
  const void* kv_c = nullptr;   // [num_tokens, kv_c_stride] bf16, first kv_lora_rank columns used
  long long kv_c_stride = 512;  // elements between consecutive tokens' c_kv
  const void* k_pe = nullptr;   // [num_tokens, k_pe_stride] bf16, first rope_dim columns used
  long long k_pe_stride = 64;   // elements between consecutive tokens' k_pe
  const int* slot_mapping = nullptr;  // [num_tokens] int32: block · block_size + offset; −1 = skip
  void* kv_cache = nullptr;     // [num_slots, kv_lora_rank + rope_dim] bf16 (= [num_blocks, block_size, 576])
  void* stream = nullptr;       // cudaStream_t
};

// Asynchronous on p.stream. Uses 16-byte copies when every pointer and stride allows, else 2-byte.
void cache_write(const CacheWriteParams& p);

}  // namespace mlasim
