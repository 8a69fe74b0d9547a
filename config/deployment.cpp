// The GPU table (compute capabilities from NVIDIA's CUDA GPU list; ROCm architectures from AMD's
// ROCm support matrix) and vLLM 0.33.0's KV-cache dtype names.
#include "config/deployment.h"

#include <array>

namespace mlasim {
namespace {

constexpr std::array<GpuInfo, 14> kGpus{{
    {GpuKind::kA100, "a100", "NVIDIA A100", GpuVendor::kNvidia, 8, 0, ""},
    {GpuKind::kL40s, "l40s", "NVIDIA L40S", GpuVendor::kNvidia, 8, 9, ""},
    {GpuKind::kH100, "h100", "NVIDIA H100", GpuVendor::kNvidia, 9, 0, ""},
    {GpuKind::kH200, "h200", "NVIDIA H200", GpuVendor::kNvidia, 9, 0, ""},
    {GpuKind::kH20, "h20", "NVIDIA H20", GpuVendor::kNvidia, 9, 0, ""},
    {GpuKind::kB200, "b200", "NVIDIA B200", GpuVendor::kNvidia, 10, 0, ""},
    {GpuKind::kGB200, "gb200", "NVIDIA GB200", GpuVendor::kNvidia, 10, 0, ""},
    {GpuKind::kB300, "b300", "NVIDIA B300", GpuVendor::kNvidia, 10, 3, ""},
    {GpuKind::kGB300, "gb300", "NVIDIA GB300", GpuVendor::kNvidia, 10, 3, ""},
    {GpuKind::kRtxPro6000, "rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", GpuVendor::kNvidia, 12, 0, ""},
    {GpuKind::kRtx5090, "rtx-5090", "NVIDIA GeForce RTX 5090", GpuVendor::kNvidia, 12, 0, ""},
    {GpuKind::kMi300x, "mi300x", "AMD Instinct MI300X", GpuVendor::kAmd, 9, 4, "gfx942"},
    {GpuKind::kMi325x, "mi325x", "AMD Instinct MI325X", GpuVendor::kAmd, 9, 4, "gfx942"},
    {GpuKind::kMi355x, "mi355x", "AMD Instinct MI355X", GpuVendor::kAmd, 9, 5, "gfx950"},
}};

constexpr std::array<std::pair<KvCacheDtype, const char*>, 9> kKvDtypes{{
    {KvCacheDtype::kAuto, "auto"},
    {KvCacheDtype::kBfloat16, "bfloat16"},
    {KvCacheDtype::kFloat16, "float16"},
    {KvCacheDtype::kFp8, "fp8"},
    {KvCacheDtype::kFp8E4m3, "fp8_e4m3"},
    {KvCacheDtype::kFp8E5m2, "fp8_e5m2"},
    {KvCacheDtype::kFp8DsMla, "fp8_ds_mla"},
    {KvCacheDtype::kNvfp4DsMla, "nvfp4_ds_mla"},
    {KvCacheDtype::kNvfp4, "nvfp4"},
}};

}  // namespace

const GpuInfo& gpu_info(GpuKind kind) {
  for (const auto& g : kGpus)
    if (g.kind == kind) return g;
  return kGpus[3];
}

std::optional<GpuKind> parse_gpu(const std::string& name) {
  for (const auto& g : kGpus)
    if (name == g.name) return g.kind;
  return std::nullopt;
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> out;
  for (const auto& g : kGpus) out.emplace_back(g.name);
  return out;
}

const char* to_string(KvCacheDtype d) {
  for (const auto& [v, n] : kKvDtypes)
    if (v == d) return n;
  return "?";
}

std::optional<KvCacheDtype> parse_kv_cache_dtype(const std::string& s) {
  for (const auto& [v, n] : kKvDtypes)
    if (s == n) return v;
  return std::nullopt;
}

std::vector<std::string> kv_cache_dtype_names() {
  std::vector<std::string> out;
  for (const auto& [v, n] : kKvDtypes) out.emplace_back(n);
  return out;
}

bool is_quantized_kv_cache(KvCacheDtype d) {
  return d != KvCacheDtype::kAuto && d != KvCacheDtype::kBfloat16 && d != KvCacheDtype::kFloat16;
}

KvCacheDtype canonical_sparse_mla_kv_cache_dtype(AttentionBackendKind backend, KvCacheDtype d) {
  using D = KvCacheDtype;
  if (backend == AttentionBackendKind::kFlashMlaSparse && is_quantized_kv_cache(d)) return d == D::kNvfp4DsMla ? d : D::kFp8DsMla;
  if (backend == AttentionBackendKind::kFlashInferMlaSparseSm120 && (d == D::kAuto || d == D::kFp8 || d == D::kFp8E4m3))
    return D::kFp8DsMla;
  return d;
}

}  // namespace mlasim
