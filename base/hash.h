// Stable 64-bit hashes, the same with every compiler and standard library: splitmix64's mixer
// (mlasim's RNG, base/rng.h, and the seeded tokens, config/seeded_tokens.h, are built on it) and FNV-1a.
#pragma once

#include <cstdint>
#include <string_view>

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

}  // namespace mlasim
