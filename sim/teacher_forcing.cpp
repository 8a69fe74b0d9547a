// Teacher-forced ModelRunnerOutput.
#include "sim/teacher_forcing.h"

#include <optional>

#include "base/check.h"
#include "config/seeded_tokens.h"

namespace mlasim {

void teacher_force(const Scheduler& scheduler, const SchedulerOutput& out, ModelRunnerOutput& mo) {
  const auto reqs = scheduler.scheduled_requests();
  MLASIM_CHECK(reqs.size() == out.num_scheduled_tokens.size() && out.step == scheduler.step() - 1,
               "teacher_force needs the scheduler's latest output");
  const int k = scheduler.config().num_speculative_tokens;
  mo.req_ids.resize(reqs.size());
  mo.sampled_token_ids.resize(reqs.size());
  mo.spec_token_ids.resize(reqs.size());
  std::size_t spec_j = 0;
  // The seeded outputs' range, made once per vocabulary (every request of a scenario shares one).
  std::optional<TokenRange> range;
  int range_vocab_size = -1;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = *reqs[i];
    if (r.vocab_size != range_vocab_size) {
      range.emplace(r.vocab_size);
      range_vocab_size = r.vocab_size;
    }
    MLASIM_CHECK(out.num_scheduled_tokens[i].first == r.request_id, "scheduled requests out of order");
    mo.req_ids[i] = r.request_id;
    std::vector<int>& sampled = mo.sampled_token_ids[i];
    std::vector<int>& drafts_next = mo.spec_token_ids[i];
    sampled.clear();
    drafts_next.clear();
    const std::vector<int>* drafts = nullptr;
    if (spec_j < out.scheduled_spec_decode_tokens.size() && out.scheduled_spec_decode_tokens[spec_j].first == r.request_id) {
      drafts = &out.scheduled_spec_decode_tokens[spec_j].second;
      ++spec_j;
    }
    if (r.is_prefill_chunk) continue;  // a partial prefill samples nothing
    const int o = r.num_output_tokens();
    int accepted = 0;
    const bool placeholders = drafts != nullptr && !drafts->empty() && drafts->front() == kPlaceholderDraftToken;
    if (drafts != nullptr && !placeholders) {  // placeholder drafts are never accepted
      const int d = static_cast<int>(drafts->size());
      accepted = r.accepted_drafts_at(r.num_verify_steps, d);
      for (int j = 0; j < accepted; ++j) {
        MLASIM_CHECK((*drafts)[static_cast<std::size_t>(j)] == r.forced_output_token(o + j, *range),
                     "an accepted draft differs from the forced output");
      }
    }
    for (int j = 0; j <= accepted; ++j) sampled.push_back(r.forced_output_token(o + j, *range));
    for (int j = 0; j < k; ++j) drafts_next.push_back(r.forced_output_token(o + accepted + 1 + j, *range));
  }
}

ModelRunnerOutput teacher_force(const Scheduler& scheduler, const SchedulerOutput& out) {
  ModelRunnerOutput mo;
  teacher_force(scheduler, out, mo);
  return mo;
}

}  // namespace mlasim
