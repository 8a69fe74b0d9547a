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

int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab_size,
                 const std::vector<int>& avoid, int avoid_also) {
  const std::uint64_t range = vocab_size > 2 ? static_cast<std::uint64_t>(vocab_size - 2) : 1;
  std::uint64_t state = splitmix64(seed ^ splitmix64(stream ^ splitmix64(index)));
  for (int attempt = 0; attempt < 64; ++attempt) {
    int token = 2 + static_cast<int>(state % range);
    if (token != avoid_also && std::find(avoid.begin(), avoid.end(), token) == avoid.end()) return token;
    state = splitmix64(state);
  }
  return 2;  // only reachable when `avoid` covers the whole vocabulary
}

}  // namespace mlasim
