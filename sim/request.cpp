// Request helpers: status names, teacher-forced tokens, construction from a scenario entry.
#include "sim/request.h"

#include <algorithm>

#include "base/check.h"
#include "config/request_tokens.h"
#include "config/seeded_tokens.h"

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


int Request::forced_output_token(int i) const { return forced_output_token(i, TokenRange(vocab_size)); }

int Request::accepted_drafts_at(int verify_step, int num_drafts) const {
  if (verify_step < static_cast<int>(accepted_drafts.size())) {
    return std::clamp(accepted_drafts[static_cast<std::size_t>(verify_step)], 0, num_drafts);
  }
  return num_drafts;
}

namespace {

// Room for the prompt and the outputs (up to 4096 of them), so appending samples does not copy the prompt.
void reserve_token_ids(Request& r) {
  r.all_token_ids.reserve(static_cast<std::size_t>(r.num_prompt_tokens) + static_cast<std::size_t>(std::clamp(r.max_tokens, 0, 4096)));
}

}  // namespace

void materialize_prompt(Request& r) {
  if (!r.pending_prompt) return;
  MLASIM_CHECK(r.all_token_ids.empty() && r.num_computed_tokens == 0, "a pending prompt on a request that ran");
  const Request::SeededPrompt& p = *r.pending_prompt;
  reserve_token_ids(r);
  generate_prompt(r.all_token_ids, r.num_prompt_tokens, p.seed, p.stream, p.hash_ids, p.block_size, p.vocab_size);
  r.pending_prompt.reset();
}

void reserve_prompt(Request& r) {
  if (!r.pending_prompt) return;
  MLASIM_CHECK(r.all_token_ids.empty() && r.num_computed_tokens == 0, "a pending prompt on a request that ran");
  reserve_token_ids(r);
  r.all_token_ids.resize(static_cast<std::size_t>(r.num_prompt_tokens));  // zeros (value-initialized: one memset)
  r.unwritten_prompt = std::move(r.pending_prompt);
  r.pending_prompt.reset();
}

void write_prompt_ids(Request& r) {
  if (!r.unwritten_prompt) return;
  const Request::SeededPrompt& p = *r.unwritten_prompt;
  generate_prompt_ids(r.all_token_ids.data(), 0, r.num_prompt_tokens, p.seed, p.stream, p.hash_ids, p.block_size,
                      p.vocab_size);
  r.unwritten_prompt.reset();
}

void token_ids_at(const Request& r, int begin, int end, int* ids) {
  MLASIM_CHECK(0 <= begin && begin <= end && end <= r.num_tokens(), "token positions out of the request");
  int pos = begin;
  if (r.unwritten_prompt && pos < r.num_prompt_tokens) {
    const Request::SeededPrompt& p = *r.unwritten_prompt;
    const int to = std::min(end, r.num_prompt_tokens);
    generate_prompt_ids(ids, pos, to, p.seed, p.stream, p.hash_ids, p.block_size, p.vocab_size);
    pos = to;
  }
  std::copy(r.all_token_ids.begin() + pos, r.all_token_ids.begin() + end, ids + (pos - begin));
}

RequestLimits::RequestLimits(const Request& r)
    : num_prompt_tokens(r.num_prompt_tokens), max_tokens(r.max_tokens), min_tokens(r.min_tokens), priority(r.priority) {}

RequestLimits::RequestLimits(const RequestSpec& spec)
    : num_prompt_tokens(prompt_len(spec)), max_tokens(spec.max_tokens), min_tokens(spec.min_tokens),
      priority(spec.priority) {}

Request make_request(const RequestSpec& spec, const ModelConfig& model, ReqId id) {
  Request r;
  r.request_id = id;
  r.all_token_ids = spec.prompt;
  r.num_prompt_tokens = static_cast<int>(spec.prompt.size());
  if (spec.prompt.empty() && spec.seeded_prompt_len > 0) {
    r.num_prompt_tokens = spec.seeded_prompt_len;
    r.pending_prompt = Request::SeededPrompt{model.seed, prompt_token_stream(spec.id), spec.prompt_hash_ids,
                                             spec.prompt_hash_block_size, model.vocab_size};
  }
  r.max_tokens = spec.max_tokens;
  r.min_tokens = spec.min_tokens;
  r.ignore_eos = spec.ignore_eos;
  r.eos_token_id = model.eos_token_id;
  r.stop_token_ids = spec.stop_token_ids;
  r.priority = spec.priority;
  r.forced_output = spec.output;
  r.output_seed = model.seed;
  r.output_stream = output_token_stream(spec.id);
  r.vocab_size = model.vocab_size;
  r.accepted_drafts = spec.accepted_drafts;
  return r;
}

}  // namespace mlasim
