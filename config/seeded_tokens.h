// Deterministic token ids for prompts given only by length and for teacher-forced outputs not
// written in the scenario. Ids are drawn from [2, vocab) so they never hit the EOS (1) or 0.
#pragma once

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

// Token `index` of the stream (seed, stream). `avoid` ids and `avoid_also` are skipped (stop
// ids and EOS for outputs).
int seeded_token(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab_size,
                 const std::vector<int>& avoid = {}, int avoid_also = -1);

}  // namespace mlasim
