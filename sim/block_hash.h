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
// An unwritten seeded prompt's blocks (Request::unwritten_prompt) hash without their ids: a full
// block inside the prompt and inside one of its generator's streams (the request's, or one hash
// id's) hashes the stream and the block's offset in it, chained from the parent, so blocks that
// draw equal ids (a shared hash id at the same offset) hash alike. Other blocks hash their ids,
// drawn where unwritten.
void append_block_hashes(Request& request, int block_size, int lookahead);
// The same, called after every appended token: inline, as most calls find no new full block.
inline void update_block_hashes(Request& request, int block_size, int lookahead = 0) {
  if ((request.num_tokens() - lookahead) / block_size > static_cast<int>(request.block_hashes.size()))
    append_block_hashes(request, block_size, lookahead);
}
// That stream hash of the block at `start`; false where the block is not one (the ids' hash then).
bool seeded_block_hash(const Request& request, int start, int block_size, std::uint64_t parent_hash, std::uint64_t& hash);

}  // namespace mlasim
