// The MLA backend classes of vLLM 0.33.0 (line numbers: that release's files under
// vllm/v1/attention/backends/mla/ unless named otherwise). Kernel-package probes
// (vllm._flashmla_C, FA3, FlashInfer's sparse APIs, tokenspeed_mla, the FA4 CuTe kernels) are taken
// as present, as in the official CUDA wheel; only the device and the model decide.
#include "config/mla_backends.h"

#include <algorithm>
#include <array>

namespace mlasim {
namespace {

using K = AttentionBackendKind;
using D = KvCacheDtype;

enum DtypeSet { kHalfAndBf16, kBf16Only };

struct BackendClass {
  K kind;
  const char* vllm_name;
  const char* source;
  DtypeSet dtypes;
  std::vector<D> kv_dtypes;           // empty: any
  std::vector<int> head_sizes;        // empty: any
  std::vector<int> majors;            // supported compute-capability majors; empty: any
  bool sparse;
};

const std::vector<int> kMlaCommonHeads{320, 512, 576};  // MLACommonBackend, mla_attention.py ~1623
const std::vector<D> kKvFive{D::kAuto, D::kFloat16, D::kBfloat16, D::kFp8, D::kFp8E4m3};

const std::vector<BackendClass>& classes() {
  static const std::vector<BackendClass> table{
      {K::kFlashAttnMla, "FLASH_ATTN_MLA", "flashattn_mla.py ~40-87", kHalfAndBf16,
       {D::kAuto, D::kFloat16, D::kBfloat16}, kMlaCommonHeads, {9}, false},
      {K::kFlashMla, "FLASHMLA", "flashmla.py ~46-98", kHalfAndBf16, kKvFive, kMlaCommonHeads, {9, 10}, false},
      {K::kFlashInferMla, "FLASHINFER_MLA", "flashinfer_mla.py ~193-250", kHalfAndBf16, kKvFive, kMlaCommonHeads,
       {10}, false},
      {K::kCutlassMla, "CUTLASS_MLA", "cutlass_mla.py ~38-66", kHalfAndBf16, kKvFive, kMlaCommonHeads, {10}, false},
      {K::kTritonMla, "TRITON_MLA", "triton_mla.py ~99-149", kHalfAndBf16, kKvFive, {}, {}, false},
      {K::kTokenspeedMla, "TOKENSPEED_MLA", "tokenspeed_mla.py ~101-171", kHalfAndBf16, {D::kFp8, D::kFp8E4m3},
       kMlaCommonHeads, {10}, false},
      {K::kRocmAiterMla, "ROCM_AITER_MLA", "rocm_aiter_mla.py ~498-600", kHalfAndBf16,
       {D::kAuto, D::kFloat16, D::kBfloat16, D::kFp8, D::kFp8E4m3, D::kFp8E5m2}, {}, {}, false},
      {K::kRocmAiterTritonMla, "ROCM_AITER_TRITON_MLA", "aiter_triton_mla.py ~6", kHalfAndBf16,
       {D::kAuto, D::kFloat16, D::kBfloat16, D::kFp8, D::kFp8E4m3, D::kFp8E5m2}, {}, {}, false},
      {K::kFlashMlaSparse, "FLASHMLA_SPARSE", "flashmla_sparse.py ~147-256", kBf16Only,
       {D::kAuto, D::kBfloat16, D::kFp8DsMla, D::kFp8, D::kNvfp4DsMla}, {576, 512}, {9, 10}, true},
      {K::kFlashInferMlaSparse, "FLASHINFER_MLA_SPARSE", "flashinfer_mla_sparse.py ~80-161", kHalfAndBf16, kKvFive,
       {512, 576}, {10}, true},
      {K::kFlashInferMlaSparseSm90, "FLASHINFER_MLA_SPARSE_SM90", "flashinfer_mla_sparse_sm90.py ~146-224",
       kBf16Only, {D::kAuto, D::kBfloat16, D::kFp8, D::kFp8E4m3}, {512, 576}, {9}, true},
      {K::kFlashInferMlaSparseSm120, "FLASHINFER_MLA_SPARSE_SM120", "flashinfer_mla_sparse.py ~164-240", kBf16Only,
       {D::kAuto, D::kFp8, D::kFp8E4m3, D::kFp8DsMla}, {512, 576}, {12}, true},
      {K::kFlashAttnMlaSparse, "FLASH_ATTN_MLA_SPARSE", "flashattn_mla_sparse.py ~41-117", kHalfAndBf16,
       {D::kAuto, D::kFloat16, D::kBfloat16}, {}, {9}, true},
      {K::kFlashAttnMlaSparseFa4, "FLASH_ATTN_MLA_SPARSE_FA4", "flashattn_mla_sparse.py ~275-342", kBf16Only,
       {D::kAuto, D::kBfloat16}, {576}, {10}, true},
      {K::kRocmAiterMlaSparse, "ROCM_AITER_MLA_SPARSE", "rocm_aiter_mla_sparse.py ~350-410", kHalfAndBf16, kKvFive,
       {}, {}, true},
      // DeepSeek-V4's own (vllm/models/deepseek_v4/sparse_mla.py ~42-120, ~292; nvidia/flashinfer_sparse.py ~104-181).
      {K::kFlashMlaSparseDsv4, "FLASHMLA_SPARSE_DSV4", "models/deepseek_v4/sparse_mla.py ~42-120, ~292", kBf16Only,
       {D::kAuto, D::kFp8DsMla, D::kFp8}, {512}, {9, 10}, true},
      {K::kFlashInferMlaSparseDsv4, "FLASHINFER_MLA_SPARSE_DSV4", "models/deepseek_v4/nvidia/flashinfer_sparse.py ~104-181",
       kBf16Only, {D::kAuto, D::kBfloat16, D::kFp8, D::kFp8E4m3, D::kFp8DsMla}, {512}, {10, 12}, true},
  };
  return table;
}

const BackendClass& cls(K kind) {
  for (const auto& c : classes())
    if (c.kind == kind) return c;
  return classes().front();
}

bool family(const BackendQuery& q, int major) { return q.vendor == GpuVendor::kNvidia && q.major == major; }

std::string capability_repr(const BackendQuery& q) {
  return "DeviceCapability(major=" + std::to_string(q.major) + ", minor=" + std::to_string(q.minor) + ")";
}

std::string kv_repr(const BackendQuery& q) { return to_string(q.kv_cache_dtype); }

// flash_attn_supports_mla (v1/attention/backends/fa_utils.py ~325): FA3 on a 9.x device.
bool flash_attn_supports_mla(const BackendQuery& q) { return family(q, 9); }

// FlashInferMLASparseTRTLLMBackend.supports_combination (flashinfer_mla_sparse.py ~109-161).
std::optional<std::string> flashinfer_sparse_trtllm_combination(const BackendQuery& q) {
  if (q.kv_cache_dtype == D::kFp8DsMla) return std::string("FLASHINFER_MLA_SPARSE SM10 does not support fp8_ds_mla kv-cache dtype");
  if (q.qk_rope_head_dim == 0) {
    if (q.qk_nope_head_dim != 256 || q.kv_lora_rank != 512)
      return "FlashInfer native no-rope MLA requires qk_nope_head_dim=256 and kv_lora_rank=512, but got "
             "qk_nope_head_dim=" + std::to_string(q.qk_nope_head_dim) + ", kv_lora_rank=" + std::to_string(q.kv_lora_rank);
  } else if (q.qk_nope_head_dim != 128 && q.qk_nope_head_dim != 192) {
    return "FlashInfer MLA Sparse kernel requires qk_nope_head_dim in [128, 192], but got " +
           std::to_string(q.qk_nope_head_dim);
  }
  if (!q.index_topk) return std::string("FlashInfer MLA Sparse requires model with index_topk config");
  return std::nullopt;
}

// FlashMLASparseBackend.supports_combination (flashmla_sparse.py ~207-256).
std::optional<std::string> flashmla_sparse_combination(const BackendQuery& q) {
  if (q.head_size == 512) {
    const bool ok_cache = q.kv_cache_dtype == D::kAuto || q.kv_cache_dtype == D::kBfloat16 ||
                          q.kv_cache_dtype == D::kFloat16 || q.kv_cache_dtype == D::kFp8DsMla;
    if (ok_cache && q.major == 9) {
      if (q.qk_rope_head_dim != 0)
        return std::string("FLASHMLA_SPARSE supports head_size 512 only for rope-free (NoPE) models");
    } else {
      return "FLASHMLA_SPARSE supports head_size 512 only with bf16 or fp8_ds_mla kv-cache on SM90 (NoPE), got "
             "kv_cache_dtype=" + kv_repr(q) + ", capability=" + capability_repr(q);
    }
  }
  if (q.kv_cache_dtype == D::kNvfp4DsMla && q.major != 10)
    return std::string("FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype on SM100 (Blackwell)");
  return std::nullopt;
}

// FlashInferMLASparseSM120Backend.supports_combination (flashinfer_mla_sparse.py ~196-240).
std::optional<std::string> flashinfer_sparse_sm120_combination(const BackendQuery& q) {
  if (!q.dtype_is_bf16 || q.dtype_is_fp32) return std::string("dtype not supported");
  if (q.kv_cache_dtype != D::kAuto && q.kv_cache_dtype != D::kFp8 && q.kv_cache_dtype != D::kFp8E4m3 &&
      q.kv_cache_dtype != D::kFp8DsMla)
    return std::string("kv_cache_dtype not supported");
  if (!q.index_topk) return std::string("FLASHINFER_MLA_SPARSE_SM120 requires a model with index_topk config");
  if (*q.index_topk != 2048)
    return "FLASHINFER_MLA_SPARSE_SM120 requires index_topk=2048; got " + std::to_string(*q.index_topk);
  return std::nullopt;
}

// DeepseekV4FlashInferMLASparseBackend.supports_combination (deepseek_v4/nvidia/flashinfer_sparse.py ~144-177);
// FlashInfer's SM120 sparse MLA decode API taken as present.
std::optional<std::string> flashinfer_sparse_dsv4_combination(const BackendQuery& q) {
  const D d = q.kv_cache_dtype;
  if (q.major == 10) {
    if (d == D::kFp8DsMla) return std::string("FLASHINFER_MLA_SPARSE_DSV4 SM10x uses the plain per-tensor FP8 KV layout, not fp8_ds_mla");
    if (d != D::kAuto && d != D::kBfloat16 && d != D::kFp8 && d != D::kFp8E4m3) return std::string("kv_cache_dtype not supported");
    return std::nullopt;
  }
  if (q.major == 12) {
    if (d != D::kFp8 && d != D::kFp8E4m3 && d != D::kFp8DsMla) return std::string("kv_cache_dtype not supported");
    return std::nullopt;
  }
  return std::string("FLASHINFER_MLA_SPARSE_DSV4 requires SM10x or SM12x");
}

// FlashAttnMLASparseFA4Backend.supports_combination (flashattn_mla_sparse.py ~304-342).
std::optional<std::string> fa4_sparse_combination(const BackendQuery& q) {
  if (!q.index_topk || *q.index_topk % 128 != 0)
    return "FA4 sparse MLA requires index_topk % 128 == 0, got " +
           (q.index_topk ? std::to_string(*q.index_topk) : std::string("None"));
  if (q.kv_lora_rank != 512 || q.qk_rope_head_dim != 64)
    return "FA4 sparse MLA requires (kv_lora_rank, qk_rope_head_dim) == (512, 64), got (" +
           std::to_string(q.kv_lora_rank) + ", " + std::to_string(q.qk_rope_head_dim) + ")";
  const int h = q.num_heads_per_rank;
  if (h != 8 && h != 16 && h != 32 && h != 64 && h != 128)
    return "FA4 sparse MLA requires (8, 16, 32, 64, 128) gathered query heads, got num_heads=" +
           std::to_string(h) + " * dcp_size=1";
  return flashinfer_sparse_trtllm_combination(q);
}

std::optional<std::string> supports_combination(K kind, const BackendQuery& q) {
  switch (kind) {
    case K::kFlashAttnMla:  // flashattn_mla.py ~73-87
      if (!flash_attn_supports_mla(q)) return std::string("FlashAttention MLA not supported on this device");
      return std::nullopt;
    case K::kFlashMla:  // flashmla.py ~77-98, v1/attention/ops/flashmla.py ~51-74
      if (q.use_sparse) {
        if (!(family(q, 9) || family(q, 10)))
          return std::string("FlashMLA Sparse is only supported on Hopper and Blackwell DC devices.");
        return std::nullopt;
      }
      if (!family(q, 9)) return std::string("FlashMLA Dense is only supported on Hopper devices.");
      return std::nullopt;
    case K::kFlashInferMla:  // flashinfer_mla.py ~228-250
      if (q.qk_nope_head_dim != 64 && q.qk_nope_head_dim != 128 && q.qk_nope_head_dim != 192)
        return "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got " +
               std::to_string(q.qk_nope_head_dim);
      return std::nullopt;
    case K::kTokenspeedMla:  // tokenspeed_mla.py ~133-171
      if (q.qk_nope_head_dim != 128 || q.qk_rope_head_dim != 64 || q.v_head_dim != 128)
        return "tokenspeed_mla requires DeepSeek R1 MLA dimensions (qk_nope_head_dim=128, qk_rope_head_dim=64, "
               "v_head_dim=128), got (" + std::to_string(q.qk_nope_head_dim) + ", " +
               std::to_string(q.qk_rope_head_dim) + ", " + std::to_string(q.v_head_dim) + ")";
      return std::nullopt;
    case K::kFlashMlaSparse: return flashmla_sparse_combination(q);
    case K::kFlashInferMlaSparse: return flashinfer_sparse_trtllm_combination(q);
    case K::kFlashInferMlaSparseSm90:  // flashinfer_mla_sparse_sm90.py ~193-224
      if (!q.use_sparse) return std::string("FLASHINFER_MLA_SPARSE_SM90 requires sparse MLA");
      if (q.kv_lora_rank != 512) return std::string("FLASHINFER_MLA_SPARSE_SM90 requires kv_lora_rank=512");
      if (q.qk_rope_head_dim != 0 && q.qk_rope_head_dim != 64)
        return std::string("FLASHINFER_MLA_SPARSE_SM90 requires qk_rope_head_dim in (0, 64)");
      return std::nullopt;
    case K::kFlashInferMlaSparseSm120: return flashinfer_sparse_sm120_combination(q);
    case K::kFlashInferMlaSparseDsv4: return flashinfer_sparse_dsv4_combination(q);
    case K::kFlashAttnMlaSparse:  // flashattn_mla_sparse.py ~86-117
      if (q.kv_cache_dtype != D::kAuto && q.kv_cache_dtype != D::kFloat16 && q.kv_cache_dtype != D::kBfloat16)
        return std::string("FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache");
      if (!flash_attn_supports_mla(q)) return std::string("FlashAttention MLA not supported on this device");
      if (!q.index_topk) return std::string("FlashAttention MLA Sparse requires model with index_topk");
      return std::nullopt;
    case K::kFlashAttnMlaSparseFa4: return fa4_sparse_combination(q);
    default: return std::nullopt;
  }
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

const char* vllm_backend_name(AttentionBackendKind kind) { return cls(kind).vllm_name; }
const char* backend_source(AttentionBackendKind kind) { return cls(kind).source; }
bool is_sparse_backend(AttentionBackendKind kind) { return cls(kind).sparse; }

bool is_deepseek_v4_backend(AttentionBackendKind kind) {
  return kind == AttentionBackendKind::kFlashMlaSparseDsv4 || kind == AttentionBackendKind::kFlashInferMlaSparseDsv4;
}

std::optional<AttentionBackendKind> parse_vllm_backend_name(const std::string& name) {
  for (const auto& c : classes())
    if (name == c.vllm_name) return c.kind;
  return std::nullopt;
}

std::vector<KernelBlockSize> supported_kernel_block_sizes(AttentionBackendKind kind, const BackendQuery& q,
                                                          bool with_spec) {
  switch (kind) {
    case K::kFlashAttnMla: return {{16, true}};           // flashattn_mla.py ~49
    case K::kFlashMla: return {{64, false}};              // flashmla.py ~57
    case K::kFlashInferMla: return {{32, false}, {64, false}};  // flashinfer_mla.py ~204
    case K::kCutlassMla: return {{128, false}};           // cutlass_mla.py ~49
    case K::kTritonMla: return {{16, true}};              // triton_mla.py ~114
    case K::kTokenspeedMla: return {{32, false}, {64, false}};  // tokenspeed_mla.py ~109
    case K::kRocmAiterMla:
    case K::kRocmAiterTritonMla: return {{1, true}};      // rocm_aiter_mla.py ~514-519
    case K::kFlashMlaSparse:                              // flashmla_sparse.py ~157-165
      if (with_spec && is_quantized_kv_cache(q.kv_cache_dtype) && family(q, 10)) return {{64, false}};
      return {{64, true}};
    case K::kFlashInferMlaSparse: return {{32, true}};    // flashinfer_mla_sparse.py ~93
    case K::kFlashInferMlaSparseSm90: return {{64, true}};   // flashinfer_mla_sparse_sm90.py ~156
    case K::kFlashInferMlaSparseSm120: return {{64, true}};  // flashinfer_mla_sparse.py ~180
    case K::kFlashAttnMlaSparse: return {{64, true}};     // flashattn_mla_sparse.py ~50
    case K::kFlashAttnMlaSparseFa4: return {{64, true}};  // flashattn_mla_sparse.py ~283
    case K::kRocmAiterMlaSparse: return {{1, false}, {16, true}};  // rocm_aiter_mla_sparse.py ~361
    case K::kFlashMlaSparseDsv4:                                   // deepseek_v4/sparse_mla.py ~60
    case K::kFlashInferMlaSparseDsv4: return {{256, false}};       // nvidia/flashinfer_sparse.py ~120
  }
  return {};
}

// AttentionBackend.supports_block_size (backend.py ~121-138): a multiple of any listed size's base;
// TRITON_MLA overrides it with `% 16` (triton_mla.py ~117-121).
bool supports_block_size(AttentionBackendKind kind, const BackendQuery& q, int block_size) {
  if (kind == K::kTritonMla) return block_size % 16 == 0;
  const auto sizes = supported_kernel_block_sizes(kind, q);
  if (sizes.empty()) return true;
  for (const auto& s : sizes)
    if (block_size % s.size == 0) return true;
  return false;
}

std::string kernel_block_sizes_text(const std::vector<KernelBlockSize>& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i) out += ", ";
    out += sizes[i].multiple_of ? "MultipleOf(" + std::to_string(sizes[i].size) + ")" : std::to_string(sizes[i].size);
  }
  return out + "]";
}

std::vector<std::string> validate_configuration(AttentionBackendKind kind, const BackendQuery& q) {
  const BackendClass& c = cls(kind);
  std::vector<std::string> reasons;
  if (!c.head_sizes.empty() && !contains(c.head_sizes, q.head_size)) reasons.emplace_back("head_size not supported");
  const bool dtype_ok = !q.dtype_is_fp32 && (c.dtypes == kHalfAndBf16 || q.dtype_is_bf16);
  if (!dtype_ok) reasons.emplace_back("dtype not supported");
  if (!c.kv_dtypes.empty() &&
      std::find(c.kv_dtypes.begin(), c.kv_dtypes.end(), q.kv_cache_dtype) == c.kv_dtypes.end())
    reasons.emplace_back("kv_cache_dtype not supported");
  if (q.block_size && !supports_block_size(kind, q, *q.block_size)) reasons.emplace_back("block_size not supported");
  if (q.use_sparse != c.sparse) reasons.emplace_back(q.use_sparse ? "sparse not supported" : "non-sparse not supported");
  const bool cap_ok = c.majors.empty() || (q.vendor == GpuVendor::kNvidia && contains(c.majors, q.major));
  if (!cap_ok) reasons.emplace_back("compute capability not supported");
  if (auto why = supports_combination(kind, q)) reasons.push_back(*why);
  return reasons;
}

}  // namespace mlasim
