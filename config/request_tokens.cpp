// Seeded prompt and output ids.
#include "config/request_tokens.h"

#include <algorithm>

#include "config/seeded_tokens.h"

namespace mlasim {

void generate_prompt(std::vector<int>& out, int len, std::uint64_t seed, std::uint64_t id_stream,
                     const std::vector<std::uint64_t>& hash_ids, int block_size, int vocab_size) {
  const std::size_t base = out.size();
  out.resize(base + static_cast<std::size_t>(len));
  generate_prompt_ids(out.data() + base, 0, len, seed, id_stream, hash_ids, block_size, vocab_size);
}

void generate_prompt_ids(int* ids, int begin, int end, std::uint64_t seed, std::uint64_t id_stream,
                         const std::vector<std::uint64_t>& hash_ids, int block_size, int vocab_size) {
  const TokenRange range(vocab_size);  // nothing avoided: each token is its stream's first draw
  if (hash_ids.empty()) {
    for (int j = begin; j < end; ++j) ids[j - begin] = first_draw(seed, id_stream, static_cast<std::uint64_t>(j), range);
    return;
  }
  for (int b = begin / block_size; b * block_size < end; ++b) {  // block by block, each from its hash id's stream
    const std::uint64_t stream = prompt_block_stream(hash_ids[static_cast<std::size_t>(b)]);
    const int from = std::max(begin, b * block_size), to = std::min(end, (b + 1) * block_size);
    for (int j = from; j < to; ++j)
      ids[j - begin] = first_draw(seed, stream, static_cast<std::uint64_t>(j - b * block_size), range);
  }
}

void seed_prompt(RequestSpec& spec, int len, const std::vector<std::uint64_t>& hash_ids, int block_size,
                 const Scenario& s) {
  spec.prompt.clear();
  generate_prompt(spec.prompt, len, s.model.seed, prompt_token_stream(spec.id), hash_ids, block_size,
                  s.model.vocab_size);
}

void seed_outputs(RequestSpec& spec, const Scenario& s) {
  extend_outputs(spec, s, std::min(spec.max_tokens, s.scheduler.max_model_len - prompt_len(spec)));
}

void extend_outputs(RequestSpec& spec, const Scenario& s, int n) {
  const std::uint64_t out_stream = output_token_stream(spec.id);
  if (n > static_cast<int>(spec.output.size())) spec.output.reserve(static_cast<std::size_t>(n));
  const TokenRange range(s.model.vocab_size);
  for (int j = static_cast<int>(spec.output.size()); j < n; ++j)
    spec.output.push_back(seeded_token(s.model.seed, out_stream, static_cast<std::uint64_t>(j), range,
                                       spec.stop_token_ids, s.model.eos_token_id));
}

std::vector<int> prompt_tokens(const RequestSpec& spec, const Scenario& s) {
  if (!spec.prompt.empty() || spec.seeded_prompt_len == 0) return spec.prompt;
  std::vector<int> out;
  generate_prompt(out, spec.seeded_prompt_len, s.model.seed, prompt_token_stream(spec.id), spec.prompt_hash_ids,
                  spec.prompt_hash_block_size, s.model.vocab_size);
  return out;
}

RequestSpec resolved_request(const RequestSpec& spec, const Scenario& s) {
  RequestSpec r = spec;
  if (r.prompt.empty() && r.seeded_prompt_len > 0) {
    r.prompt = prompt_tokens(spec, s);
    r.seeded_prompt_len = 0;
    r.prompt_hash_ids.clear();
    r.prompt_hash_block_size = kDefaultPromptHashBlockSize;
  }
  seed_outputs(r, s);
  return r;
}

void resolve_requests(Scenario& s) {
  for (RequestSpec& r : s.requests) r = resolved_request(r, s);
}

}  // namespace mlasim
