// merge_attn_states on CUDA: combine two partial attention results over disjoint key sets by
// their log-sum-exps (chunked-context prefill, docs/spec/routing.md §4). Host-only header.
#pragma once

#include <cstdint>
#include <string>

namespace mlasim {

// Per token t and head h, with a = prefix_lse[h, t] and b = suffix_lse[h, t]:
//   lse = log(e^a + e^b),  out = prefix_out·e^(a − lse) + suffix_out·e^(b − lse)
// computed in fp32 as m = max(a, b), wa = e^(a−m), wb = e^(b−m), out = (o_a·wa + o_b·wb)/(wa + wb).
// An lse of −inf or +inf marks a side that saw no key (+inf is FlashAttention's/FlashMLA's
// marker, −inf ours): that side is ignored and the other is copied bitwise (out and lse); both
// empty → out 0, lse −inf. A NaN lse on either side gives NaN out and lse.
//
// Aliasing: out may be prefix_out or suffix_out, and out_lse may be prefix_lse or suffix_lse
// (in-place accumulation over chunks); every element is read before any thread writes it.
struct MergeAttnStatesParams {
  void* out = nullptr;               // [num_tokens, num_heads, head_size] bf16
  float* out_lse = nullptr;          // [num_heads, lse_stride] fp32; nullptr: not written
  const void* prefix_out = nullptr;  // [num_tokens, num_heads, head_size] bf16
  const float* prefix_lse = nullptr; // [num_heads, lse_stride] fp32
  const void* suffix_out = nullptr;  // [num_tokens, num_heads, head_size] bf16
  const float* suffix_lse = nullptr; // [num_heads, lse_stride] fp32

  std::int64_t out_row_stride = 0;     // elements between tokens; 0: num_heads·head_size
  std::int64_t prefix_row_stride = 0;  // 0: num_heads·head_size
  std::int64_t suffix_row_stride = 0;  // 0: num_heads·head_size
  std::int64_t lse_stride = 0;         // elements between heads in all three lse arrays; 0: num_tokens

  int num_tokens = 0;
  int num_heads = 0;
  int head_size = 0;  // a power of two in [8, 1024] (128 for the prefill form, 512 for the latent)
};

// Empty when usable; otherwise what is wrong (null pointers, sizes, 16-byte alignment).
std::string merge_attn_states_validate(const MergeAttnStatesParams& p);

// Launches on `stream` (a cudaStream_t; nullptr = legacy default stream); aborts on invalid params.
void merge_attn_states_launch(const MergeAttnStatesParams& p, void* stream);

}  // namespace mlasim
