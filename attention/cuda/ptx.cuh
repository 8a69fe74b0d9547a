// Thin wrappers over the sm_80+ PTX the MLA kernels use (fine on sm_90a): cp.async 16 B with zero
// fill, ldmatrix .x4 (plain and transposed), mma.sync m16n8k16 bf16 → fp32, named barriers, bf16
// packing. Under mlasim's SIMT emulator (MLASIM_CUDA_EMULATION, emu/) each wrapper calls
// the emulator's implementation of the same instruction instead of inline PTX.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

namespace mlasim::ptx {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global → shared, bypassing L1. src_bytes = 0 writes 16 zero bytes (src is not read, but
// must still be a valid global address).
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, int src_bytes) {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::cp_async_16(dst, src, src_bytes);
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::cp_async_commit();
#else
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::cp_async_wait(N);
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, r[i] receives it:
// lane l holds row l/4, columns 2(l%4), 2(l%4)+1 (trans: row and column swapped).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::ldmatrix_x4(r, addr, false);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::ldmatrix_x4(r, addr, true);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
#endif
}

// d += A·B with A 16x16 (row), B 16x8 (col), bf16 in, fp32 accumulate. With g = lane/4,
// t = lane%4: a[0] = A[g][2t..], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] = A[g+8][2t+8..];
// b0 = B[2t..][g], b1 = B[2t+8..][g]; d[0..1] = D[g][2t..2t+1], d[2..3] = D[g+8][2t..2t+1].
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                               std::uint32_t b1) {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::mma_m16n8k16_bf16(d, a, b0, b1);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Barrier among `count` threads (a multiple of 32) on hardware barrier `id` (1..15; 0 is __syncthreads).
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
#if defined(MLASIM_CUDA_EMULATION)
  ::mlasim::emu::named_barrier(id, count);
#else
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
#endif
}

// Two floats → packed bf16x2 (round to nearest even); lo in the low half (the lower column / address).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<std::uint32_t*>(&v);
}

}  // namespace mlasim::ptx
