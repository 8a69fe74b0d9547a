// update_from_output: stop checks in vLLM order, discarded tokens, speculative-decoding rollback,
// drafts that do not fit, finished bookkeeping (docs/spec/scheduler.md §6).
#include <catch2/catch.hpp>

#include "base/check.h"
#include "scheduler_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

// Runs a single request to completion and returns it.
Request run_alone(Request r, int max_model_len = 4096, int k = 0) {
  SchedulerConfig c = make_config(256, 100, max_model_len);
  c.num_speculative_tokens = k;
  Scheduler s(c);
  s.add_request(std::move(r));
  for (int step = 0; step < 1000; ++step) {
    StepResult res = run_step(s);
    if (!res.finished.empty()) return std::move(res.finished[0]);
  }
  FAIL("request did not finish");
  return Request{};
}

std::vector<int> outputs(const Request& r) { return {r.output_token_ids().begin(), r.output_token_ids().end()}; }

}  // namespace

TEST_CASE("stop: EOS is checked before min_tokens, as vLLM 0.33's check_stop does", "[scheduler]") {
  // The sampler never emits EOS before min_tokens (the loader rejects such a forced output);
  // check_stop itself stops on it (v1/core/sched/utils.py ~105 vs ~126).
  Request r = make_req(0, 10, 8);
  r.forced_output = {5, 1, 6};
  r.min_tokens = 2;
  Request f = run_alone(r);
  CHECK(f.status == RequestStatus::kFinishedStopped);
  CHECK(outputs(f) == std::vector<int>{5, 1});
  CHECK_FALSE(f.stop_reason.has_value());
  CHECK(std::string(to_string(f.status)) == "finished_stopped");
}

TEST_CASE("stop: vLLM 0.11 checks the length cap before EOS", "[scheduler]") {
  const bool v033 = GENERATE(true, false);
  SchedulerConfig c = make_config(256, 100);
  if (!v033) c.rules.eos_checked_before_length = false;
  Scheduler s(c);
  Request r = make_req(0, 10, 2);
  r.forced_output = {5, 1};  // EOS as the max_tokens-th output
  s.add_request(r);
  run_step(s);
  StepResult last = run_step(s);
  REQUIRE(last.finished.size() == 1);
  CHECK(last.finished[0].status == (v033 ? RequestStatus::kFinishedStopped : RequestStatus::kFinishedLengthCapped));
}

TEST_CASE("stop: ignore_eos runs to max_tokens", "[scheduler]") {
  Request r = make_req(0, 10, 3);
  r.forced_output = {1, 1, 1, 1};
  r.ignore_eos = true;
  Request f = run_alone(r);
  CHECK(f.status == RequestStatus::kFinishedLengthCapped);
  CHECK(std::string(to_string(f.status)) == "finished_length_capped");
  CHECK(outputs(f) == std::vector<int>{1, 1, 1});
}

TEST_CASE("stop: a stop token id sets the stop reason", "[scheduler]") {
  Request r = make_req(0, 10, 8);
  r.forced_output = {7, 9, 3};
  r.stop_token_ids = {9};
  Request f = run_alone(r);
  CHECK(f.status == RequestStatus::kFinishedStopped);
  CHECK(f.stop_reason == 9);
  CHECK(outputs(f) == std::vector<int>{7, 9});
}

TEST_CASE("stop: EOS is checked before stop ids and before max_tokens", "[scheduler]") {
  Request r = make_req(0, 10, 2);
  r.forced_output = {5, 1};
  r.stop_token_ids = {1};
  Request f = run_alone(r);
  CHECK(f.status == RequestStatus::kFinishedStopped);
  CHECK_FALSE(f.stop_reason.has_value());
  // A stop id on the max_tokens-th token: stopped, not length capped.
  Request r2 = make_req(0, 10, 2);
  r2.forced_output = {5, 9};
  r2.stop_token_ids = {9};
  Request f2 = run_alone(r2);
  CHECK(f2.status == RequestStatus::kFinishedStopped);
  CHECK(f2.stop_reason == 9);
}

TEST_CASE("stop: max_model_len caps the length", "[scheduler]") {
  Request f = run_alone(make_req(0, 10, 100), 13);
  CHECK(f.status == RequestStatus::kFinishedLengthCapped);
  CHECK(f.num_tokens() == 13);
  CHECK(f.num_output_tokens() == 3);
}

TEST_CASE("stop: min_tokens past max_model_len still stops at max_model_len", "[scheduler]") {
  // vLLM accepts it; check_stop tests the length cap before min_tokens (utils.py ~117-126).
  Request r = make_req(0, 10, 100);
  r.min_tokens = 50;
  Request f = run_alone(r, 13);
  CHECK(f.status == RequestStatus::kFinishedLengthCapped);
  CHECK(f.num_output_tokens() == 3);
}

TEST_CASE("stop: seeded outputs avoid EOS and stop ids and are deterministic", "[scheduler]") {
  Request r = make_req(0, 10, 50);
  r.vocab_size = 6;
  r.stop_token_ids = {2, 3};
  for (int i = 0; i < 200; ++i) {
    const int t = r.forced_output_token(i);
    CHECK(t >= 4);
    CHECK(t < 6);
  }
  Request a = run_alone(make_req(0, 10, 20));
  Request b = run_alone(make_req(0, 10, 20));
  CHECK(outputs(a) == outputs(b));
  CHECK(a.status == RequestStatus::kFinishedLengthCapped);
}

TEST_CASE("spec decode: rejected drafts roll back nct, tokens after a stop are discarded", "[scheduler]") {
  SchedulerConfig c = make_config(256, 100);
  c.num_speculative_tokens = 2;
  Scheduler s(c);
  Request req = make_req(0, 10, 9);
  req.accepted_drafts = {1, 0};
  std::vector<int> f;
  for (int i = 0; i < 12; ++i) f.push_back(req.forced_output_token(i));
  s.add_request(req);

  StepResult r0 = run_step(s);  // prefill: 1 token sampled, 2 drafts proposed
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 10}});
  CHECK(r0.model_output.sampled_token_ids[0] == std::vector<int>{f[0]});
  CHECK(r0.model_output.spec_token_ids[0] == std::vector<int>{f[1], f[2]});
  CHECK(s.request(0)->spec_token_ids == std::vector<int>{f[1], f[2]});

  StepResult r1 = run_step(s);  // 1 of 2 accepted
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 3}});
  REQUIRE(r1.out.scheduled_spec_decode_tokens.size() == 1);
  CHECK(r1.out.scheduled_spec_decode_tokens[0].second == std::vector<int>{f[1], f[2]});
  CHECK(r1.out.scheduled_cached_reqs.num_computed_tokens == std::vector<int>{10});
  CHECK(r1.model_output.sampled_token_ids[0] == std::vector<int>{f[1], f[2]});
  CHECK(s.request(0)->num_computed_tokens == 12);  // 13 - 1 rejected
  CHECK(s.request(0)->num_tokens() == 13);

  StepResult r2 = run_step(s);  // 0 of 2 accepted
  CHECK(r2.out.num_scheduled_tokens == Q{{0, 3}});
  CHECK(r2.out.scheduled_cached_reqs.num_computed_tokens == std::vector<int>{12});
  CHECK(r2.model_output.sampled_token_ids[0] == std::vector<int>{f[3]});
  CHECK(s.request(0)->num_computed_tokens == 13);  // 15 - 2 rejected
  CHECK(s.request(0)->num_tokens() == 14);

  StepResult r3 = run_step(s);  // past the list: all accepted
  CHECK(r3.model_output.sampled_token_ids[0] == std::vector<int>{f[4], f[5], f[6]});
  CHECK(s.request(0)->num_computed_tokens == 16);
  CHECK(s.request(0)->num_output_tokens() == 7);

  StepResult r4 = run_step(s);  // samples 3, max_tokens 9 stops after the 2nd
  CHECK(r4.model_output.sampled_token_ids[0] == std::vector<int>{f[7], f[8], f[9]});
  REQUIRE(r4.finished.size() == 1);
  const Request& done = r4.finished[0];
  CHECK(done.status == RequestStatus::kFinishedLengthCapped);
  CHECK(outputs(done) == std::vector<int>(f.begin(), f.begin() + 9));
  CHECK(done.num_verify_steps == 4);
  CHECK(done.block_ids.empty());
}

TEST_CASE("spec decode: only the drafts that fit the budget are scheduled", "[scheduler]") {
  SchedulerConfig c = make_config(16, 100);
  c.num_speculative_tokens = 3;
  c.long_prefill_token_threshold = 13;
  Scheduler s(c);
  s.add_request(make_req(0, 60, 20));
  Request y = make_req(1, 2, 20);
  std::vector<int> f;
  for (int i = 0; i < 6; ++i) f.push_back(y.forced_output_token(i));
  s.add_request(y);
  StepResult r0 = run_step(s);
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 13}, {1, 2}});
  CHECK(s.request(1)->spec_token_ids == std::vector<int>{f[1], f[2], f[3]});
  CHECK(s.request(0)->spec_token_ids.empty());  // a prefill chunk's drafts are ignored
  StepResult r1 = run_step(s);
  // 1 wants 1 + 3 drafts, 3 tokens of budget are left: 2 drafts scheduled, 1 dropped.
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 13}, {1, 3}});
  REQUIRE(r1.out.scheduled_spec_decode_tokens.size() == 1);
  CHECK(r1.out.scheduled_spec_decode_tokens[0].first == 1);
  CHECK(r1.out.scheduled_spec_decode_tokens[0].second == std::vector<int>{f[1], f[2]});
  CHECK(r1.model_output.sampled_token_ids[1] == std::vector<int>{f[1], f[2], f[3]});
  CHECK(s.request(1)->num_computed_tokens == 5);
  CHECK(s.request(1)->num_tokens() == 6);
}

TEST_CASE("scheduler: the incremental audit counts owners from the tables and catches a table's stray block",
          "[scheduler]") {
  SchedulerConfig c = make_config(64, 40);
  c.enable_prefix_caching = true;
  Scheduler s(c);
  REQUIRE(s.audits_changes());
  s.set_audit_every_step(false);  // the incremental audit alone
  s.add_request(make_req(0, 40, 8));
  s.add_request(make_req(1, 40, 8, /*salt=*/0));  // the same prompt: prefix hits, shared blocks
  for (int i = 0; i < 6; ++i) run_step(s);
  s.audit();  // the full audit agrees with the incremental owners
  // A block the pool never gave the request, slipped into its table: the next step counts it as
  // owned, and its ref count disagrees.
  Request* r = s.running().front();
  int stray = 1;
  while (s.block_pool().ref_cnt(stray) != 0) ++stray;
  r->block_ids.push_back(stray);
  ThrowOnCheckFailure throws;
  CHECK_THROWS_AS(run_step(s), InvariantViolation);
}
