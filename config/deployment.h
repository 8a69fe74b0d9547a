// What a deployment is made of, as vLLM 0.33.0 sees it when it picks an attention backend: the
// GPU (its CUDA compute capability or ROCm architecture) and the KV-cache dtype
// (vllm/config/cache.py CacheDType).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/engine_enums.h"

namespace mlasim {

enum class GpuKind { kA100, kL40s, kH100, kH200, kH20, kB200, kGB200, kB300, kGB300, kRtxPro6000, kRtx5090, kMi300x, kMi325x, kMi355x };

enum class GpuVendor { kNvidia, kAmd };

struct GpuInfo {
  GpuKind kind;
  const char* name;          // scenario / CLI name: h200
  const char* display;       // NVIDIA H200
  GpuVendor vendor;
  int major = 0, minor = 0;  // CUDA compute capability (NVIDIA)
  const char* gcn_arch = ""; // ROCm architecture (AMD): gfx942, gfx950
};

const GpuInfo& gpu_info(GpuKind kind);
std::optional<GpuKind> parse_gpu(const std::string& name);
std::vector<std::string> gpu_names();

// vLLM's CacheDType values that serve MLA (vllm/config/cache.py).
enum class KvCacheDtype { kAuto, kBfloat16, kFloat16, kFp8, kFp8E4m3, kFp8E5m2, kFp8DsMla, kNvfp4DsMla, kNvfp4 };

const char* to_string(KvCacheDtype d);
std::optional<KvCacheDtype> parse_kv_cache_dtype(const std::string& s);
std::vector<std::string> kv_cache_dtype_names();
// vllm/v1/kv_cache_interface.py is_quantized_kv_cache: anything but auto / bfloat16 / float16.
bool is_quantized_kv_cache(KvCacheDtype d);
// The dtype a sparse MLA backend's layers really use (_canonicalize_sparse_mla_kv_cache_dtype,
// model_executor/layers/attention/mla_attention.py ~359): FLASHMLA_SPARSE serves every quantized
// dtype but nvfp4_ds_mla as fp8_ds_mla, FLASHINFER_MLA_SPARSE_SM120 auto, fp8 and fp8_e4m3.
KvCacheDtype canonical_sparse_mla_kv_cache_dtype(AttentionBackendKind backend, KvCacheDtype d);

}  // namespace mlasim
