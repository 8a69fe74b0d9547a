// One request as the V1 scheduler sees it (vllm/v1/request.py), plus the teacher-forcing data
// that stands in for the model's sampler: forced output tokens and accepted drafts per step.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "base/check.h"
#include "config/model_config.h"
#include "config/scenario.h"
#include "config/seeded_tokens.h"

namespace mlasim {

using ReqId = int;  // chosen by the caller (the harness uses the scenario index)

enum class RequestStatus : std::uint8_t {
  kWaiting,
  kRunning,
  kPreempted,
  kFinishedStopped,
  kFinishedLengthCapped,
};

// "waiting", "running", "preempted", "finished_stopped", "finished_length_capped".
const char* to_string(RequestStatus s);
inline bool is_finished(RequestStatus s) {
  return s == RequestStatus::kFinishedStopped || s == RequestStatus::kFinishedLengthCapped;
}

struct Request {
  // The fields every step reads or writes of a running request come first, so that they share
  // the struct's first cache lines (a step touches every running request several times); the
  // rest follow.
  ReqId request_id = 0;
  // The scheduler's slot for the request while it is alive (-1 before add_request): a small number
  // the next arrival reuses once the request finishes. The model runner keeps its state by it.
  int slot = -1;

  // Token ids: the prompt followed by the outputs (vLLM's _all_token_ids).
  std::vector<int> all_token_ids;
  int num_prompt_tokens = 0;
  int num_computed_tokens = 0;  // nct
  RequestStatus status = RequestStatus::kWaiting;
  bool is_prefill_chunk = false;

  // Sampling parameters (vllm/sampling_params.py names).
  bool ignore_eos = false;
  int max_tokens = 16;
  int min_tokens = 0;
  int eos_token_id = 1;
  std::vector<int> stop_token_ids;

  std::vector<int> spec_token_ids;  // draft tokens proposed for the next step

  // Teacher forcing: the model's "sampled" tokens. forced_output lists the first ones; past the
  // list seeded_token(output_seed, output_stream, position) continues with
  // ids in [2, vocab_size) that are neither EOS nor a stop id.
  std::vector<int> forced_output;
  std::uint64_t output_seed = 0;
  std::uint64_t output_stream = 0;  // output_token_stream(scenario id); see config/seeded_tokens.h
  int vocab_size = 0;

  // KV cache manager state (vLLM keeps these in dicts keyed by request id; here they live on
  // the request so hot paths do no lookups).
  int num_cached_blocks = 0;                // blocks of the table already in the prefix cache
  std::vector<int> block_ids;               // the block table
  std::vector<std::uint64_t> block_hashes;  // chained hash per full block of all_token_ids
  int audited_num_blocks = 0;               // blocks of the table the scheduler's incremental audit counted
  // Several KV cache groups (the tables live in their managers): the shared prefix a lagging group
  // had not cached at the request's last prefix lookup (vLLM's Request.shared_prefix_boundary,
  // kv_cache_manager.py:297-303), where a Mamba "align" prefill chunk stops (scheduler.py:632-651).
  int shared_prefix_boundary = 0;

  std::optional<int> stop_reason;  // the stop token id that finished the request, if any
  int priority = 0;            // lower runs first under the priority policy
  std::int64_t arrival = 0;    // order of arrival; set by Scheduler::add_request
  int num_preemptions = 0;

  // Accepted drafts per verification step (a step in which drafts were scheduled); past the
  // list every draft is accepted. num_verify_steps counts the steps done so far.
  std::vector<int> accepted_drafts;
  int num_verify_steps = 0;

  // A prompt given only by its length (and a trace's hash ids) is generated when the scheduler
  // first looks at the waiting request (materialize_prompt), so a long queue of waiting requests
  // holds no token ids: until then all_token_ids is empty and num_prompt_tokens is the length.
  struct SeededPrompt {
    std::uint64_t seed = 0;
    std::uint64_t stream = 0;                  // prompt_token_stream(id), without hash ids
    std::vector<std::uint64_t> hash_ids;       // one per block of block_size tokens
    int block_size = 0;
    int vocab_size = 0;
  };
  std::optional<SeededPrompt> pending_prompt;
  // A seeded prompt whose positions all_token_ids holds but whose ids it does not (zeros): the
  // generator that has them (reserve_prompt, for a dry run whose sinks read no token ids,
  // Scheduler::set_prompt_ids_on_demand). Its block hashes come from the generator's streams
  // (update_block_hashes); write_prompt_ids() writes the ids when something needs them.
  std::optional<SeededPrompt> unwritten_prompt;

  int num_tokens() const { return static_cast<int>(all_token_ids.size()); }
  int num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  int num_tokens_with_spec() const { return num_tokens() + static_cast<int>(spec_token_ids.size()); }
  std::span<const int> prompt_token_ids() const {
    return std::span<const int>(all_token_ids).first(static_cast<std::size_t>(num_prompt_tokens));
  }
  std::span<const int> output_token_ids() const {
    return std::span<const int>(all_token_ids).subspan(static_cast<std::size_t>(num_prompt_tokens));
  }

  // The i-th (0-based) teacher-forced output token.
  int forced_output_token(int i) const;
  // The same with the range of vocab_size made once by the caller (teacher forcing's loop).
  // Inline: one call a generated token.
  int forced_output_token(int i, const TokenRange& range) const {
    if (i < static_cast<int>(forced_output.size())) return forced_output[static_cast<std::size_t>(i)];
    MLASIM_CHECK(vocab_size > 3, "seeded outputs need vocab_size > 3");
    return seeded_token(output_seed, output_stream, static_cast<std::uint64_t>(i), range, stop_token_ids, eos_token_id);
  }
  // Drafts accepted in verification step `verify_step` when `num_drafts` were scheduled.
  int accepted_drafts_at(int verify_step, int num_drafts) const;
};

// A request from a scenario entry: prompt, sampling params, forced outputs (seeded by the
// model's seed), priority, accepted drafts; EOS from the model. `id` is the caller's (the
// scenario index).
// Generates a pending prompt into all_token_ids (no-op when there is none).
void materialize_prompt(Request& request);
// Reserves a pending prompt's positions in all_token_ids without drawing its ids (unwritten_prompt).
void reserve_prompt(Request& request);
// Writes an unwritten prompt's ids (no-op when there is none).
void write_prompt_ids(Request& request);
// The ids of positions [begin, end) of the request, written or not, into ids[0, end - begin).
void token_ids_at(const Request& request, int begin, int end, int* ids);

Request make_request(const RequestSpec& spec, const ModelConfig& model, ReqId id);

// What admission checks of a request (check_request) and what bounds its blocks
// (request_always_fits): of a Request, or of its spec before one is made (a trace's checks).
struct RequestLimits {
  int num_prompt_tokens, max_tokens, min_tokens, priority;
  RequestLimits(const Request& r);       // NOLINT(google-explicit-constructor): either converts
  RequestLimits(const RequestSpec& spec);  // NOLINT(google-explicit-constructor)
};

}  // namespace mlasim
