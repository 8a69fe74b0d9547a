// Seeded prompt and output ids.
#include "sim/request_tokens.h"

#include <algorithm>

#include "sim/seeded_tokens.h"

namespace mlasim {

void seed_prompt(RequestSpec& spec, int len, const std::vector<std::uint64_t>& hash_ids, int block_size,
                 const Scenario& s) {
  const int vocab = s.model.vocab_size;
  spec.prompt.clear();
  spec.prompt.reserve(static_cast<std::size_t>(len));
  if (hash_ids.empty()) {
    const std::uint64_t stream = prompt_token_stream(spec.id);
    for (int j = 0; j < len; ++j)
      spec.prompt.push_back(seeded_token(s.model.seed, stream, static_cast<std::uint64_t>(j), vocab));
    return;
  }
  for (int j = 0; j < len; ++j) {
    const std::uint64_t stream = prompt_block_stream(hash_ids[static_cast<std::size_t>(j / block_size)]);
    spec.prompt.push_back(seeded_token(s.model.seed, stream, static_cast<std::uint64_t>(j % block_size), vocab));
  }
}

void seed_outputs(RequestSpec& spec, const Scenario& s) {
  const std::uint64_t out_stream = output_token_stream(spec.id);
  const int room = s.scheduler.max_model_len - static_cast<int>(spec.prompt.size());
  const int n = std::min(spec.max_tokens, room);
  if (n > static_cast<int>(spec.output.size())) spec.output.reserve(static_cast<std::size_t>(n));
  for (int j = static_cast<int>(spec.output.size()); j < n; ++j)
    spec.output.push_back(seeded_token(s.model.seed, out_stream, static_cast<std::uint64_t>(j), s.model.vocab_size,
                                       spec.stop_token_ids, s.model.eos_token_id));
}

}  // namespace mlasim
