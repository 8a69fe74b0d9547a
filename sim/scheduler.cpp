// Scheduler::schedule(): phase A (running), phase B (waiting), output, nct advance
// (docs/spec/scheduler.md §2, §5, §7).
#include "sim/scheduler.h"
#include "sim/vllm_cannot_run.h"

#include <algorithm>

#include "sim/block_hash.h"
#include "base/check.h"

namespace mlasim {

SchedulerOutput Scheduler::schedule() {
  SchedulerOutput out;
  schedule(out);
  return out;
}

void Scheduler::schedule(SchedulerOutput& out) {
  MLASIM_CHECK(!output_pending_, "schedule() called twice without update_from_output()");
  scheduled_.clear();
  preempted_.clear();
  prefill_scheduled_ = false;
  if (grouped_) {  // scheduler.py ~746
    grouped_->new_step_starts();  // step_new_blocks_ of earlier steps are stale by their step
  }
  int budget = config_.max_num_batched_tokens;
  // vLLM 0.33 (scheduler.py ~757-763): the threshold keeps a long prefill from starving other
  // requests; a lone request (one running plus waiting) has nobody to starve.
  const int num_eligible = static_cast<int>(running_.size()) + waiting_.size();
  const int threshold =
      config_.rules.lone_request_skips_long_prefill_threshold && num_eligible <= 1 ? 0 : config_.long_prefill_token_threshold;
  schedule_running(budget, threshold);
  if (preempted_.empty()) schedule_waiting(budget, threshold);

  int total = 0;
  for (const Scheduled& s : scheduled_) total += s.num_new_tokens;
  MLASIM_CHECK(total + budget == config_.max_num_batched_tokens, "token budget bookkeeping is off");
  check_step_invariants(total);
  // A step that schedules nothing with requests waiting and none running can repeat forever in
  // vLLM too (a padded one-token admission over the budget waits, scheduler.py ~1326); the engine
  // stops after kMaxIdleSteps such steps, as the conformance driver does.

  // The output, each scheduled request's invariants and _update_after_schedule, in one pass.
  build_output(out);
  if (delta_audit_) count_table_growth();
  finished_req_ids_.clear();
  finished_slots_.clear();
  ++step_;
  output_pending_ = true;
}

namespace {

// vLLM 0.11.0 (scheduler.py:262-300) preempts a priority victim already scheduled this step but
// leaves its tokens in the step: the step schedules a preempted request.
std::string victim_kept_in_step() {
  return "vLLM 0.11.0's scheduler preempts a request already scheduled in this step (the lowest-priority one) "
         "and keeps its tokens in the step (vllm/v1/core/sched/scheduler.py:262-300; fixed in 0.11.1): the step "
         "schedules a preempted request, which its model runner cannot take";
}

}  // namespace

int Scheduler::running_num_new_tokens(const Request& r, int budget, int threshold) const {
  int n = r.num_tokens_with_spec() - r.num_computed_tokens;
  if (0 < threshold && threshold < n) n = threshold;
  n = std::min(n, budget);
  // Keep input positions below max_model_len (the 1 is the token sampled per step; vLLM 0.8
  // did not keep it).
  const int sampled_slot = config_.rules.running_cap_reserves_sampled_token ? 1 : 0;
  n = std::min(n, max_model_len_ - sampled_slot - r.num_computed_tokens);
  MLASIM_CHECK(n >= 0, "negative token count for a running request");
  if (mamba_aligned_split_) n = mamba_block_aligned_split(r, n, 0);  // scheduler.py ~859-863
  return n;
}

void Scheduler::schedule_running(int& budget, int threshold) {
  const bool priority = config_.policy == SchedulingPolicy::kPriority;
  std::size_t req_index = 0;
  while (req_index < running_.size() && budget > 0) {
    Request* r = running_[req_index];
    const int n = running_num_new_tokens(*r, budget, threshold);
    if (n == 0) {  // not a stop: lower-priority requests may still run
      ++req_index;
      continue;
    }
    const int blocks_before = static_cast<int>(r->block_ids.size());
    bool allocated = false;
    while (!(allocated = grouped_ ? allocate_running(*r, n) : kv_.allocate_slots(*r, n, num_lookahead_tokens()))) {
      Request* victim = nullptr;
      if (priority) {
        auto it = std::max_element(running_.begin(), running_.end(), [](const Request* a, const Request* b) {
          return a->priority != b->priority ? a->priority < b->priority : a->arrival < b->arrival;
        });
        victim = *it;
        const auto victim_index = static_cast<std::size_t>(it - running_.begin());
        running_.erase(it);
        auto sit = std::find_if(scheduled_.begin(), scheduled_.end(), [victim](const Scheduled& s) { return s.req == victim; });
        const bool was_scheduled = sit != scheduled_.end();
        if (was_scheduled && !config_.rules.priority_victim_leaves_step)
          throw VllmCannotRun(step_, victim_kept_in_step(), victim->request_id);
        if (was_scheduled) {  // scheduled earlier this step: its tokens return to the budget
          budget += sit->num_new_tokens;
          scheduled_.erase(sit);
          if (grouped_) step_new_blocks_at_[static_cast<std::size_t>(victim->slot)] = -1;
        }
        // vLLM 0.33 (scheduler.py ~935-941) steps the cursor back for any victim before it;
        // earlier releases only for a victim scheduled this step.
        if (config_.rules.priority_preemption_continues ? victim_index < req_index : was_scheduled) --req_index;
      } else {  // FCFS: the tail of running, never scheduled yet this step (it is at or past req_index)
        victim = running_.back();
        running_.pop_back();
      }
      preempt(victim);
      if (victim == r) break;  // nothing left to preempt
    }
    if (!allocated) {
      // vLLM 0.33 (scheduler.py ~968-978): under the priority policy a request that preempted
      // itself was the lowest-priority one; the requests after it may still fit, and req_index
      // already points at the next one.
      if (priority && config_.rules.priority_preemption_continues && r->status == RequestStatus::kPreempted) continue;
      break;  // stop phase A
    }
    scheduled_.emplace_back(r, n, blocks_before, Kind::kRunning);
    prefill_scheduled_ = prefill_scheduled_ || r->is_prefill_chunk;
    budget -= n;
    ++req_index;
  }
}

namespace {

// vLLM 0.33 pads a one-token admission to 1 + k tokens (scheduler.py ~1318-1330), then cuts it to
// long_prefill_token_threshold (~1332) and asserts the padding survived (~1579).
std::string padded_admission_cut(int n, int k) {
  return "vLLM 0.33's scheduler raises AssertionError: a one-token admission is padded to 1 + num_speculative_tokens = " +
         std::to_string(1 + k) + " tokens (vllm/v1/core/sched/scheduler.py ~1318-1330), long_prefill_token_threshold cuts "
         "it to " + std::to_string(n) + " (~1332), and `assert num_new_tokens == 1 + self.num_spec_tokens` (~1579) fails";
}

}  // namespace

void Scheduler::schedule_waiting(int& budget, int threshold) {
  const int k = config_.num_speculative_tokens;
  const bool running_scheduled = std::any_of(scheduled_.begin(), scheduled_.end(),
                                             [](const Scheduled& s) { return s.kind == Kind::kRunning; });
  std::vector<Request*> skipped;  // chunked prefill off, vLLM <= 0.13: over the budget, tried next step
  schedule_waiting_requests(budget, threshold, k, running_scheduled, skipped);
  // vLLM 0.11.0 scheduler.py:540-541: skipped requests return to the front (each prepended in turn:
  // the last skipped leads); under the priority policy they rejoin the heap.
  for (Request* r : skipped) waiting_.prepend_request(r);
}

void Scheduler::schedule_waiting_requests(int& budget, int threshold, int k, bool running_scheduled,
                                          std::vector<Request*>& skipped) {
  while (!waiting_.empty() && budget > 0) {
    if (static_cast<int>(running_.size()) == config_.max_num_seqs) break;
    Request* r = waiting_.peek_request();
    if (r->pending_prompt) {  // first look at this request: its prompt and block hashes now
      if (prompt_ids_on_demand_) reserve_prompt(*r);
      else materialize_prompt(*r);
      if (config_.enable_prefix_caching) update_block_hashes(*r, hash_block_size_, num_hash_lookahead_tokens());
    }
    const int num_new_computed = prefix_hit(*r);
    int num_computed = r->num_computed_tokens + num_new_computed;
    // num_tokens, not the prompt: a resumed request recomputes its outputs too.
    int n = r->num_tokens() - num_computed;
    bool padded = false;
    // vLLM 0.33 (scheduler.py ~1308-1330): with speculation, a one-token admission is padded to
    // the uniform decode size 1 + k (placeholder drafts) when running requests were scheduled
    // this step, none of them a prefill chunk, or it has computed tokens; only if 1 + k tokens
    // plus the sampled one fit max_model_len, and it waits rather than run unpadded.
    if (config_.rules.pad_one_token_spec_admission && k > 0 && n == 1 && !prefill_scheduled_ &&
        (running_scheduled || num_computed > 0) && num_computed + 1 + k + 1 <= max_model_len_) {
      if (1 + k > budget) break;
      n = 1 + k;
      padded = true;
    }
    if (0 < threshold && threshold < n) n = threshold;
    if (!config_.enable_chunked_prefill && n > budget) {
      if (config_.rules.chunked_prefill_off_stops_waiting) break;  // head-of-line blocking
      skipped.push_back(waiting_.pop_request());  // vLLM <= 0.13: the next request is tried
      continue;
    }
    n = std::min(n, budget + config_.test_waiting_budget_overrun);  // the overrun is 0 but in fuzzer tests
    MLASIM_CHECK(n > 0, "a waiting request with nothing to compute");
    if (mamba_aligned_split_ && !split_admission(*r, num_new_computed, n, padded)) break;
    // docs/spec/scheduler.md §2 B.5: lookahead slots for drafts; with scheduler_reserve_full_isl
    // the whole sequence must fit too (kv_cache_manager.py ~531).
    const int lookahead =
        config_.rules.fresh_admission_gets_lookahead_slots || r->num_computed_tokens > 0 ? num_lookahead_tokens() : 0;
    if (grouped_ ? !allocate_waiting(*r, n, lookahead, num_new_computed)
                 : !kv_.allocate_slots(*r, n, lookahead, hit_blocks_, num_new_computed,
                                       config_.rules.scheduler_reserve_full_isl))
      break;
    waiting_.pop_request();
    running_.push_back(r);
    const Kind kind = r->status == RequestStatus::kWaiting ? Kind::kNew : Kind::kResumed;
    MLASIM_CHECK(kind == Kind::kNew || r->status == RequestStatus::kPreempted, "bad status in the waiting queue");
    scheduled_.emplace_back(r, n, 0, kind, padded);
    budget -= n;
    r->status = RequestStatus::kRunning;
    r->num_computed_tokens = num_computed;
    // vLLM asserts after admitting the request (scheduler.py:1572-1579): at the stop it is running.
    if (padded && n != 1 + k) throw VllmCannotRun(step_, padded_admission_cut(n, k), r->request_id);
  }
}

void Scheduler::preempt(Request* r) {
  MLASIM_CHECK(r->status == RequestStatus::kRunning, "only running requests can be preempted");
  free_blocks(*r);
  r->status = RequestStatus::kPreempted;
  r->num_computed_tokens = 0;
  if (config_.rules.preemption_clears_drafts) r->spec_token_ids.clear();
  r->is_prefill_chunk = false;
  ++r->num_preemptions;
  waiting_.prepend_request(r);
  preempted_.push_back(r);
}

void Scheduler::build_output(SchedulerOutput& out) {
  out.step = step_;
  std::size_t num_new = 0, num_resumed = 0, num_spec = 0;
  // Without speculation no request holds drafts (update_from_output takes at most
  // num_speculative_tokens) and none is padded: the count needs no request's fields.
  const bool drafts_possible = config_.num_speculative_tokens > 0;
  for (const Scheduled& s : scheduled_) {
    if (s.kind == Kind::kNew) ++num_new;
    else if (s.kind == Kind::kResumed) ++num_resumed;
    if (drafts_possible &&
        ((s.kind == Kind::kRunning && s.num_new_tokens + s.req->num_computed_tokens > s.req->num_tokens() &&
          !s.req->spec_token_ids.empty()) ||
         s.padded_drafts)) {
      ++num_spec;
    }
  }
  const std::size_t num_cached = scheduled_.size() - num_new;
  out.scheduled_new_reqs.resize(num_new);
  CachedRequestData& c = out.scheduled_cached_reqs;
  c.req_ids.resize(num_cached);
  c.slots.resize(num_cached);
  c.resumed_from_preemption.resize(num_cached);
  c.new_block_ids.resize(num_cached);
  c.num_computed_tokens.resize(num_cached);
  c.num_output_tokens.resize(num_cached);
  out.num_scheduled_tokens.resize(scheduled_.size());
  out.scheduled_slots.resize(scheduled_.size());
  out.scheduled_spec_decode_tokens.resize(num_spec);

  std::size_t ni = 0, ci = 0, si = 0;
  int total = 0;
  auto add_cached = [&](const Scheduled& s) {
    const Request& r = *s.req;
    c.req_ids[ci] = r.request_id;
    c.slots[ci] = r.slot;
    c.resumed_from_preemption[ci] = s.kind == Kind::kResumed;
    const auto from = static_cast<std::ptrdiff_t>(s.kind == Kind::kResumed ? 0 : s.num_blocks_before);
    if (from == static_cast<std::ptrdiff_t>(r.block_ids.size())) c.new_block_ids[ci].clear();  // most steps: none
    else c.new_block_ids[ci].assign(r.block_ids.begin() + from, r.block_ids.end());
    c.num_computed_tokens[ci] = r.num_computed_tokens;
    c.num_output_tokens[ci] = r.num_output_tokens();
    ++ci;
  };
  // _update_after_schedule (scheduler.py:1845-1871): nct advances by the scheduled tokens, after the
  // output captured the request's pre-step values. It reads nothing of another request, so each
  // request advances at the end of its own turn below (a resumed one after the second pass).
  auto advance = [](const Scheduled& s) {
    Request& r = *s.req;
    r.num_computed_tokens += s.num_new_tokens;
    r.is_prefill_chunk = r.num_computed_tokens < r.num_tokens();
  };
  scheduled_reqs_.resize(scheduled_.size());
  // One pass in scheduling order: each request's invariants, the new requests' data, the running
  // requests' cached data (vLLM chains the running list, then the resumed one: those follow in a
  // second pass, when there are any), each request's token count and its scheduled drafts.
  for (std::size_t i = 0; i < scheduled_.size(); ++i) {
    const Scheduled& s = scheduled_[i];
    Request& r = *s.req;
    if (!grouped_) check_scheduled_invariants(s);  // grouped: GroupedKVCacheManager::audit after the step
    scheduled_reqs_[i] = s.req;
    if (s.kind == Kind::kNew) {
      NewRequestData& d = out.scheduled_new_reqs[ni++];
      d.req_id = r.request_id;
      d.slot = r.slot;
      d.prompt_token_ids = r.prompt_token_ids();
      d.block_ids.assign(r.block_ids.begin(), r.block_ids.end());
      d.num_computed_tokens = r.num_computed_tokens;
    } else if (s.kind == Kind::kRunning) {
      add_cached(s);
    }
    out.num_scheduled_tokens[i] = {r.request_id, s.num_new_tokens};
    out.scheduled_slots[i] = r.slot;
    total += s.num_new_tokens;
    if (s.kind == Kind::kRunning && !r.spec_token_ids.empty()) {
      // The drafts that fit are scheduled; the rest are dropped. New drafts arrive with the
      // model output.
      const int num_sched_spec = s.num_new_tokens + r.num_computed_tokens - r.num_tokens();
      if (num_sched_spec > 0) {
        auto& [id, drafts] = out.scheduled_spec_decode_tokens[si++];
        id = r.request_id;
        drafts.assign(r.spec_token_ids.begin(),
                      r.spec_token_ids.begin() + std::min<std::ptrdiff_t>(num_sched_spec, static_cast<std::ptrdiff_t>(r.spec_token_ids.size())));
      }
      r.spec_token_ids.clear();
    }
    if (s.padded_drafts) {  // placeholders: the sampler never accepts them (scheduler.py ~1578)
      auto& [id, drafts] = out.scheduled_spec_decode_tokens[si++];
      id = r.request_id;
      drafts.assign(static_cast<std::size_t>(config_.num_speculative_tokens), kPlaceholderDraftToken);
    }
    if (s.kind != Kind::kResumed) advance(s);
  }
  if (num_resumed > 0)
    for (const Scheduled& s : scheduled_)
      if (s.kind == Kind::kResumed) {
        add_cached(s);
        advance(s);
      }
  MLASIM_CHECK(ni == num_new && ci == num_cached && si == num_spec, "output sizing is off");
  out.total_num_scheduled_tokens = total;
  // vLLM 0.33 returns 0 for every group (kv_cache_manager.py:756-759); one group keeps the count.
  out.num_common_prefix_blocks = running_.empty() || grouped_
                                     ? 0
                                     : kv_.get_num_common_prefix_blocks(*running_[0], static_cast<int>(running_.size()));
  if (grouped_) fill_group_block_ids(out);
  out.finished_req_ids.assign(finished_req_ids_.begin(), finished_req_ids_.end());
  out.finished_slots.assign(finished_slots_.begin(), finished_slots_.end());
  out.preempted_req_ids.clear();
  for (const Request* p : preempted_) out.preempted_req_ids.push_back(p->request_id);
}

}  // namespace mlasim
