// FlashMLA's dense decode test problem on the host (no CUDA): seeded bf16 inputs (randn/10 clamped to
// [−1, 1]), a paged latent cache with randomly permuted block ids, NaN in every row that is not live
// and sentinel block-table entries, and the double-precision reference of softmax(scale · q·K) V.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kit/rng.h"

namespace mlasim::kit {

inline constexpr int kDecodeDqk = 576, kDecodeDv = 512;  // [c_kv | k_pe] and c_kv widths
inline constexpr int kSentinelBlock = 2147480000;       // FlashMLA's unused block-table entry
inline constexpr float kV3Scale = 0.1352338f;           // DeepSeek-V3 softmax scale (YaRN mscale²/√192)

struct DecodeCase {
  int batch = 1, s_q = 1, num_heads = 1, block_size = 64;
  std::vector<int> seqlens;  // [batch]
  bool causal = true;
  float scale = kV3Scale;
  std::uint64_t seed = 1;

  std::string name() const;  // "b=... s_q=... H=... max_len=... bs=... causal|full"
};

// Equal lengths s_k, or (varlen) FlashMLA's max(N(s_k, s_k/2), s_q).
std::vector<int> make_seqlens(int batch, int s_k, int s_q, bool varlen, Rng& rng);

struct DecodeInputs {
  int max_blocks_per_seq = 0;
  int num_blocks = 0;
  std::vector<std::uint16_t> q;      // [b, s_q, H, 576] bf16 bits
  std::vector<std::uint16_t> cache;  // [num_blocks, block_size, 576] bf16 bits; NaN in every non-live row
  std::vector<int> block_table;      // [b, max_blocks_per_seq]; kSentinelBlock past each request's blocks
};

// Block ids are a random permutation over all blocks (extra_blocks are never used: NaN throughout);
// each row of the block table gets `extra_entries` sentinel entries beyond the longest request.
DecodeInputs make_decode_inputs(const DecodeCase& c, int extra_blocks = 3, int extra_entries = 2);

struct DecodeReference {
  std::vector<double> out;  // [b, s_q, H, 512]
  std::vector<double> lse;  // [b, H, s_q], natural log; +inf for rows with no live key
};

// out = softmax(scale · q·K) V in double over the live keys j < len − s_q + i + 1 (causal) or j < len.
DecodeReference decode_reference(const DecodeCase& c, const DecodeInputs& in);

}  // namespace mlasim::kit
