// Small element-wise kernels of the CUDA model forward (docs/spec/mla.md §2, §9): embedding gather,
// RMSNorm, interleaved (or NeoX) RoPE with precomputed YaRN angles, SwiGLU, residual add,
// bf16 <-> fp32 conversion, row gathers, and the column copies that build the decode query
// [q_lat | q_pe] and the prefill keys [k_nope | k_pe]. Host-only header: pointers are device
// pointers, bf16 values are their 16 bits (std::uint16_t), `stream` is a cudaStream_t (nullptr:
// the legacy default stream). Every launch is asynchronous and checked.
#pragma once

#include <cstdint>

namespace mlasim {

using bf16_bits_t = std::uint16_t;

// out[t, :] = float(table[ids[t], :]) for t < n; table [vocab, d] bf16. ids must be in range
// (checked on the device: an id outside [0, vocab) traps).
void embedding_gather(const int* ids, int n, const bf16_bits_t* table, int vocab, int d, float* out, void* stream);

enum class ElemType { kF32, kBf16 };

// y[r, c] = w[c] · x[r, c] / sqrt(mean_c(x[r, :]²) + eps) for r < rows, c < cols; x fp32 with row
// stride ldx; y fp32 or bf16 with row stride ldy; y may alias x (fp32). Sums in fp32.
struct RmsNormParams {
  const float* x = nullptr;
  long long ldx = 0;  // 0: cols
  const float* w = nullptr;  // [cols] fp32
  int rows = 0, cols = 0;
  float eps = 1e-6f;
  void* y = nullptr;
  long long ldy = 0;  // 0: cols
  ElemType y_type = ElemType::kF32;
};
void rms_norm(const RmsNormParams& p, void* stream);
// The common case: contiguous fp32 x [rows, cols] normalised into contiguous bf16 y.
void rms_norm_to_bf16(const float* x, const float* w, int rows, int cols, float eps, void* y, void* stream);

// In place on fp32 x: for r < rows, h < heads, the rope_dim values at
// x + r·row_stride + h·head_stride + offset are rotated by the angles of row r:
// cos/sin [rows, rope_dim / 2] fp32. Interleaved (DeepSeek, vLLM): pairs (2i, 2i+1); NeoX (only to
// model the rope_neox_instead_of_interleaved fault): pairs (i, i + rope_dim/2).
struct RopeParams {
  float* x = nullptr;
  long long row_stride = 0, head_stride = 0, offset = 0;
  int rows = 0, heads = 1, rope_dim = 64;
  const float* cos = nullptr;
  const float* sin = nullptr;
  bool neox = false;
};
void apply_rope(const RopeParams& p, void* stream);

// out[i] = bf16(silu(gate[i]) · up[i]) over a [rows, cols] block (row strides ld_gate, ld_up, ld_out; 0: cols).
void swiglu_to_bf16(const float* gate, long long ld_gate, const float* up, long long ld_up, int rows, int cols,
                    bf16_bits_t* out, long long ld_out, void* stream);

// y[i] += x[i], n elements.
void add_inplace(float* y, const float* x, long long n, void* stream);

// Round to nearest even / widen, n elements.
void f32_to_bf16(const float* x, bf16_bits_t* y, long long n, void* stream);
void bf16_to_f32(const bf16_bits_t* x, float* y, long long n, void* stream);

// dst[j·ld_dst + c] = src[idx[j]·ld_src + c] for j < n, c < width; elements of elem_bytes (2 or 4).
// idx entries must be ≥ 0 (checked on the device). Gathers cache rows (bf16, 576) by slot and
// the sampled tokens' hidden states (fp32).
void gather_rows(const void* src, long long ld_src, const int* idx, int n, int width, int elem_bytes, void* dst,
                 long long ld_dst, void* stream);

// bf16 column copy over [rows, heads]:
//   dst[r·dst_row_stride + h·dst_head_stride + c] = src[r·src_row_stride + h·src_head_stride + c], c < width.
// src_head_stride 0 broadcasts one source vector to every head (k_pe, shared by all heads).
struct CopyColumnsParams {
  const bf16_bits_t* src = nullptr;
  long long src_row_stride = 0, src_head_stride = 0;
  bf16_bits_t* dst = nullptr;
  long long dst_row_stride = 0, dst_head_stride = 0;
  int rows = 0, heads = 1, width = 0;
};
void copy_columns_bf16(const CopyColumnsParams& p, void* stream);

// The decode query's rope part: q_lat[t, h, r_kv : r_kv + d_r] = q[t, h, d_n : d_n + d_r], with
// q [rows, heads, d_n + d_r] and q_lat [rows, heads, r_kv + d_r] (bf16, contiguous). The first
// r_kv columns of q_lat come from the W_UK absorption GEMM.
void concat_q_pe_for_decode(const bf16_bits_t* q, int rows, int heads, int d_n, int d_r, int r_kv, bf16_bits_t* q_lat,
                            void* stream);

// The prefill keys: k[t, h, :] = [kv[t, h, 0 : d_n] | latent[t, r_kv : r_kv + d_r]], with kv the
// kv_b_proj output [rows, heads, d_n + d_v], latent [rows, r_kv + d_r] and k [rows, heads, d_n + d_r].
void concat_k_for_prefill(const bf16_bits_t* kv, const bf16_bits_t* latent, int rows, int heads, int d_n, int d_v,
                          int d_r, int r_kv, bf16_bits_t* k, void* stream);

}  // namespace mlasim
