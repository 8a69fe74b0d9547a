// The token ids a request spec does not list: a prompt given by length (seeded from the request id,
// or block by block from a trace's hash ids) and the teacher-forced outputs past the listed ones.
#pragma once

#include <cstdint>
#include <vector>

#include "config/scenario.h"

namespace mlasim {

inline constexpr int kDefaultPromptHashBlockSize = 512;  // Mooncake's trace block

// Fills spec.prompt with `len` seeded ids. With hash ids, token t comes from block t / block_size
// of the stream named by hash_ids[t / block_size], so requests sharing leading hash ids share
// leading tokens (and prefix-cache blocks). hash_ids must cover len (checked by the readers).
// The generator behind both: `len` ids from (seed, id_stream), or block by block from hash ids.
void generate_prompt(std::vector<int>& out, int len, std::uint64_t seed, std::uint64_t id_stream,
                     const std::vector<std::uint64_t>& hash_ids, int block_size, int vocab_size);
// The same generator's ids of positions [begin, end), written to ids[0, end - begin).
void generate_prompt_ids(int* ids, int begin, int end, std::uint64_t seed, std::uint64_t id_stream,
                         const std::vector<std::uint64_t>& hash_ids, int block_size, int vocab_size);
void seed_prompt(RequestSpec& spec, int len, const std::vector<std::uint64_t>& hash_ids, int block_size,
                 const Scenario& s);
// Appends seeded outputs past spec.output up to min(max_tokens, max_model_len - prompt): never EOS
// or a stop id, so an unlisted output runs to max_tokens.
void seed_outputs(RequestSpec& spec, const Scenario& s);
// Appends seeded outputs past spec.output up to n in all (the same ids the replay forces).
void extend_outputs(RequestSpec& spec, const Scenario& s, int n);

// The prompt's length, drawn or not.
inline int prompt_len(const RequestSpec& spec) {
  return spec.prompt.empty() ? spec.seeded_prompt_len : static_cast<int>(spec.prompt.size());
}
// The prompt's token ids: the listed ones, or those a prompt given by length draws.
std::vector<int> prompt_tokens(const RequestSpec& spec, const Scenario& s);
// The spec with every token id listed: its prompt drawn and its outputs seeded up to
// min(max_tokens, max_model_len - prompt), as the replay sees them. For the scenario hash, the
// printers and the shrinker, which work on token ids.
RequestSpec resolved_request(const RequestSpec& spec, const Scenario& s);
// resolved_request for every inline request of `s`.
void resolve_requests(Scenario& s);

}  // namespace mlasim
