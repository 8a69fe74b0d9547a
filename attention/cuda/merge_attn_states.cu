// merge_attn_states kernel: one thread per 8 bf16 outputs (16 B) of one (token, head) row; the
// threads of a row sit in one 128-thread block, so a barrier between reading the LSEs and writing
// the merged LSE makes in-place use (out_lse aliasing an input) safe. Deterministic.
#include "attention/cuda/merge_attn_states.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "base/check.h"

namespace mlasim {
namespace merge_detail {

constexpr int kThreads = 128;

MergeAttnStatesParams resolve(MergeAttnStatesParams p) {
  const std::int64_t row = static_cast<std::int64_t>(p.num_heads) * p.head_size;
  if (p.out_row_stride == 0) p.out_row_stride = row;
  if (p.prefix_row_stride == 0) p.prefix_row_stride = row;
  if (p.suffix_row_stride == 0) p.suffix_row_stride = row;
  if (p.lse_stride == 0) p.lse_stride = p.num_tokens;
  return p;
}

__device__ __forceinline__ uint4 combine(uint4 va, float wa, uint4 vb, float wb, float inv_sum) {
  const auto* a = reinterpret_cast<const __nv_bfloat162*>(&va);
  const auto* b = reinterpret_cast<const __nv_bfloat162*>(&vb);
  uint4 r;
  auto* o = reinterpret_cast<__nv_bfloat162*>(&r);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 fa = __bfloat1622float2(a[i]), fb = __bfloat1622float2(b[i]);
    o[i] = __floats2bfloat162_rn((fa.x * wa + fb.x * wb) * inv_sum, (fa.y * wa + fb.y * wb) * inv_sum);
  }
  return r;
}

// p: resolved. packs = head_size / 8 = 1 << packs_log2 threads per (token, head) row.
__global__ void __launch_bounds__(kThreads) merge_attn_states_kernel(const MergeAttnStatesParams p, int packs_log2) {
  const std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::int64_t row = idx >> packs_log2;  // token · num_heads + head
  const int pack = static_cast<int>(idx & ((1 << packs_log2) - 1));
  const bool active = row < static_cast<std::int64_t>(p.num_tokens) * p.num_heads;
  int tok = 0, head = 0;
  float a = 0.f, b = 0.f;
  uint4 va = make_uint4(0, 0, 0, 0), vb = va;
  if (active) {
    tok = static_cast<int>(row / p.num_heads);
    head = static_cast<int>(row % p.num_heads);
    const std::int64_t li = static_cast<std::int64_t>(head) * p.lse_stride + tok;
    a = p.prefix_lse[li];
    b = p.suffix_lse[li];
    const std::int64_t col = static_cast<std::int64_t>(head) * p.head_size + pack * 8;
    va = *reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(p.prefix_out) + tok * p.prefix_row_stride + col);
    vb = *reinterpret_cast<const uint4*>(static_cast<const __nv_bfloat16*>(p.suffix_out) + tok * p.suffix_row_stride + col);
  }
  __syncthreads();  // all reads of this block's rows happen before any write (in-place safe)
  if (!active) return;

  if (a == INFINITY) a = -INFINITY;  // FlashAttention/FlashMLA mark an empty side with +inf
  if (b == INFINITY) b = -INFINITY;
  uint4 res;
  float lse;
  if (isnan(a) || isnan(b)) {
    const float nan = __int_as_float(0x7fc00000);
    res = combine(va, nan, vb, nan, 1.f);
    lse = nan;
  } else if (a == -INFINITY && b == -INFINITY) {
    res = make_uint4(0, 0, 0, 0);
    lse = -INFINITY;
  } else if (b == -INFINITY) {
    res = va;
    lse = a;
  } else if (a == -INFINITY) {
    res = vb;
    lse = b;
  } else {
    const float m = fmaxf(a, b);
    const float wa = expf(a - m), wb = expf(b - m), sum = wa + wb;
    res = combine(va, wa, vb, wb, 1.f / sum);
    lse = m + logf(sum);
  }
  const std::int64_t col = static_cast<std::int64_t>(head) * p.head_size + pack * 8;
  *reinterpret_cast<uint4*>(static_cast<__nv_bfloat16*>(p.out) + tok * p.out_row_stride + col) = res;
  if (p.out_lse != nullptr && pack == 0) p.out_lse[static_cast<std::int64_t>(head) * p.lse_stride + tok] = lse;
}

}  // namespace merge_detail

std::string merge_attn_states_validate(const MergeAttnStatesParams& in) {
  if (!in.out || !in.prefix_out || !in.prefix_lse || !in.suffix_out || !in.suffix_lse)
    return "out, prefix_out, prefix_lse, suffix_out and suffix_lse must be device pointers (one is null)";
  if (in.num_tokens < 0 || in.num_heads < 1) return "num_tokens must be >= 0 and num_heads >= 1";
  if (in.head_size < 8 || in.head_size > 1024 || (in.head_size & (in.head_size - 1)) != 0)
    return "head_size must be a power of two in [8, 1024], got " + std::to_string(in.head_size);
  const auto misaligned = [](const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) != 0; };
  if (misaligned(in.out) || misaligned(in.prefix_out) || misaligned(in.suffix_out))
    return "out, prefix_out and suffix_out must be 16-byte aligned";
  const MergeAttnStatesParams p = merge_detail::resolve(in);
  for (std::int64_t s : {p.out_row_stride, p.prefix_row_stride, p.suffix_row_stride})
    if (s < static_cast<std::int64_t>(p.num_heads) * p.head_size || s % 8 != 0)
      return "row strides must be multiples of 8 and >= num_heads·head_size, got " + std::to_string(s);
  if (p.lse_stride < p.num_tokens) return "lse_stride must be >= num_tokens";
  return {};
}

void merge_attn_states_launch(const MergeAttnStatesParams& in, void* stream) {
  using merge_detail::kThreads;
  const std::string err = merge_attn_states_validate(in);
  MLASIM_CHECK(err.empty(), "merge_attn_states_launch: " + err);
  if (in.num_tokens == 0) return;
  const MergeAttnStatesParams p = merge_detail::resolve(in);
  int packs_log2 = 0;
  while ((8 << packs_log2) < p.head_size) ++packs_log2;
  const std::int64_t threads = (static_cast<std::int64_t>(p.num_tokens) * p.num_heads) << packs_log2;
  const auto blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  MLASIM_LAUNCH(blocks, kThreads, 0, static_cast<cudaStream_t>(stream), merge_detail::merge_attn_states_kernel)(p, packs_log2);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
