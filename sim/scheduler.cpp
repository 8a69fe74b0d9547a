// Scheduler::schedule(): phase A (running), phase B (waiting), output, nct advance
// (docs/spec/scheduler.md §2, §5, §7).
#include "sim/scheduler.h"

#include <algorithm>

#include "sim/check.h"

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
  int budget = config_.max_num_batched_tokens;
  schedule_running(budget);
  if (preempted_.empty()) schedule_waiting(budget);

  int total = 0;
  for (const Scheduled& s : scheduled_) total += s.num_new_tokens;
  MLASIM_CHECK(total + budget == config_.max_num_batched_tokens, "token budget bookkeeping is off");
  check_step_invariants(total);
  // vLLM asserts progress implicitly; a step that schedules nothing with work waiting and
  // nothing running would repeat forever (check_request() rules that out).
  MLASIM_CHECK(total > 0 || !running_.empty() || waiting_.empty(), "no progress possible: waiting requests cannot be admitted");

  build_output(out);

  // _update_after_schedule: advance nct after the output captured the pre-step values.
  scheduled_reqs_.clear();
  for (const Scheduled& s : scheduled_) {
    Request& r = *s.req;
    r.num_computed_tokens += s.num_new_tokens;
    r.is_prefill_chunk = r.num_computed_tokens < r.num_tokens();
    scheduled_reqs_.push_back(s.req);
  }
  finished_req_ids_.clear();
  ++step_;
  output_pending_ = true;
}

void Scheduler::schedule_running(int& budget) {
  const int threshold = config_.long_prefill_token_threshold;
  std::size_t req_index = 0;
  while (req_index < running_.size() && budget > 0) {
    Request* r = running_[req_index];
    int n = r->num_tokens_with_spec() - r->num_computed_tokens;
    if (0 < threshold && threshold < n) n = threshold;
    n = std::min(n, budget);
    // Keep input positions below max_model_len (the 1 is the token sampled per step).
    n = std::min(n, max_model_len_ - 1 - r->num_computed_tokens);
    MLASIM_CHECK(n >= 0, "negative token count for a running request");
    if (n == 0) {  // not a stop: lower-priority requests may still run
      ++req_index;
      continue;
    }
    const int blocks_before = static_cast<int>(r->block_ids.size());
    bool allocated = false;
    while (!(allocated = kv_.allocate_slots(*r, n, num_lookahead_tokens()))) {
      Request* victim = nullptr;
      if (config_.policy == SchedulingPolicy::kPriority) {
        auto it = std::max_element(running_.begin(), running_.end(), [](const Request* a, const Request* b) {
          return a->priority != b->priority ? a->priority < b->priority : a->arrival < b->arrival;
        });
        victim = *it;
        running_.erase(it);
      } else {
        victim = running_.back();
        running_.pop_back();
      }
      auto sit = std::find_if(scheduled_.begin(), scheduled_.end(), [victim](const Scheduled& s) { return s.req == victim; });
      if (sit != scheduled_.end()) {
        // Scheduled earlier this step: its tokens return to the budget. As in vLLM, req_index
        // steps back only in this case.
        budget += sit->num_new_tokens;
        scheduled_.erase(sit);
        --req_index;
      }
      preempt(victim);
      if (victim == r) break;  // nothing left to preempt
    }
    if (!allocated) break;  // stop phase A
    scheduled_.push_back({r, n, blocks_before, Kind::kRunning});
    budget -= n;
    ++req_index;
  }
}

void Scheduler::schedule_waiting(int& budget) {
  const int threshold = config_.long_prefill_token_threshold;
  while (!waiting_.empty() && budget > 0) {
    if (static_cast<int>(running_.size()) == config_.max_num_seqs) break;
    Request* r = waiting_.peek_request();
    int num_computed = r->num_computed_tokens;
    int num_new_computed = 0;
    hit_blocks_.clear();
    if (r->num_computed_tokens == 0) {
      num_new_computed = kv_.get_computed_blocks(*r, hit_blocks_);
      num_computed = num_new_computed;
    }
    // num_tokens, not the prompt: a resumed request recomputes its outputs too.
    int n = r->num_tokens() - num_computed;
    if (0 < threshold && threshold < n) n = threshold;
    if (!config_.enable_chunked_prefill && n > budget) break;  // head-of-line blocking
    n = std::min(n, budget);
    MLASIM_CHECK(n > 0, "a waiting request with nothing to compute");
    // spec §2 B.5: lookahead slots for drafts. (vLLM 2026 passes 0 lookahead for a request
    // with nct == 0, a P/D edge case; the spec wins here.)
    if (!kv_.allocate_slots(*r, n, num_lookahead_tokens(), hit_blocks_, num_new_computed)) break;
    waiting_.pop_request();
    running_.push_back(r);
    const Kind kind = r->status == RequestStatus::kWaiting ? Kind::kNew : Kind::kResumed;
    MLASIM_CHECK(kind == Kind::kNew || r->status == RequestStatus::kPreempted, "bad status in the waiting queue");
    scheduled_.push_back({r, n, 0, kind});
    budget -= n;
    r->status = RequestStatus::kRunning;
    r->num_computed_tokens = num_computed;
  }
}

void Scheduler::preempt(Request* r) {
  MLASIM_CHECK(r->status == RequestStatus::kRunning, "only running requests can be preempted");
  kv_.free(*r);
  r->status = RequestStatus::kPreempted;
  r->num_computed_tokens = 0;
  r->spec_token_ids.clear();
  r->is_prefill_chunk = false;
  ++r->num_preemptions;
  waiting_.prepend_request(r);
  preempted_.push_back(r);
}

void Scheduler::build_output(SchedulerOutput& out) {
  out.step = step_;
  std::size_t num_new = 0, num_cached = 0, num_spec = 0;
  for (const Scheduled& s : scheduled_) {
    if (s.kind == Kind::kNew) ++num_new;
    else ++num_cached;
    if (s.kind == Kind::kRunning && s.num_new_tokens + s.req->num_computed_tokens > s.req->num_tokens() &&
        !s.req->spec_token_ids.empty()) {
      ++num_spec;
    }
  }
  out.scheduled_new_reqs.resize(num_new);
  CachedRequestData& c = out.scheduled_cached_reqs;
  c.req_ids.resize(num_cached);
  c.resumed_from_preemption.resize(num_cached);
  c.new_block_ids.resize(num_cached);
  c.num_computed_tokens.resize(num_cached);
  c.num_output_tokens.resize(num_cached);
  out.num_scheduled_tokens.resize(scheduled_.size());
  out.scheduled_spec_decode_tokens.resize(num_spec);

  std::size_t ni = 0, ci = 0, si = 0;
  int total = 0;
  // Cached data lists running requests first, then resumed ones (vLLM chains the two lists).
  for (int pass = 0; pass < 2; ++pass) {
    for (const Scheduled& s : scheduled_) {
      const Request& r = *s.req;
      if (pass == 0 && s.kind == Kind::kNew) {
        NewRequestData& d = out.scheduled_new_reqs[ni++];
        d.req_id = r.request_id;
        d.prompt_token_ids.assign(r.prompt_token_ids().begin(), r.prompt_token_ids().end());
        d.block_ids.assign(r.block_ids.begin(), r.block_ids.end());
        d.num_computed_tokens = r.num_computed_tokens;
      }
      if ((pass == 0 && s.kind == Kind::kRunning) || (pass == 1 && s.kind == Kind::kResumed)) {
        c.req_ids[ci] = r.request_id;
        c.resumed_from_preemption[ci] = s.kind == Kind::kResumed;
        const auto from = static_cast<std::ptrdiff_t>(s.kind == Kind::kResumed ? 0 : s.num_blocks_before);
        c.new_block_ids[ci].assign(r.block_ids.begin() + from, r.block_ids.end());
        c.num_computed_tokens[ci] = r.num_computed_tokens;
        c.num_output_tokens[ci] = r.num_output_tokens();
        ++ci;
      }
    }
  }
  for (std::size_t i = 0; i < scheduled_.size(); ++i) {
    const Scheduled& s = scheduled_[i];
    Request& r = *s.req;
    out.num_scheduled_tokens[i] = {r.request_id, s.num_new_tokens};
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
  }
  MLASIM_CHECK(ni == num_new && ci == num_cached && si == num_spec, "output sizing is off");
  out.total_num_scheduled_tokens = total;
  out.num_common_prefix_blocks =
      running_.empty() ? 0 : kv_.get_num_common_prefix_blocks(*running_[0], static_cast<int>(running_.size()));
  out.finished_req_ids.assign(finished_req_ids_.begin(), finished_req_ids_.end());
  out.preempted_req_ids.clear();
  for (const Request* p : preempted_) out.preempted_req_ids.push_back(p->request_id);
}

}  // namespace mlasim
