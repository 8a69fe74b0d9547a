// vLLM 0.33.0's MLA attention backends as its selector sees them: each class's supported dtypes,
// KV-cache dtypes, head sizes, kernel block sizes, compute capabilities and combination checks
// (validate_configuration, vllm/v1/attention/backend.py ~279-369). What its metadata builder sets
// (threshold, query-length support) is on its card (config/backend_card.h). docs/spec/routing.md
// §3 cites each entry.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/deployment.h"
#include "config/engine_enums.h"

namespace mlasim {

// A kernel block size: exactly `size`, or (multiple_of) any multiple of it (vLLM's MultipleOf).
struct KernelBlockSize {
  int size = 16;
  bool multiple_of = false;
};

// What validate_configuration and the builders read: AttentionSelectorConfig plus the model
// config fields some backends consult (get_current_vllm_config().model_config.hf_text_config).
struct BackendQuery {
  GpuVendor vendor = GpuVendor::kNvidia;
  int major = 9, minor = 0;           // DeviceCapability
  int head_size = 576;                // kv_lora_rank + qk_rope_head_dim
  bool dtype_is_bf16 = true;          // model dtype bfloat16 (true) or float16 (false); float32 serves
                                      // on no MLA backend
  bool dtype_is_fp32 = false;
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kAuto;
  std::optional<int> block_size;      // set only when the user gave --block-size
  bool use_sparse = false;
  int num_heads_per_rank = 128;
  int qk_nope_head_dim = 128, qk_rope_head_dim = 64, kv_lora_rank = 512, v_head_dim = 128;
  std::optional<int> index_topk;
  int num_speculative_tokens = 0;     // k
  bool parallel_drafting = false;     // max_decode_query_len = 1 + 2k instead of 1 + k
};

// vLLM's AttentionBackendEnum name (FLASH_ATTN_MLA) and where the class is.
const char* vllm_backend_name(AttentionBackendKind kind);
const char* backend_source(AttentionBackendKind kind);
std::optional<AttentionBackendKind> parse_vllm_backend_name(const std::string& name);
bool is_sparse_backend(AttentionBackendKind kind);
// FLASHMLA_SPARSE_DSV4 / FLASHINFER_MLA_SPARSE_DSV4: DeepSeek-V4's own attention (DeepseekV4Attention),
// every token in the absorbed form, decode rows on the sparse decode kernel and the rest on the
// sparse prefill kernel (models/deepseek_v4/nvidia/flashmla.py ~143-172, flashinfer_sparse.py ~359).
bool is_deepseek_v4_backend(AttentionBackendKind kind);

// validate_configuration's reasons, in vLLM's order and words; empty = valid.
std::vector<std::string> validate_configuration(AttentionBackendKind kind, const BackendQuery& q);

// get_supported_kernel_block_sizes(kv_cache_spec): `with_spec` as the worker calls it (the
// quantized-cache variant of FLASHMLA_SPARSE on SM100), without as the platform's selection does.
std::vector<KernelBlockSize> supported_kernel_block_sizes(AttentionBackendKind kind, const BackendQuery& q,
                                                          bool with_spec = false);
bool supports_block_size(AttentionBackendKind kind, const BackendQuery& q, int block_size);
std::string kernel_block_sizes_text(const std::vector<KernelBlockSize>& sizes);  // "[MultipleOf(16)]"

}  // namespace mlasim
