// Deterministic token ids for prompts given only by length and for teacher-forced outputs not
// written in the scenario. Ids are drawn from [2, vocab) so they never hit the EOS (1) or 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/hash.h"

namespace mlasim {

// The stream of a request's seeded outputs (and of its prompt, for prompt_len).
std::uint64_t output_token_stream(std::string_view request_id);
std::uint64_t prompt_token_stream(std::string_view request_id);
// The stream of one prompt block named by a trace's hash id (prompt_hash_ids): equal ids, equal tokens.
std::uint64_t prompt_block_stream(std::uint64_t hash_id);

// x % d for a fixed d without a division instruction (Lemire, Kaser and Kurz, "Faster remainder by
// direct computation", 2019: with a 128-bit M = ceil(2^128 / d) the remainder is exact for every
// 64-bit x and d >= 1). A 64-bit division per token was most of a prompt's cost.
class FastMod64 {
 public:
  __extension__ typedef unsigned __int128 U128;  // GCC and Clang's; __extension__ keeps -Wpedantic quiet

  explicit FastMod64(std::uint64_t d) : d_(d), m_(~static_cast<U128>(0) / d + 1) {}
  std::uint64_t operator()(std::uint64_t x) const {
    const U128 fraction = m_ * x;  // x / d's fractional part, in 128 bits
    const U128 low = static_cast<U128>(static_cast<std::uint64_t>(fraction)) * d_;
    const U128 high = static_cast<U128>(static_cast<std::uint64_t>(fraction >> 64)) * d_;
    return static_cast<std::uint64_t>(((low >> 64) + high) >> 64);  // floor(fraction * d / 2^128)
  }

 private:
  std::uint64_t d_;
  U128 m_;
};

// The ids a stream draws from, [2, vocab_size) (or {2} for a vocabulary of 2 or fewer).
class TokenRange {
 public:
  explicit TokenRange(int vocab_size)
      : mod_(vocab_size > 2 ? static_cast<std::uint64_t>(vocab_size - 2) : 1) {}
  int draw(std::uint64_t state) const { return 2 + static_cast<int>(mod_(state)); }

 private:
  FastMod64 mod_;
};

// The first draw of token `index` of the stream (seed, stream): the token itself when nothing is
// avoided (prompts). Inline, for the prompt loops.
inline int first_draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, const TokenRange& range) {
  return range.draw(splitmix64(seed ^ splitmix64(stream ^ splitmix64(index))));
}

// Token `index` of the stream (seed, stream). `avoid` ids and `avoid_also` are skipped (stop
// ids and EOS for outputs).
int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab_size,
                 const std::vector<int>& avoid = {}, int avoid_also = -1);
// The draws after a first one (`state`) that hit an avoided id: out of line, as they are rare.
int seeded_token_redraw(std::uint64_t state, const TokenRange& range, const std::vector<int>& avoid, int avoid_also);
// The same with the range computed once by the caller (a prompt's or an output list's loop).
// Inline: teacher forcing draws one a generated token.
inline int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, const TokenRange& range,
                        const std::vector<int>& avoid = {}, int avoid_also = -1) {
  const std::uint64_t state = splitmix64(seed ^ splitmix64(stream ^ splitmix64(index)));
  const int token = range.draw(state);
  if (token != avoid_also && (avoid.empty() || std::find(avoid.begin(), avoid.end(), token) == avoid.end())) return token;
  return seeded_token_redraw(state, range, avoid, avoid_also);
}

}  // namespace mlasim
