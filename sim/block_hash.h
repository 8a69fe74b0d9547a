// Prefix-cache block hashes (vllm/v1/core/kv_cache_utils.py hash_block_tokens): each full block
// of token ids hashes to a 64-bit value chained from the previous block's hash. Deterministic
// across runs and platforms (vLLM's NONE_HASH is random per process unless seeded; ours is fixed).
#pragma once

#include <cstdint>
#include <span>

#include "sim/request.h"

namespace mlasim {

inline constexpr std::uint64_t kNoneBlockHash = 0x6D6C6173696D2131ULL;  // parent of block 0

std::uint64_t hash_block_tokens(std::uint64_t parent_hash, std::span<const int> block_token_ids);

// Appends the hashes of the request's full blocks not yet hashed (vLLM's request.block_hashes,
// updated whenever tokens are appended). With lookahead L > 0 (MTP, kv_cache_utils.py ~966) a
// block's hash also covers the L tokens after it and exists only once they do.
void update_block_hashes(Request& request, int block_size, int lookahead = 0);

}  // namespace mlasim
