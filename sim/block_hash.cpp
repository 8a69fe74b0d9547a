// Chained 64-bit block hashes for the prefix cache.
#include "sim/block_hash.h"

namespace mlasim {

namespace {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

std::uint64_t hash_block_tokens(std::uint64_t parent_hash, std::span<const int> block_token_ids) {
  std::uint64_t h = mix64(parent_hash ^ 0x9E3779B97F4A7C15ULL);
  // FNV-style over 64-bit words of two tokens each (half the serial multiply chain of one round
  // per token); an odd last token is a word of its own, the length mixed in below tells them apart.
  const std::size_t n = block_token_ids.size();
  std::size_t i = 0;
  for (; i + 1 < n; i += 2) {
    const std::uint64_t word = static_cast<std::uint64_t>(static_cast<std::uint32_t>(block_token_ids[i])) |
                               static_cast<std::uint64_t>(static_cast<std::uint32_t>(block_token_ids[i + 1])) << 32;
    h = (h ^ word) * 0x100000001B3ULL;
    h ^= h >> 29;
  }
  if (i < n) {
    h = (h ^ static_cast<std::uint32_t>(block_token_ids[i])) * 0x100000001B3ULL;
    h ^= h >> 29;
  }
  h = mix64(h ^ static_cast<std::uint64_t>(block_token_ids.size()));
  return h == 0 ? 1 : h;  // 0 marks "no hash" in the block pool
}

void update_block_hashes(Request& request, int block_size, int lookahead) {
  const int num_full = (request.num_tokens() - lookahead) / block_size;
  const std::span<const int> tokens(request.all_token_ids);
  for (auto i = static_cast<int>(request.block_hashes.size()); i < num_full; ++i) {
    const std::uint64_t parent = i == 0 ? kNoneBlockHash : request.block_hashes[static_cast<std::size_t>(i - 1)];
    const auto start = static_cast<std::size_t>(i) * static_cast<std::size_t>(block_size);
    std::uint64_t h = hash_block_tokens(parent, tokens.subspan(start, static_cast<std::size_t>(block_size)));
    // The lookahead tokens are extra keys of the block (vLLM: (extra_keys, next_token)).
    if (lookahead > 0)
      h = hash_block_tokens(h, tokens.subspan(start + static_cast<std::size_t>(block_size), static_cast<std::size_t>(lookahead)));
    request.block_hashes.push_back(h);
  }
}

}  // namespace mlasim
