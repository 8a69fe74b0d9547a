// Request helpers: status names, teacher-forced tokens, construction from a scenario entry.
#include "sim/request.h"

#include <algorithm>

#include "sim/check.h"

namespace mlasim {

const char* to_string(RequestStatus s) {
  switch (s) {
    case RequestStatus::kWaiting: return "waiting";
    case RequestStatus::kRunning: return "running";
    case RequestStatus::kPreempted: return "preempted";
    case RequestStatus::kFinishedStopped: return "finished_stopped";
    case RequestStatus::kFinishedLengthCapped: return "finished_length_capped";
  }
  return "unknown";
}

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

int Request::forced_output_token(int i) const {
  if (i < static_cast<int>(forced_output.size())) return forced_output[static_cast<std::size_t>(i)];
  MLASIM_CHECK(vocab_size > 3, "seeded outputs need vocab_size > 3");
  std::uint64_t x = splitmix64(output_seed ^ 0x6F75747075747321ULL);  // "outputs!"
  x = splitmix64(x ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(request_id)));
  x = splitmix64(x ^ static_cast<std::uint64_t>(i));
  const auto range = static_cast<std::uint64_t>(vocab_size - 2);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int tok = 2 + static_cast<int>(x % range);
    const bool bad = tok == eos_token_id ||
                     std::find(stop_token_ids.begin(), stop_token_ids.end(), tok) != stop_token_ids.end();
    if (!bad) return tok;
    x = splitmix64(x);
  }
  MLASIM_CHECK(false, "could not draw an output token that avoids EOS and the stop ids");
  return 2;
}

int Request::accepted_drafts_at(int verify_step, int num_drafts) const {
  if (verify_step < static_cast<int>(accepted_drafts.size())) {
    return std::clamp(accepted_drafts[static_cast<std::size_t>(verify_step)], 0, num_drafts);
  }
  return num_drafts;
}

Request make_request(const RequestSpec& spec, const ModelConfig& model, ReqId id) {
  Request r;
  r.request_id = id;
  r.all_token_ids = spec.prompt;
  r.num_prompt_tokens = static_cast<int>(spec.prompt.size());
  r.max_tokens = spec.max_tokens;
  r.min_tokens = spec.min_tokens;
  r.ignore_eos = spec.ignore_eos;
  r.eos_token_id = model.eos_token_id;
  r.stop_token_ids = spec.stop_token_ids;
  r.priority = spec.priority;
  r.forced_output = spec.output;
  r.output_seed = model.seed;
  r.vocab_size = model.vocab_size;
  r.accepted_drafts = spec.accepted_drafts;
  return r;
}

}  // namespace mlasim
