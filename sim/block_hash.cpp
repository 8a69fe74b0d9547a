// Chained 64-bit block hashes for the prefix cache.
#include "sim/block_hash.h"

#include <vector>

#include "config/seeded_tokens.h"

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

namespace {

// The ids of positions [start, start + n): a view of all_token_ids, or drawn into `scratch` where
// they fall in an unwritten prompt.
std::span<const int> ids_at(const Request& r, int start, int n, std::vector<int>& scratch) {
  if (!r.unwritten_prompt || start >= r.num_prompt_tokens)
    return std::span<const int>(r.all_token_ids).subspan(static_cast<std::size_t>(start), static_cast<std::size_t>(n));
  scratch.resize(static_cast<std::size_t>(n));
  token_ids_at(r, start, start + n, scratch.data());
  return scratch;
}

}  // namespace

bool seeded_block_hash(const Request& request, int start, int block_size, std::uint64_t parent_hash, std::uint64_t& hash) {
  if (!request.unwritten_prompt || start + block_size > request.num_prompt_tokens) return false;
  const Request::SeededPrompt& p = *request.unwritten_prompt;
  std::uint64_t stream = p.stream;
  int offset = start;
  if (!p.hash_ids.empty()) {  // the hash id's stream, if the block lies in one
    const int b = start / p.block_size;
    if ((start + block_size - 1) / p.block_size != b) return false;
    stream = prompt_block_stream(p.hash_ids[static_cast<std::size_t>(b)]);
    offset = start - b * p.block_size;
  }
  std::uint64_t h = mix64(parent_hash ^ 0xD1B54A32D192ED03ULL);  // another domain than the ids' hash
  h = mix64(h ^ p.seed);
  h = mix64(h ^ stream);
  h = mix64(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(offset)) << 32 | static_cast<std::uint32_t>(block_size)));
  h = mix64(h ^ static_cast<std::uint32_t>(p.vocab_size));
  hash = h == 0 ? 1 : h;
  return true;
}

void append_block_hashes(Request& request, int block_size, int lookahead) {
  const int num_full = (request.num_tokens() - lookahead) / block_size;
  thread_local std::vector<int> scratch;
  for (auto i = static_cast<int>(request.block_hashes.size()); i < num_full; ++i) {
    const std::uint64_t parent = i == 0 ? kNoneBlockHash : request.block_hashes[static_cast<std::size_t>(i - 1)];
    const int start = i * block_size;
    std::uint64_t h;
    if (!seeded_block_hash(request, start, block_size, parent, h))
      h = hash_block_tokens(parent, ids_at(request, start, block_size, scratch));
    // The lookahead tokens are extra keys of the block (vLLM: (extra_keys, next_token)).
    if (lookahead > 0) h = hash_block_tokens(h, ids_at(request, start + block_size, lookahead, scratch));
    request.block_hashes.push_back(h);
  }
}

}  // namespace mlasim
