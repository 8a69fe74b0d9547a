// Deterministic token ids for prompts given only by length and for teacher-forced outputs not
// written in the scenario. Ids are drawn from [2, vocab) so they never hit the EOS (1) or 0.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace mlasim {

// splitmix64's output function applied to x + golden gamma: a bijective 64-bit mixer. Iterating
// `z = splitmix64(s); s += 0x9e3779b97f4a7c15` is the splitmix64 generator.
// Inline: the weight draw calls it twice per value.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A 64-bit hash of a string (FNV-1a), stable across platforms; names a token stream. `h`: the
// hash of the bytes before `s`, to hash a file in pieces (the default is FNV-1a's offset basis).
constexpr std::uint64_t kStableHashBasis = 0xcbf29ce484222325ULL;
std::uint64_t stable_hash(std::string_view s, std::uint64_t h = kStableHashBasis);

// The stream of a request's seeded outputs (and of its prompt, for prompt_len).
std::uint64_t output_token_stream(std::string_view request_id);
std::uint64_t prompt_token_stream(std::string_view request_id);
// The stream of one prompt block named by a trace's hash id (prompt_hash_ids): equal ids, equal tokens.
std::uint64_t prompt_block_stream(std::uint64_t hash_id);

// Token `index` of the stream (seed, stream). `avoid` ids and `avoid_also` are skipped (stop
// ids and EOS for outputs).
int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab_size,
                 const std::vector<int>& avoid = {}, int avoid_also = -1);

}  // namespace mlasim
