// How a deployment's KV cache dtype quantizes the MLA latent cache (docs/spec/mla.md §11), as
// vLLM 0.33's cache writers and readers do, for the backends to emulate:
//   fp8 / fp8_e4m3 (concat_and_cache_mla, csrc/cache_kernels.cu): every value of [c_kv | k_pe] as
//     e4m3(x / k_scale), read back as e4m3 · k_scale; k_scale is the layer's _k_scale, 1.0 without
//     checkpoint scales (attention/layer.py, calculate_kv_scales off). The decode (absorbed) form's
//     query is quantized too, e4m3(q / q_scale) with q_scale 1.0, on the backends whose impl keeps
//     supports_quant_query_input (mla_attention.py ~1107).
//   fp8_ds_mla (FLASHMLA_SPARSE's layout, concat_and_cache_ds_mla_kernel): 656 bytes a token for
//     r_kv 512, d_r 64: the NoPE part as e4m3 in tiles of 128 values, each tile's fp32 scale
//     max(amax / 448, FLT_MIN), then the RoPE part in bf16, unquantized. Readers upconvert to bf16
//     (cp_gather_and_upconvert; FlashMLA's sparse kernels dequantize into bf16 shared memory).
// The writer's input is the model's dtype (bf16 for model.dtype bf16, else float32), in both
// backend precisions, so the fp64 reference and the float backend hold the same cache bytes
// whenever their latents round alike.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "config/engine_enums.h"
#include "config/deployment.h"
#include "config/scenario.h"

namespace mlasim {

enum class KvCacheQuantKind { kNone, kFp8PerTensor, kFp8DsMla };

struct KvCacheQuant {
  KvCacheQuantKind kind = KvCacheQuantKind::kNone;
  bool input_bf16 = false;       // the writer's input is bf16 (model.dtype bf16), else float32
  float k_scale = 1.0f;          // kFp8PerTensor
  bool quantize_query = false;   // the decode form's absorbed query goes to e4m3 too
  float q_scale = 1.0f;
  float read_scale_factor = 1.0f;  // 1, or 448/240 under the fp8_dequant_scale_wrong fault

  bool quantized() const { return kind != KvCacheQuantKind::kNone; }
};

const char* to_string(KvCacheQuantKind k);  // "none" | "fp8" | "fp8_ds_mla"

// The fp8_ds_mla tile: one fp32 scale per this many NoPE values.
inline constexpr int kFp8DsMlaTile = 128;
// Bytes of one token in the fp8_ds_mla layout: r_kv e4m3 bytes, r_kv / 128 fp32 scales, d_r bf16.
inline constexpr int fp8_ds_mla_row_bytes(int r_kv, int d_r) { return r_kv + r_kv / kFp8DsMlaTile * 4 + d_r * 2; }

// The cache quantization of an effective kv_cache_dtype read by `backend` (the backend's sparse
// canonicalisation is applied here); `unsupported` says why when mlasim does not model its
// numerics (fp8_e5m2, the nvfp4 formats).
struct KvCacheQuantResult {
  KvCacheQuant quant;
  std::string unsupported;  // non-empty: why this dtype cannot be computed
};
KvCacheQuantResult kv_cache_quant(KvCacheDtype dtype, AttentionBackendKind backend, bool model_dtype_bf16, int r_kv);
// The scenario's: its effective kv_cache_dtype, the backend it routes with, model.dtype, r_kv.
KvCacheQuantResult scenario_kv_cache_quant(const Scenario& s);

// Whether `backend`'s impl quantizes the decode query on an fp8 cache (supports_quant_query_input:
// MLACommonImpl sets it, TRITON_MLA clears it on a quantized cache, the sparse impls other than
// FLASHINFER_MLA_SPARSE never set it).
bool backend_quantizes_mla_query(AttentionBackendKind backend);

// One token's fp8_ds_mla bytes from its latent [c_kv (r_kv) | k_pe (d_r)]; r_kv a multiple of 128.
void encode_fp8_ds_mla(std::span<const float> latent, int r_kv, std::span<std::uint8_t> out);
// The bf16-upconverted values a reader gets back from those bytes (r_kv + d_r floats).
void decode_fp8_ds_mla(const KvCacheQuant& q, std::span<const std::uint8_t> bytes, int r_kv, std::span<float> out);

// What a quantized cache holds for `latent` [c_kv | k_pe], as the reader sees it: `out` (may
// alias `latent`) gets the dequantized values. kNone copies (the backend's own storage rule).
template <typename T>
void quantize_latent_row(const KvCacheQuant& q, const T* latent, int r_kv, int d_r, T* out);

// The decode form's absorbed queries ([q_lat (r_kv) | q_pe (d_r)] per head; n values in all), as
// the kernel gets them when q.quantize_query: e4m3(x / q_scale) · q_scale, x in the model's dtype,
// in place.
template <typename T>
void quantize_mla_query(const KvCacheQuant& q, T* query, int n);

}  // namespace mlasim
