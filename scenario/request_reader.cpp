// The rules of one request, for inline requests and requests_file lines alike.
#include "scenario/request_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "config/request_tokens.h"

namespace mlasim {
namespace {

using At = RequestFields::At;

constexpr long long kMaxTokenId = 1LL << 31;
// Lists of ids take any integer >= 0 that fits 64 bits (scenarios/README.md: "list of ints >= 0");
// the checks after the read (the vocabulary, k drafts) give the precise message. Trace hash ids
// are 64-bit.
constexpr long long kAnyId = std::numeric_limits<long long>::max();

std::vector<int> read_tokens(const RequestFields& f, const char* key, int vocab) {
  const std::vector<long long> ids = f.read_int_list(key, 0, kAnyId);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab)
      f.fail_item(key, i,
                  "token id " + std::to_string(ids[i]) + " is outside the vocabulary (vocab_size " +
                      std::to_string(vocab) + ")",
                  "token ids must be in [0, vocab_size); raise model.vocab_size or fix the id");
  return std::vector<int>(ids.begin(), ids.end());
}

void read_id(const RequestFields& f, const std::optional<std::string>& default_id, RequestSpec& req) {
  if (!f.has("id")) {
    if (!default_id) f.fail(At::kRequest, "", "missing required key `id`", "give every request a unique id");
    req.id = *default_id;
    return;
  }
  req.id = f.read_string("id");
  if (req.id.empty()) f.fail(At::kValue, "id", "must not be empty");
  // Ids are written one step per line in split goldens and step tables.
  for (unsigned char c : req.id)
    if (c < 0x20 || c == 0x7f)
      f.fail(At::kValue, "id", "contains a control character",
             "split goldens list rows one step per line: write the id without newlines, tabs or other control "
             "characters");
}

void read_arrival(const RequestFields& f, RequestSpec& req) {
  if (f.has("arrival_step") && f.has("arrival_time"))
    f.fail(At::kKey, "arrival_time", "both arrival_step and arrival_time",
           "a request arrives at a step or at a time, not both");
  // Steps are 32-bit: 2^30 leaves the run after the last arrival room to finish.
  if (f.has("arrival_step")) req.arrival_step = static_cast<int>(f.read_int("arrival_step", 0, 1LL << 30));
  if (f.has("arrival_time")) {
    const double seconds = f.read_seconds("arrival_time");
    if (seconds > 1e9) f.fail(At::kValue, "arrival_time", "expected seconds in [0, 1e9]");
    req.arrival_time_ns = std::llround(seconds * 1e9);
  }
}

void fail_too_long(const RequestFields& f, const char* key, std::size_t len, int max_model_len) {
  f.fail(At::kValue, key,
         "prompt of " + std::to_string(len) + " tokens does not fit max_model_len " + std::to_string(max_model_len),
         "a prompt must leave room for at least one output token");
}

// A prompt by length: its hash ids (one per block) when given; the tokens are drawn later.
void read_seeded_prompt(const RequestFields& f, int len, RequestSpec& req) {
  int block = kDefaultPromptHashBlockSize;
  if (f.has("prompt_hash_block_size"))
    block = static_cast<int>(f.read_int("prompt_hash_block_size", 1, 1LL << 20));
  std::vector<std::uint64_t> ids;
  if (f.has("prompt_hash_ids")) {
    const std::vector<long long> list = f.read_int_list("prompt_hash_ids", 0, kAnyId);
    const std::size_t want = static_cast<std::size_t>((len + block - 1) / block);
    if (list.size() != want)
      f.fail(At::kValue, "prompt_hash_ids",
             std::to_string(list.size()) + " hash ids for a prompt of " + std::to_string(len) +
                 " tokens in blocks of " + std::to_string(block) + " (needs " + std::to_string(want) + ")",
             "one hash id per prompt block: ceil(prompt_len / prompt_hash_block_size)");
    ids.assign(list.begin(), list.end());
  }
  req.seeded_prompt_len = len;
  req.prompt_hash_ids = std::move(ids);
  req.prompt_hash_block_size = block;
}

void read_prompt(const RequestFields& f, const Scenario& s, RequestSpec& req) {
  const bool prompt = f.has("prompt"), prompt_len = f.has("prompt_len");
  const bool hash_ids = f.has("prompt_hash_ids"), hash_block = f.has("prompt_hash_block_size");
  if (prompt) {
    req.prompt = read_tokens(f, "prompt", s.model.vocab_size);
    if (req.prompt.empty()) f.fail(At::kValue, "prompt", "must not be empty", "a prompt has at least one token");
  }
  if (!prompt && !prompt_len)
    f.fail(At::kRequest, "", "missing `prompt` or `prompt_len`", "give the prompt's token ids, or its length for seeded ids");
  if ((hash_ids || hash_block) && (prompt || !prompt_len))
    f.fail(At::kKey, hash_ids ? "prompt_hash_ids" : "prompt_hash_block_size",
           "prompt_hash_ids seeds a prompt given by prompt_len", "give prompt_len (and no prompt) with prompt_hash_ids");
  if (hash_block && !hash_ids)
    f.fail(At::kKey, "prompt_hash_block_size", "prompt_hash_block_size without prompt_hash_ids");
  // vLLM rejects prompts longer than max_model_len; one of exactly max_model_len tokens could
  // never be scheduled whole (the scheduler keeps one position for the sampled token).
  const int max_model_len = s.scheduler.max_model_len;
  if (!prompt_len) {
    if (static_cast<int>(req.prompt.size()) >= max_model_len) fail_too_long(f, "prompt", req.prompt.size(), max_model_len);
    return;
  }
  const int len = static_cast<int>(f.read_int("prompt_len", 1, kMaxTokenId - 1));
  if (prompt && len != static_cast<int>(req.prompt.size()))
    f.fail(At::kValue, "prompt_len",
           "prompt_len " + std::to_string(len) + " disagrees with the prompt's " + std::to_string(req.prompt.size()) +
               " tokens",
           "give either `prompt` or `prompt_len`, or make them agree");
  // Checked before any prompt is drawn, so no huge seeded prompt is ever built.
  if (len >= max_model_len) fail_too_long(f, "prompt_len", static_cast<std::size_t>(len), max_model_len);
  if (!prompt) read_seeded_prompt(f, len, req);
}

void read_sampling(const RequestFields& f, const Scenario& s, RequestSpec& req) {
  // Outputs are bounded by max_model_len (at most 2^24) anyway; 2^30 keeps prompt + max_tokens in an int.
  if (f.has("max_tokens")) req.max_tokens = static_cast<int>(f.read_int("max_tokens", 1, 1LL << 30));
  if (f.has("min_tokens")) {
    req.min_tokens = static_cast<int>(f.read_int("min_tokens", 0, 1LL << 30));
    if (req.min_tokens > req.max_tokens)  // vLLM SamplingParams rejects this too
      f.fail(At::kValue, "min_tokens",
             "min_tokens " + std::to_string(req.min_tokens) + " exceeds max_tokens " + std::to_string(req.max_tokens),
             "lower min_tokens or raise max_tokens");
  }
  if (f.has("ignore_eos")) req.ignore_eos = f.read_bool("ignore_eos");
  if (f.has("stop_token_ids")) req.stop_token_ids = read_tokens(f, "stop_token_ids", s.model.vocab_size);
  if (f.has("priority")) req.priority = static_cast<int>(f.read_int("priority", -kMaxTokenId + 1, kMaxTokenId - 1));
}

// Teacher-forced outputs. vLLM's sampler never emits EOS or a stop id before min_tokens
// (MinTokensLogitsProcessor masks them, ignore_eos or not: sampling_params.py ~784), so a forced
// output that does is an input no engine produces; check_stop would stop on it
// (v1/core/sched/utils.py ~105-126).
void read_output(const RequestFields& f, const Scenario& s, RequestSpec& req) {
  if (!f.has("output")) return;
  req.output = read_tokens(f, "output", s.model.vocab_size);
  req.output_given = true;
  const std::size_t n = std::min(req.output.size(), static_cast<std::size_t>(req.min_tokens));
  for (std::size_t j = 0; j < n; ++j) {
    const int tok = req.output[j];
    const bool eos = tok == s.model.eos_token_id;
    if (!eos && std::find(req.stop_token_ids.begin(), req.stop_token_ids.end(), tok) == req.stop_token_ids.end())
      continue;
    f.fail_item("output", j,
                "output[" + std::to_string(j) + "] is " + (eos ? "EOS" : "stop token") + " " + std::to_string(tok) +
                    " before min_tokens " + std::to_string(req.min_tokens),
                "no engine samples EOS or a stop id before min_tokens: move it to index >= min_tokens or lower "
                "min_tokens");
  }
}

void read_accepted_drafts(const RequestFields& f, const Scenario& s, RequestSpec& req) {
  if (!f.has("accepted_drafts")) return;
  const int k = s.scheduler.num_speculative_tokens;
  if (k == 0)
    f.fail(At::kKey, "accepted_drafts", "given without speculative decoding",
           "set scheduler.num_speculative_tokens > 0, or drop accepted_drafts");
  const std::vector<long long> list = f.read_int_list("accepted_drafts", 0, kAnyId);
  for (std::size_t j = 0; j < list.size(); ++j)
    if (list[j] > k)
      f.fail_item("accepted_drafts", j,
                  std::to_string(list[j]) + " accepted drafts, but only " + std::to_string(k) + " are proposed per step",
                  "each entry is between 0 and scheduler.num_speculative_tokens");
  req.accepted_drafts.assign(list.begin(), list.end());
}

}  // namespace

const std::vector<std::string>& request_keys() {
  static const std::vector<std::string> keys = {
      "id",         "arrival_step",   "arrival_time", "prompt",   "prompt_len",     "prompt_hash_ids",
      "prompt_hash_block_size", "max_tokens", "min_tokens", "ignore_eos", "stop_token_ids", "output",
      "priority",   "accepted_drafts"};
  return keys;
}

RequestSpec read_request(const RequestFields& f, const Scenario& s, const std::optional<std::string>& default_id) {
  RequestSpec req;
  read_id(f, default_id, req);
  read_arrival(f, req);
  read_prompt(f, s, req);
  read_sampling(f, s, req);
  read_output(f, s, req);
  read_accepted_drafts(f, s, req);
  return req;
}

}  // namespace mlasim
