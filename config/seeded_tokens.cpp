// splitmix64-based token generator: a pure function of (seed, stream, index).
#include "config/seeded_tokens.h"

#include <algorithm>
#include <string>

namespace mlasim {

std::uint64_t output_token_stream(std::string_view request_id) {
  return stable_hash("output/" + std::string(request_id));
}

std::uint64_t prompt_token_stream(std::string_view request_id) {
  return stable_hash("prompt/" + std::string(request_id));
}

std::uint64_t prompt_block_stream(std::uint64_t hash_id) {
  return splitmix64(stable_hash("prompt-block/") ^ splitmix64(hash_id));
}

int seeded_token_redraw(std::uint64_t state, const TokenRange& range, const std::vector<int>& avoid, int avoid_also) {
  for (int attempt = 1; attempt < 64; ++attempt) {  // attempt 0, the first draw, was `state`'s
    state = splitmix64(state);
    const int token = range.draw(state);
    if (token != avoid_also && std::find(avoid.begin(), avoid.end(), token) == avoid.end()) return token;
  }
  return 2;  // only reachable when `avoid` covers the whole vocabulary
}

int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab_size,
                 const std::vector<int>& avoid, int avoid_also) {
  // The range's constant costs a 128-bit division: kept per thread for the last vocabulary seen
  // (callers drawing one token at a time, a request's forced outputs, use one vocabulary).
  thread_local int last_vocab_size = 3;
  thread_local TokenRange last_range(3);
  if (vocab_size != last_vocab_size) {
    last_range = TokenRange(vocab_size);
    last_vocab_size = vocab_size;
  }
  return seeded_token(seed, stream, index, last_range, avoid, avoid_also);
}

}  // namespace mlasim
