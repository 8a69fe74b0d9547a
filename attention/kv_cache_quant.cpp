// The KV cache quantization of vLLM 0.33's fp8 cache dtypes (attention/kv_cache_quant.h).
#include "attention/kv_cache_quant.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/check.h"
#include "model/bf16.h"
#include "model/fp8.h"

namespace mlasim {
namespace {

using K = AttentionBackendKind;
using D = KvCacheDtype;

// The writer's input: the model dtype's value of x.
float writer_input(const KvCacheQuant& q, double x) {
  const float f = static_cast<float>(x);
  return q.input_bf16 ? round_to_bf16(f) : f;
}

// vLLM's fp8::scaled_convert<uint8_t, T, kFp8E4M3>: x / scale in float, then e4m3 (SATFINITE).
float scaled_e4m3(float x, float scale) { return round_to_fp8_e4m3(x / scale); }

}  // namespace

const char* to_string(KvCacheQuantKind k) {
  switch (k) {
    case KvCacheQuantKind::kNone: return "none";
    case KvCacheQuantKind::kFp8PerTensor: return "fp8";
    case KvCacheQuantKind::kFp8DsMla: return "fp8_ds_mla";
  }
  return "none";
}

bool backend_quantizes_mla_query(AttentionBackendKind backend) {
  switch (backend) {
    case K::kFlashMla: case K::kFlashAttnMla: case K::kFlashInferMla: case K::kCutlassMla: case K::kTokenspeedMla:
    case K::kRocmAiterMla: case K::kRocmAiterTritonMla: case K::kFlashInferMlaSparse:
      return true;
    default:
      return false;
  }
}

KvCacheQuantResult kv_cache_quant(KvCacheDtype dtype, AttentionBackendKind backend, bool model_dtype_bf16, int r_kv) {
  KvCacheQuantResult r;
  r.quant.input_bf16 = model_dtype_bf16;
  // DeepSeek-V4's own cache formats are not modelled; its attention is computed as a dense stand-in.
  if (backend == K::kFlashMlaSparseDsv4 || backend == K::kFlashInferMlaSparseDsv4) return r;
  switch (canonical_sparse_mla_kv_cache_dtype(backend, dtype)) {
    case D::kAuto: case D::kBfloat16: case D::kFloat16: return r;
    case D::kFp8: case D::kFp8E4m3:
      r.quant.kind = KvCacheQuantKind::kFp8PerTensor;
      r.quant.quantize_query = backend_quantizes_mla_query(backend);
      return r;
    case D::kFp8DsMla:
      if (r_kv % kFp8DsMlaTile != 0) {
        r.unsupported = "fp8_ds_mla quantizes c_kv in tiles of 128 values; kv_lora_rank " + std::to_string(r_kv) +
                        " is not a multiple of 128";
        return r;
      }
      r.quant.kind = KvCacheQuantKind::kFp8DsMla;
      return r;
    default:
      r.unsupported = std::string("the numerics of kv_cache_dtype ") + to_string(dtype) +
                      " are not modelled (fp8, fp8_e4m3 and fp8_ds_mla are); --dry-run routes it";
      return r;
  }
}

KvCacheQuantResult scenario_kv_cache_quant(const Scenario& s) {
  return kv_cache_quant(s.deployment.effective_kv_cache_dtype, s.engine.attention_backend, s.model.dtype == ModelDtype::kBf16,
                        s.model.kv_lora_rank);
}

void encode_fp8_ds_mla(std::span<const float> latent, int r_kv, std::span<std::uint8_t> out) {
  const int d_r = static_cast<int>(latent.size()) - r_kv;
  MLASIM_CHECK(r_kv % kFp8DsMlaTile == 0 && d_r >= 0, "fp8_ds_mla needs r_kv a multiple of 128");
  MLASIM_CHECK(static_cast<int>(out.size()) == fp8_ds_mla_row_bytes(r_kv, d_r), "fp8_ds_mla row size");
  for (int tile = 0; tile < r_kv / kFp8DsMlaTile; ++tile) {
    const float* x = latent.data() + tile * kFp8DsMlaTile;
    float amax = 0.0f;
    for (int i = 0; i < kFp8DsMlaTile; ++i) amax = std::max(amax, std::fabs(x[i]));
    const float scale = std::max(amax / kFp8E4m3Max, FLT_MIN);  // cache_kernels.cu: tile_scale
    for (int i = 0; i < kFp8DsMlaTile; ++i) out[static_cast<size_t>(tile * kFp8DsMlaTile + i)] = fp8_e4m3_bits(scaled_e4m3(x[i], scale));
    std::memcpy(&out[static_cast<size_t>(r_kv + tile * 4)], &scale, 4);
  }
  const size_t rope_at = static_cast<size_t>(r_kv + r_kv / kFp8DsMlaTile * 4);
  for (int i = 0; i < d_r; ++i) {
    const std::uint16_t b = bf16_bits(latent[static_cast<size_t>(r_kv + i)]);
    std::memcpy(&out[rope_at + static_cast<size_t>(2 * i)], &b, 2);
  }
}

void decode_fp8_ds_mla(const KvCacheQuant& q, std::span<const std::uint8_t> bytes, int r_kv, std::span<float> out) {
  const int d_r = static_cast<int>(out.size()) - r_kv;
  MLASIM_CHECK(static_cast<int>(bytes.size()) == fp8_ds_mla_row_bytes(r_kv, d_r), "fp8_ds_mla row size");
  for (int tile = 0; tile < r_kv / kFp8DsMlaTile; ++tile) {
    float scale;
    std::memcpy(&scale, &bytes[static_cast<size_t>(r_kv + tile * 4)], 4);
    scale *= q.read_scale_factor;
    for (int i = 0; i < kFp8DsMlaTile; ++i) {
      const size_t at = static_cast<size_t>(tile * kFp8DsMlaTile + i);
      out[at] = round_to_bf16(fp8_e4m3_value(bytes[at]) * scale);
    }
  }
  const size_t rope_at = static_cast<size_t>(r_kv + r_kv / kFp8DsMlaTile * 4);
  for (int i = 0; i < d_r; ++i) {
    std::uint16_t b;
    std::memcpy(&b, &bytes[rope_at + static_cast<size_t>(2 * i)], 2);
    out[static_cast<size_t>(r_kv + i)] = bf16_value(b);
  }
}

template <typename T>
void quantize_latent_row(const KvCacheQuant& q, const T* latent, int r_kv, int d_r, T* out) {
  const int L = r_kv + d_r;
  switch (q.kind) {
    case KvCacheQuantKind::kNone:  // an unquantized cache: the backend's own storage rule applies
      std::copy(latent, latent + L, out);
      return;
    case KvCacheQuantKind::kFp8PerTensor:
      for (int i = 0; i < L; ++i)
        out[i] = static_cast<T>(scaled_e4m3(writer_input(q, static_cast<double>(latent[i])), q.k_scale) * q.k_scale *
                                q.read_scale_factor);
      return;
    case KvCacheQuantKind::kFp8DsMla: {
      std::vector<float> in(static_cast<size_t>(L)), back(static_cast<size_t>(L));
      for (int i = 0; i < L; ++i) in[static_cast<size_t>(i)] = writer_input(q, static_cast<double>(latent[i]));
      std::vector<std::uint8_t> bytes(static_cast<size_t>(fp8_ds_mla_row_bytes(r_kv, d_r)));
      encode_fp8_ds_mla(in, r_kv, bytes);
      decode_fp8_ds_mla(q, bytes, r_kv, back);
      for (int i = 0; i < L; ++i) out[i] = static_cast<T>(back[static_cast<size_t>(i)]);
      return;
    }
  }
}

template <typename T>
void quantize_mla_query(const KvCacheQuant& q, T* query, int n) {
  if (!q.quantize_query) return;
  for (int i = 0; i < n; ++i)
    query[i] = static_cast<T>(scaled_e4m3(writer_input(q, static_cast<double>(query[i])), q.q_scale) * q.q_scale);
}

template void quantize_latent_row<float>(const KvCacheQuant&, const float*, int, int, float*);
template void quantize_latent_row<double>(const KvCacheQuant&, const double*, int, int, double*);
template void quantize_mla_query<float>(const KvCacheQuant&, float*, int);
template void quantize_mla_query<double>(const KvCacheQuant&, double*, int);

}  // namespace mlasim
