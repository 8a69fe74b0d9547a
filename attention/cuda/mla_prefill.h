// MLA prefill attention (MHA form: d_qk 192, d_v 128) on CUDA — the host-side params struct and
// launch declarations. Host-only (no CUDA types): any layer may fill a params struct; only
// attention/cuda/ and tests/cuda/ link the kernels. Kernel design: mla_prefill.cu's header.
#pragma once

#include <cstdint>
#include <string>

namespace mlasim {

inline constexpr int kMlaPrefillDqk = 192;  // d_n + d_r = 128 + 64
inline constexpr int kMlaPrefillDv = 128;   // d_v

// Varlen prefill attention over `batch` sequences packed along the token axis (FlashAttention's
// varlen layout). Sequence b owns query tokens [cu_seqlens_q[b], cu_seqlens_q[b+1]) and key
// tokens [cu_seqlens_k[b], cu_seqlens_k[b+1]); s_q or s_k may be 0.
//
// Mask: causal is bottom-right aligned — query i (0-based within its sequence) sees keys
// j < s_k − s_q + i + 1 (FlashAttention / FlashMLA / FlashInfer). Non-causal sees all s_k keys.
// A row that sees no key (s_k = 0, or causal with i < s_q − s_k) gets out = 0 and lse = −inf
// (the CPU reference's convention; FlashMLA writes +inf there, merge_attn_states accepts both).
//
// Numerics: bf16 inputs and output, fp32 accumulation, softmax in base 2 with exp2f; lse is
// natural log: lse = max·scale + ln Σ exp(scale·s − max·scale). Deterministic: the same
// inputs give bitwise-identical outputs (no atomics; fixed reduction order).
//
// Pointers are device pointers. Strides are in elements; 0 selects the contiguous default shown.
// Every base pointer must be 16-byte aligned and every q/k/v/out stride a multiple of 8.
struct MlaPrefillParams {
  const void* q = nullptr;            // [total_q, num_heads, 192] bf16
  const void* k = nullptr;            // [total_k, num_heads, 192] bf16 (k_nope | k_pe per head)
  const void* v = nullptr;            // [total_k, num_heads, 128] bf16
  void* out = nullptr;                // [total_q, num_heads, 128] bf16
  float* lse = nullptr;               // [num_heads, total_q] fp32 natural log (vLLM/FA varlen layout); nullptr: skipped
  const int* cu_seqlens_q = nullptr;  // [batch + 1] int32, device, non-decreasing, cu_seqlens_q[0] = 0
  const int* cu_seqlens_k = nullptr;  // [batch + 1] int32, device, non-decreasing, cu_seqlens_k[0] = 0

  std::int64_t q_row_stride = 0;    // between tokens; 0: num_heads·192
  std::int64_t q_head_stride = 0;   // between heads; 0: 192
  std::int64_t k_row_stride = 0;    // 0: num_heads·192
  std::int64_t k_head_stride = 0;   // 0: 192
  std::int64_t v_row_stride = 0;    // 0: num_heads·128 (a view of kv_b_proj's [T, H, 256] output: 256·H)
  std::int64_t v_head_stride = 0;   // 0: 128 (that view: 256)
  std::int64_t out_row_stride = 0;  // 0: num_heads·128
  std::int64_t out_head_stride = 0; // 0: 128

  int batch = 0;
  int num_heads = 0;
  int total_q = 0;       // cu_seqlens_q[batch]; the lse row length
  int max_seqlen_q = 0;  // ≥ every s_q (sizes the grid)
  int max_seqlen_k = 0;  // ≥ every s_k (checked on the host only for sign)
  bool causal = false;
  float softmax_scale = 0;  // the model's (docs/spec/mla.md §2), e.g. 0.1352338 for DeepSeek-V3
};

// Empty when the params are usable; otherwise what is wrong (host-side checks only: null
// pointers, dims, alignment, strides; cu_seqlens contents live on the device and are trusted).
std::string mla_prefill_validate(const MlaPrefillParams& p);

// Launches on `stream` (a cudaStream_t; nullptr = legacy default stream). Aborts with file:line
// when mla_prefill_validate fails (a caller bug). Asynchronous; no allocation; no host sync.
void mla_prefill_launch(const MlaPrefillParams& p, void* stream);

}  // namespace mlasim
