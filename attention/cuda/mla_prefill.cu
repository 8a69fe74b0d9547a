// MLA prefill attention, MHA form (q/k 192, v 128, bf16 in, fp32 accumulation), varlen and
// bottom-right causal: a FlashAttention-2-style forward on tensor cores (mma.sync m16n8k16).
//
// Tiling (v1):
// - Grid (ceil(max_seqlen_q / 64), num_heads, batch); blockIdx.x is reversed so the causally
//   heaviest query tiles start first. A CTA owns 64 query rows of one head of one sequence and
//   exits at once when its tile lies past s_q.
// - 128 threads = 4 warps; warp w owns query rows [16w, 16w + 16) of the tile for the whole pass,
//   so the softmax row statistics never leave a warp (row max / sum reduce over the 4 lanes of a
//   quad with two shuffles).
// - Shared memory (104 KiB → 2 CTAs per SM on H100/H200): Q tile 64x192, K tiles 2 x 64x192,
//   V tiles 2 x 64x128, all bf16, rows split into 16-byte chunks stored at chunk ^ (row & 7)
//   (XOR swizzle: ldmatrix's 8 row addresses hit 8 different bank groups).
// - Loads: cp.async 16 B per thread-chunk, double-buffered: K/V tile n+1 is in flight while tile n
//   is consumed. Rows past s_q / s_k are zero-filled (cp.async src-size 0), so V rows past the end
//   contribute exactly 0 (no NaN·0 from stale memory).
// - Per 64-key tile, per warp: S(16x64) = Q·Kᵀ from 12 k-steps x 8 n-tiles of mma (A = Q by
//   ldmatrix.x4, B = K rows by ldmatrix.x4); mask only on tiles that cross s_k or the causal
//   diagonal; online softmax in base 2 (p = exp2(s·scale·log2e − m·scale·log2e)); P is repacked
//   from the accumulator layout straight into bf16 A fragments (no shared-memory round trip);
//   O(16x128) += P·V from 4 k-steps x 16 n-tiles (B = V by ldmatrix.x4.trans).
// - Epilogue: O / l → bf16 straight from registers; lse = m·scale + ln l ([num_heads, total_q]);
//   a row with no attendable key (l = 0) writes 0 and −inf.
// Deterministic: every output element is reduced by one warp in a fixed order; no atomics.
// Not yet done (optional later): wgmma + TMA warp specialisation (FA3), persistent scheduling.
#include "attention/cuda/mla_prefill.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "attention/cuda/ptx.cuh"
#include "base/check.h"

namespace mlasim {
namespace prefill_detail {
using namespace ptx;

constexpr int kBlockM = 64;  // query rows per CTA
constexpr int kBlockN = 64;  // keys per K/V tile
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kDqk = kMlaPrefillDqk;
constexpr int kDv = kMlaPrefillDv;
constexpr int kQkChunks = kDqk / 8;  // 16-byte chunks per q/k row (24)
constexpr int kVChunks = kDv / 8;    // 16-byte chunks per v row (16)
constexpr int kQTileElems = kBlockM * kDqk;
constexpr int kKTileElems = kBlockN * kDqk;
constexpr int kVTileElems = kBlockN * kDv;
constexpr int kSmemBytes = (kQTileElems + 2 * kKTileElems + 2 * kVTileElems) * 2;
constexpr float kLog2e = 1.4426950408889634f;
constexpr int kMaxDevices = 64;

static_assert(kBlockM == kWarps * 16, "each warp owns 16 query rows");
static_assert(kQkChunks % 8 == 0 && kVChunks % 8 == 0, "the XOR swizzle permutes groups of 8 chunks");
static_assert(kSmemBytes <= 227 * 1024, "shared memory per CTA");

// Element offset of (row, chunk) in a swizzled tile with `chunks` 16-byte chunks per row.
__device__ __forceinline__ int swz(int row, int chunk, int chunks) { return (row * chunks + (chunk ^ (row & 7))) * 8; }

// cp.async a kRows x (kChunks·8) tile from global rows src + r·row_stride into a swizzled tile;
// rows ≥ rows_valid are zero-filled (reading nothing; `dummy` is a valid address for the op).
template <int kRows, int kChunks>
__device__ __forceinline__ void load_tile(__nv_bfloat16* dst, const __nv_bfloat16* src, std::int64_t row_stride,
                                          int rows_valid, const __nv_bfloat16* dummy, int tid) {
  constexpr int kTotal = kRows * kChunks;
  static_assert(kTotal % kThreads == 0, "whole chunks per thread");
#pragma unroll 1  // unrolled, the compiler hoists ~30 64-bit addresses across the main loop (255 regs + spills)
  for (int i = 0; i < kTotal / kThreads; ++i) {
    const int idx = tid + i * kThreads;
    const int row = idx / kChunks, chunk = idx % kChunks;
    const bool ok = row < rows_valid;
    const __nv_bfloat16* g = ok ? src + row * row_stride + chunk * 8 : dummy;
    cp_async_16(smem_u32(dst + swz(row, chunk, kChunks)), g, ok ? 16 : 0);
  }
}

// p: strides already resolved (non-zero).
__global__ void __launch_bounds__(kThreads, 2) mla_prefill_fwd_kernel(const MlaPrefillParams p) {
  MLASIM_DYNAMIC_SMEM(smem_raw);
  __nv_bfloat16* sQ = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  __nv_bfloat16* sK = sQ + kQTileElems;      // 2 buffers
  __nv_bfloat16* sV = sK + 2 * kKTileElems;  // 2 buffers

  const int b = blockIdx.z, h = blockIdx.y;
  const int m_block = static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x);
  const int q_start = p.cu_seqlens_q[b], s_q = p.cu_seqlens_q[b + 1] - q_start;
  const int k_start = p.cu_seqlens_k[b], s_k = p.cu_seqlens_k[b + 1] - k_start;
  const int m0 = m_block * kBlockM;
  if (m0 >= s_q) return;

  const int offset = s_k - s_q;  // bottom-right causal: query i sees keys j <= i + offset
  const int q_rows = min(kBlockM, s_q - m0);
  int key_end = s_k;
  if (p.causal) key_end = min(s_k, m0 + q_rows + offset);  // the tile's last row sees j < that
  const int n_blocks = key_end > 0 ? (key_end + kBlockN - 1) / kBlockN : 0;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const auto* q_base = static_cast<const __nv_bfloat16*>(p.q);
  const auto* k_base = static_cast<const __nv_bfloat16*>(p.k);
  const auto* v_base = static_cast<const __nv_bfloat16*>(p.v);
  const __nv_bfloat16* qg = q_base + static_cast<std::int64_t>(q_start + m0) * p.q_row_stride +
                            static_cast<std::int64_t>(h) * p.q_head_stride;
  const __nv_bfloat16* kg =
      k_base + static_cast<std::int64_t>(k_start) * p.k_row_stride + static_cast<std::int64_t>(h) * p.k_head_stride;
  const __nv_bfloat16* vg =
      v_base + static_cast<std::int64_t>(k_start) * p.v_row_stride + static_cast<std::int64_t>(h) * p.v_head_stride;

  if (n_blocks > 0) {  // Q and the first K/V tile: one group
    load_tile<kBlockM, kQkChunks>(sQ, qg, p.q_row_stride, q_rows, q_base, tid);
    load_tile<kBlockN, kQkChunks>(sK, kg, p.k_row_stride, min(kBlockN, s_k), k_base, tid);
    load_tile<kBlockN, kVChunks>(sV, vg, p.v_row_stride, min(kBlockN, s_k), v_base, tid);
    cp_async_commit();
  }

  const float scale_log2 = p.softmax_scale * kLog2e;
  const int g = lane >> 2, t = lane & 3;
  const int qi0 = m0 + warp * 16 + g;  // query index (in the sequence) of this lane's row 0; row 1 is +8

  float o[kDv / 8][4];
#pragma unroll
  for (int nt = 0; nt < kDv / 8; ++nt) o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0.f;
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};  // this lane's partial sums; the quad reduces them at the end

  for (int nb = 0; nb < n_blocks; ++nb) {
    const int buf = nb & 1;
    if (nb + 1 < n_blocks) {  // prefetch tile nb+1 into the other buffer (freed by the last barrier)
      const int n1 = (nb + 1) * kBlockN;
      const int rows = min(kBlockN, s_k - n1);
      load_tile<kBlockN, kQkChunks>(sK + (buf ^ 1) * kKTileElems, kg + n1 * p.k_row_stride, p.k_row_stride, rows,
                                    k_base, tid);
      load_tile<kBlockN, kVChunks>(sV + (buf ^ 1) * kVTileElems, vg + n1 * p.v_row_stride, p.v_row_stride, rows,
                                   v_base, tid);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();

    const __nv_bfloat16* k_s = sK + buf * kKTileElems;
    const __nv_bfloat16* v_s = sV + buf * kVTileElems;

    // S = Q Kᵀ for this warp's 16 rows x 64 keys: s[nt] is the 16x8 accumulator of keys 8nt..8nt+7.
    float s[kBlockN / 8][4];
#pragma unroll
    for (int nt = 0; nt < kBlockN / 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < kDqk / 16; ++kk) {
      std::uint32_t a[4];  // Q rows 16w + (lane & 15), dims 16kk + 8(lane >> 4)
      ldmatrix_x4(a, smem_u32(sQ + swz(warp * 16 + (lane & 15), kk * 2 + (lane >> 4), kQkChunks)));
#pragma unroll
      for (int np = 0; np < kBlockN / 16; ++np) {
        std::uint32_t kf[4];  // keys 16np + (lane & 7) + 8(lane >> 4), dims 16kk + 8((lane >> 3) & 1)
        ldmatrix_x4(kf, smem_u32(k_s + swz(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 2 + ((lane >> 3) & 1),
                                           kQkChunks)));
        mma_bf16_16816(s[2 * np], a, kf[0], kf[1]);
        mma_bf16_16816(s[2 * np + 1], a, kf[2], kf[3]);
      }
    }

    // Mask keys past s_k and, when causal, past the diagonal; only tiles that cross either.
    const int n0 = nb * kBlockN;
    if (n0 + kBlockN > s_k || (p.causal && n0 + kBlockN - 1 > m0 + offset)) {
#pragma unroll
      for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int col = n0 + nt * 8 + 2 * t + (e & 1);
          const int qi = qi0 + (e >> 1) * 8;
          const int limit = p.causal ? min(s_k, qi + offset + 1) : s_k;
          if (col >= limit) s[nt][e] = -INFINITY;
        }
    }

    // Online softmax, rows r = 0 (g) and 1 (g + 8).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = row_max[r];
#pragma unroll
      for (int nt = 0; nt < kBlockN / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // A row with nothing unmasked yet keeps max −inf; use 0 so −inf − (−inf) never makes NaN.
      const float m_scaled = mx == -INFINITY ? 0.f : mx * scale_log2;
      const float corr = exp2f(row_max[r] * scale_log2 - m_scaled);  // 0 when the old max was −inf
      row_max[r] = mx;
      row_sum[r] *= corr;
#pragma unroll
      for (int nt = 0; nt < kDv / 8; ++nt) {
        o[nt][2 * r] *= corr;
        o[nt][2 * r + 1] *= corr;
      }
      float ls = 0.f;
#pragma unroll
      for (int nt = 0; nt < kBlockN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float pe = exp2f(fmaf(s[nt][2 * r + e], scale_log2, -m_scaled));
          s[nt][2 * r + e] = pe;
          ls += pe;
        }
      row_sum[r] += ls;
    }

    // O += P V: P's accumulator layout is the A-fragment layout of m16n8k16 (two n-tiles per k-step).
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      const std::uint32_t a[4] = {pack_bf16x2(s[2 * kk][0], s[2 * kk][1]), pack_bf16x2(s[2 * kk][2], s[2 * kk][3]),
                                  pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                  pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int np = 0; np < kDv / 16; ++np) {
        std::uint32_t vf[4];  // keys 16kk + (lane & 7) + 8((lane >> 3) & 1), dims 16np + 8(lane >> 4), transposed
        ldmatrix_x4_trans(vf, smem_u32(v_s + swz(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3),
                                                 np * 2 + (lane >> 4), kVChunks)));
        mma_bf16_16816(o[2 * np], a, vf[0], vf[1]);
        mma_bf16_16816(o[2 * np + 1], a, vf[2], vf[3]);
      }
    }
    __syncthreads();  // every warp is done with buffer `buf` before the next prefetch overwrites it
  }

  // Epilogue: normalise, write bf16 rows and the natural-log LSE.
  auto* out_base = static_cast<__nv_bfloat16*>(p.out);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = row_sum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int qi = qi0 + r * 8;
    if (qi >= s_q) continue;
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    __nv_bfloat16* og = out_base + static_cast<std::int64_t>(q_start + qi) * p.out_row_stride +
                        static_cast<std::int64_t>(h) * p.out_head_stride;
#pragma unroll
    for (int nt = 0; nt < kDv / 8; ++nt)
      *reinterpret_cast<__nv_bfloat162*>(og + nt * 8 + 2 * t) =
          __floats2bfloat162_rn(o[nt][2 * r] * inv, o[nt][2 * r + 1] * inv);
    if (p.lse != nullptr && t == 0)
      p.lse[static_cast<std::int64_t>(h) * p.total_q + q_start + qi] =
          sum > 0.f ? row_max[r] * p.softmax_scale + logf(sum) : -INFINITY;
  }
}

MlaPrefillParams resolve_strides(MlaPrefillParams p) {
  const std::int64_t H = p.num_heads;
  if (p.q_row_stride == 0) p.q_row_stride = H * kDqk;
  if (p.q_head_stride == 0) p.q_head_stride = kDqk;
  if (p.k_row_stride == 0) p.k_row_stride = H * kDqk;
  if (p.k_head_stride == 0) p.k_head_stride = kDqk;
  if (p.v_row_stride == 0) p.v_row_stride = H * kDv;
  if (p.v_head_stride == 0) p.v_head_stride = kDv;
  if (p.out_row_stride == 0) p.out_row_stride = H * kDv;
  if (p.out_head_stride == 0) p.out_head_stride = kDv;
  return p;
}

}  // namespace prefill_detail

std::string mla_prefill_validate(const MlaPrefillParams& in) {
  using prefill_detail::resolve_strides;
  if (!in.q || !in.k || !in.v || !in.out) return "q, k, v and out must be device pointers (one is null)";
  if (!in.cu_seqlens_q || !in.cu_seqlens_k) return "cu_seqlens_q and cu_seqlens_k must be device pointers";
  if (in.batch < 0 || in.batch > 65535) return "batch must be in [0, 65535], got " + std::to_string(in.batch);
  if (in.num_heads < 1 || in.num_heads > 65535)
    return "num_heads must be in [1, 65535], got " + std::to_string(in.num_heads);
  if (in.total_q < 0 || in.max_seqlen_q < 0 || in.max_seqlen_k < 0)
    return "total_q, max_seqlen_q and max_seqlen_k must be >= 0";
  if (!(in.softmax_scale > 0.f) || !std::isfinite(in.softmax_scale))
    return "softmax_scale must be finite and > 0 (the model's scale, docs/spec/mla.md §2)";
  const auto misaligned = [](const void* ptr) { return (reinterpret_cast<std::uintptr_t>(ptr) & 15u) != 0; };
  if (misaligned(in.q) || misaligned(in.k) || misaligned(in.v) || misaligned(in.out))
    return "q, k, v and out must be 16-byte aligned";
  if ((reinterpret_cast<std::uintptr_t>(in.lse) & 3u) != 0) return "lse must be 4-byte aligned";
  const MlaPrefillParams p = resolve_strides(in);
  const std::int64_t strides[] = {p.q_row_stride, p.q_head_stride, p.k_row_stride,   p.k_head_stride,
                                  p.v_row_stride, p.v_head_stride, p.out_row_stride, p.out_head_stride};
  for (std::int64_t s : strides)
    if (s <= 0 || s % 8 != 0) return "every stride must be a positive multiple of 8 elements, got " + std::to_string(s);
  return {};
}

void mla_prefill_launch(const MlaPrefillParams& in, void* stream) {
  using namespace prefill_detail;
  const std::string err = mla_prefill_validate(in);
  MLASIM_CHECK(err.empty(), "mla_prefill_launch: " + err);
  if (in.batch == 0 || in.max_seqlen_q == 0) return;
  const MlaPrefillParams p = resolve_strides(in);
  // Opt in to > 48 KiB of dynamic shared memory once per device (not per launch: it would add host
  // latency between a stream's previous work and this kernel).
  int device = 0;
  MLASIM_CUDA_CHECK(cudaGetDevice(&device));
  static std::atomic<bool> configured[kMaxDevices];
  MLASIM_CHECK(device >= 0 && device < kMaxDevices, "mla_prefill_launch: device id out of range");
  if (!configured[device].load(std::memory_order_acquire)) {
    MLASIM_CUDA_CHECK(
        cudaFuncSetAttribute(mla_prefill_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    configured[device].store(true, std::memory_order_release);
  }
  const dim3 grid((p.max_seqlen_q + kBlockM - 1) / kBlockM, p.num_heads, p.batch);
  MLASIM_LAUNCH(grid, kThreads, kSmemBytes, static_cast<cudaStream_t>(stream), mla_prefill_fwd_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim
