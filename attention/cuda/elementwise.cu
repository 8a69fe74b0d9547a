// Element-wise kernels of the CUDA model forward: straightforward grid-stride / row-per-block
// kernels (they move little data next to the GEMMs and attention). See elementwise.h.
#include "attention/cuda/elementwise.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float bf16_to_float(bf16_bits_t b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
__device__ __forceinline__ bf16_bits_t float_to_bf16(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }

unsigned grid_for(long long n) {
  const long long blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

__global__ void embedding_gather_kernel(const int* ids, const bf16_bits_t* table, int vocab, int d, float* out) {
  const int t = blockIdx.x;
  const int id = ids[t];
  if (id < 0 || id >= vocab) __trap();  // the host checks ids; this is a last line of defence
  const bf16_bits_t* src = table + static_cast<long long>(id) * d;
  float* dst = out + static_cast<long long>(t) * d;
  for (int c = threadIdx.x; c < d; c += blockDim.x) dst[c] = bf16_to_float(src[c]);
}

// One block per row: fp32 sum of squares (per-thread strided partial sums, then a fixed-shape tree).
__global__ void rms_norm_kernel(const RmsNormParams p) {
  const int r = blockIdx.x;
  const float* x = p.x + static_cast<long long>(r) * p.ldx;
  float ss = 0.f;
  for (int c = threadIdx.x; c < p.cols; c += blockDim.x) ss += x[c] * x[c];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  __shared__ float warp_sums[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  const float inv = 1.0f / sqrtf(total / static_cast<float>(p.cols) + p.eps);
  for (int c = threadIdx.x; c < p.cols; c += blockDim.x) {
    const float v = p.w[c] * (x[c] * inv);
    if (p.y_type == ElemType::kF32) {
      static_cast<float*>(p.y)[static_cast<long long>(r) * p.ldy + c] = v;
    } else {
      static_cast<bf16_bits_t*>(p.y)[static_cast<long long>(r) * p.ldy + c] = float_to_bf16(v);
    }
  }
}

__global__ void rope_kernel(const RopeParams p) {
  const int half = p.rope_dim / 2;
  const long long total = static_cast<long long>(p.rows) * p.heads * half;
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(k % half);
    const long long rh = k / half;
    const int h = static_cast<int>(rh % p.heads);
    const int r = static_cast<int>(rh / p.heads);
    float* v = p.x + static_cast<long long>(r) * p.row_stride + static_cast<long long>(h) * p.head_stride + p.offset;
    const float c = p.cos[static_cast<long long>(r) * half + i], s = p.sin[static_cast<long long>(r) * half + i];
    const int a = p.neox ? i : 2 * i, b = p.neox ? i + half : 2 * i + 1;
    const float x0 = v[a], x1 = v[b];
    v[a] = x0 * c - x1 * s;
    v[b] = x0 * s + x1 * c;
  }
}

__global__ void swiglu_kernel(const float* gate, long long ld_gate, const float* up, long long ld_up, int rows, int cols,
                              bf16_bits_t* out, long long ld_out) {
  const long long total = static_cast<long long>(rows) * cols;
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = k / cols, c = k % cols;
    const float g = gate[r * ld_gate + c];
    out[r * ld_out + c] = float_to_bf16(g / (1.0f + expf(-g)) * up[r * ld_up + c]);
  }
}

__global__ void add_kernel(float* y, const float* x, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

__global__ void f32_to_bf16_kernel(const float* x, bf16_bits_t* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = float_to_bf16(x[i]);
}

__global__ void bf16_to_f32_kernel(const bf16_bits_t* x, float* y, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    y[i] = bf16_to_float(x[i]);
}

template <typename E>
__global__ void gather_rows_kernel(const E* src, long long ld_src, const int* idx, int width, E* dst, long long ld_dst) {
  const int j = blockIdx.x;
  const int row = idx[j];
  if (row < 0) __trap();
  const E* s = src + static_cast<long long>(row) * ld_src;
  E* d = dst + static_cast<long long>(j) * ld_dst;
  for (int c = threadIdx.x; c < width; c += blockDim.x) d[c] = s[c];
}

__global__ void copy_columns_kernel(const CopyColumnsParams p) {
  const long long total = static_cast<long long>(p.rows) * p.heads * p.width;
  for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int c = static_cast<int>(k % p.width);
    const long long rh = k / p.width;
    const long long h = rh % p.heads, r = rh / p.heads;
    p.dst[r * p.dst_row_stride + h * p.dst_head_stride + c] = p.src[r * p.src_row_stride + h * p.src_head_stride + c];
  }
}

}  // namespace

void embedding_gather(const int* ids, int n, const bf16_bits_t* table, int vocab, int d, float* out, void* stream) {
  MLASIM_CHECK(n >= 0 && vocab > 0 && d > 0, "embedding_gather: bad shape");
  if (n == 0) return;
  MLASIM_CHECK(ids && table && out, "embedding_gather: null pointer");
  MLASIM_LAUNCH(static_cast<unsigned>(n), kThreads, 0, as_stream(stream), embedding_gather_kernel)(ids, table, vocab, d, out);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void rms_norm(const RmsNormParams& in, void* stream) {
  RmsNormParams p = in;
  MLASIM_CHECK(p.rows >= 0 && p.cols > 0, "rms_norm: bad shape");
  if (p.rows == 0) return;
  MLASIM_CHECK(p.x && p.w && p.y, "rms_norm: null pointer");
  if (p.ldx == 0) p.ldx = p.cols;
  if (p.ldy == 0) p.ldy = p.cols;
  MLASIM_CHECK(p.ldx >= p.cols && p.ldy >= p.cols, "rms_norm: row stride below the row width");
  MLASIM_LAUNCH(static_cast<unsigned>(p.rows), kThreads, 0, as_stream(stream), rms_norm_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void apply_rope(const RopeParams& p, void* stream) {
  MLASIM_CHECK(p.rows >= 0 && p.heads >= 1 && p.rope_dim >= 2 && p.rope_dim % 2 == 0, "apply_rope: bad shape");
  if (p.rows == 0) return;
  MLASIM_CHECK(p.x && p.cos && p.sin, "apply_rope: null pointer");
  const long long total = static_cast<long long>(p.rows) * p.heads * (p.rope_dim / 2);
  MLASIM_LAUNCH(grid_for(total), kThreads, 0, as_stream(stream), rope_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void swiglu_to_bf16(const float* gate, long long ld_gate, const float* up, long long ld_up, int rows, int cols,
                    bf16_bits_t* out, long long ld_out, void* stream) {
  MLASIM_CHECK(rows >= 0 && cols >= 0, "swiglu_to_bf16: bad shape");
  if (rows == 0 || cols == 0) return;
  MLASIM_CHECK(gate && up && out, "swiglu_to_bf16: null pointer");
  if (ld_gate == 0) ld_gate = cols;
  if (ld_up == 0) ld_up = cols;
  if (ld_out == 0) ld_out = cols;
  MLASIM_LAUNCH(grid_for(static_cast<long long>(rows) * cols), kThreads, 0, as_stream(stream), swiglu_kernel)(gate, ld_gate, up, ld_up,
                                                                                                 rows, cols, out, ld_out);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void add_inplace(float* y, const float* x, long long n, void* stream) {
  if (n <= 0) return;
  MLASIM_CHECK(y && x, "add_inplace: null pointer");
  MLASIM_LAUNCH(grid_for(n), kThreads, 0, as_stream(stream), add_kernel)(y, x, n);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void f32_to_bf16(const float* x, bf16_bits_t* y, long long n, void* stream) {
  if (n <= 0) return;
  MLASIM_CHECK(x && y, "f32_to_bf16: null pointer");
  MLASIM_LAUNCH(grid_for(n), kThreads, 0, as_stream(stream), f32_to_bf16_kernel)(x, y, n);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void bf16_to_f32(const bf16_bits_t* x, float* y, long long n, void* stream) {
  if (n <= 0) return;
  MLASIM_CHECK(x && y, "bf16_to_f32: null pointer");
  MLASIM_LAUNCH(grid_for(n), kThreads, 0, as_stream(stream), bf16_to_f32_kernel)(x, y, n);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void gather_rows(const void* src, long long ld_src, const int* idx, int n, int width, int elem_bytes, void* dst,
                 long long ld_dst, void* stream) {
  MLASIM_CHECK(n >= 0 && width >= 0 && (elem_bytes == 2 || elem_bytes == 4), "gather_rows: bad shape");
  if (n == 0 || width == 0) return;
  MLASIM_CHECK(src && idx && dst && ld_src >= width && ld_dst >= width, "gather_rows: null pointer or short stride");
  if (elem_bytes == 2) {
    MLASIM_LAUNCH(static_cast<unsigned>(n), kThreads, 0, as_stream(stream), gather_rows_kernel<std::uint16_t>)(
        static_cast<const std::uint16_t*>(src), ld_src, idx, width, static_cast<std::uint16_t*>(dst), ld_dst);
  } else {
    MLASIM_LAUNCH(static_cast<unsigned>(n), kThreads, 0, as_stream(stream), gather_rows_kernel<std::uint32_t>)(
        static_cast<const std::uint32_t*>(src), ld_src, idx, width, static_cast<std::uint32_t*>(dst), ld_dst);
  }
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void copy_columns_bf16(const CopyColumnsParams& p, void* stream) {
  MLASIM_CHECK(p.rows >= 0 && p.heads >= 1 && p.width >= 0, "copy_columns_bf16: bad shape");
  if (p.rows == 0 || p.width == 0) return;
  MLASIM_CHECK(p.src && p.dst, "copy_columns_bf16: null pointer");
  MLASIM_LAUNCH(grid_for(static_cast<long long>(p.rows) * p.heads * p.width), kThreads, 0, as_stream(stream), copy_columns_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void concat_q_pe_for_decode(const bf16_bits_t* q, int rows, int heads, int d_n, int d_r, int r_kv, bf16_bits_t* q_lat,
                            void* stream) {
  CopyColumnsParams p;
  p.src = q + d_n;
  p.src_row_stride = static_cast<long long>(heads) * (d_n + d_r);
  p.src_head_stride = d_n + d_r;
  p.dst = q_lat + r_kv;
  p.dst_row_stride = static_cast<long long>(heads) * (r_kv + d_r);
  p.dst_head_stride = r_kv + d_r;
  p.rows = rows;
  p.heads = heads;
  p.width = d_r;
  copy_columns_bf16(p, stream);
}

void concat_k_for_prefill(const bf16_bits_t* kv, const bf16_bits_t* latent, int rows, int heads, int d_n, int d_v,
                          int d_r, int r_kv, bf16_bits_t* k, void* stream) {
  CopyColumnsParams nope;
  nope.src = kv;
  nope.src_row_stride = static_cast<long long>(heads) * (d_n + d_v);
  nope.src_head_stride = d_n + d_v;
  nope.dst = k;
  nope.dst_row_stride = static_cast<long long>(heads) * (d_n + d_r);
  nope.dst_head_stride = d_n + d_r;
  nope.rows = rows;
  nope.heads = heads;
  nope.width = d_n;
  copy_columns_bf16(nope, stream);
  CopyColumnsParams pe = nope;
  pe.src = latent + r_kv;
  pe.src_row_stride = r_kv + d_r;
  pe.src_head_stride = 0;  // one k_pe per token, shared by every head
  pe.dst = k + d_n;
  pe.width = d_r;
  copy_columns_bf16(pe, stream);
}

void rms_norm_to_bf16(const float* x, const float* w, int rows, int cols, float eps, void* y, void* stream) {
  RmsNormParams p;
  p.x = x;
  p.w = w;
  p.rows = rows;
  p.cols = cols;
  p.eps = eps;
  p.y = y;
  p.y_type = ElemType::kBf16;
  rms_norm(p, stream);
}

}  // namespace mlasim
