// Scheduler rules with exact values: budget/threshold, chunked prefill, preemption, prefix hits,
// max_num_seqs, priority, queue order (docs/spec/scheduler.md §2-5).
#include <catch2/catch.hpp>

#include "scheduler_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

TEST_CASE("scheduler: budget 1024, threshold 400, three 800-token prompts", "[scheduler]") {
  SchedulerConfig c = make_config(1024, 1000);
  c.long_prefill_token_threshold = 400;
  Scheduler s(c);
  for (int i = 0; i < 3; ++i) s.add_request(make_req(i, 800));
  StepResult r0 = run_step(s);
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 400}, {1, 400}, {2, 224}});
  CHECK(r0.out.total_num_scheduled_tokens == 1024);
  REQUIRE(r0.out.scheduled_new_reqs.size() == 3);
  CHECK(r0.out.scheduled_new_reqs[0].block_ids.size() == 25);
  CHECK(r0.out.scheduled_new_reqs[0].block_ids.front() == 1);
  CHECK(r0.out.scheduled_new_reqs[1].block_ids.front() == 26);
  CHECK(r0.out.scheduled_new_reqs[2].block_ids.size() == 14);  // ceil(224/16)
  CHECK(r0.model_output.sampled_token_ids == std::vector<std::vector<int>>{{}, {}, {}});
  // A request mid-prefill is running, so it continues first.
  StepResult r1 = run_step(s);
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 400}, {1, 400}, {2, 224}});
  CHECK(r1.out.scheduled_cached_reqs.req_ids == std::vector<ReqId>{0, 1, 2});
  CHECK(r1.out.scheduled_cached_reqs.num_computed_tokens == std::vector<int>{400, 400, 224});
  CHECK(s.request(0)->num_output_tokens() == 1);  // last prompt token computed -> first output
  CHECK(s.request(2)->num_output_tokens() == 0);
  StepResult r2 = run_step(s);
  CHECK(r2.out.num_scheduled_tokens == Q{{0, 1}, {1, 1}, {2, 352}});
  CHECK(s.request(2)->num_output_tokens() == 1);
}

TEST_CASE("scheduler: chunked prefill off blocks the head of the line", "[scheduler]") {
  const bool chunked = GENERATE(false, true);
  SchedulerConfig c = make_config(128, 1000, 128);
  c.enable_chunked_prefill = chunked;
  Scheduler s(c);
  s.add_request(make_req(0, 100, 4));
  s.add_request(make_req(1, 50, 4));
  s.add_request(make_req(2, 10, 4));
  StepResult r0 = run_step(s);
  if (!chunked) {
    CHECK(r0.out.num_scheduled_tokens == Q{{0, 100}});  // 2 (10 tokens) is not considered
    StepResult r1 = run_step(s);
    CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}, {1, 50}, {2, 10}});
  } else {
    CHECK(r0.out.num_scheduled_tokens == Q{{0, 100}, {1, 28}});
    StepResult r1 = run_step(s);
    CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}, {1, 22}, {2, 10}});
  }
}

TEST_CASE("scheduler: config validation", "[scheduler]") {
  SchedulerConfig c = make_config(100, 100, 128);
  c.enable_chunked_prefill = false;
  CHECK_FALSE(check_scheduler_config(c, 128).empty());
  c.enable_chunked_prefill = true;
  CHECK(check_scheduler_config(c, 128).empty());
  c.max_num_seqs = 101;
  CHECK_FALSE(check_scheduler_config(c, 128).empty());
  c.max_num_seqs = 16;
  Request r = make_req(0, 128);
  CHECK_FALSE(check_request(r, c, 128).empty());  // prompt must be < max_model_len
  r = make_req(0, 100, 30);
  r.min_tokens = 29;  // past max_model_len: vLLM accepts it, the length cap stops the request
  CHECK(check_request(r, c, 128).empty());
  r.min_tokens = 31;  // SamplingParams: min_tokens <= max_tokens
  CHECK_FALSE(check_request(r, c, 128).empty());
}

TEST_CASE("scheduler: two 80-token prompts on 10 usable blocks, tail preempts itself", "[scheduler]") {
  Scheduler s(make_config(100, 11));
  s.add_request(make_req(0, 80));
  s.add_request(make_req(1, 80));
  StepResult r0 = run_step(s);
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 80}, {1, 20}});
  CHECK(r0.out.scheduled_new_reqs[0].block_ids == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(r0.out.scheduled_new_reqs[1].block_ids == std::vector<int>{6, 7});
  // Request 0 takes its 6th block; request 1 (the tail) needs 3 more, only 2 are free.
  StepResult r1 = run_step(s);
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}});
  CHECK(r1.out.scheduled_cached_reqs.new_block_ids == std::vector<std::vector<int>>{{8}});
  CHECK(r1.out.preempted_req_ids == std::vector<ReqId>{1});
  CHECK(s.request(1)->status == RequestStatus::kPreempted);
  CHECK(s.request(1)->num_computed_tokens == 0);
  CHECK(s.request(1)->num_preemptions == 1);
  CHECK(s.block_ids(1).empty());
  // Caching is off, so vLLM 0.33 puts every freed block at the front (block_pool.py ~836-847).
  CHECK(s.kv_cache_manager().block_pool().free_queue() == std::vector<int>{7, 6, 9, 10});
  CHECK(s.waiting() == std::vector<const Request*>{s.request(1)});
  // Step 2: phase B runs again but 80 tokens need 5 blocks and 4 are free.
  StepResult r2 = run_step(s);
  CHECK(r2.out.num_scheduled_tokens == Q{{0, 1}});
  CHECK(r2.out.preempted_req_ids.empty());
  // Request 0 finishes at 16 outputs (step 15), then request 1 resumes on the freed blocks.
  for (int step = 3; step <= 15; ++step) {
    StepResult r = run_step(s);
    CHECK(r.out.num_scheduled_tokens == Q{{0, 1}});
    if (step == 15) {
      REQUIRE(r.finished.size() == 1);
      CHECK(r.finished[0].request_id == 0);
      CHECK(r.finished[0].status == RequestStatus::kFinishedLengthCapped);
      CHECK(r.finished[0].num_output_tokens() == 16);
      CHECK(s.request(0) == nullptr);  // dropped
    }
  }
  StepResult r16 = run_step(s);
  CHECK(r16.out.finished_req_ids == std::vector<ReqId>{0});
  CHECK(r16.out.num_scheduled_tokens == Q{{1, 80}});
  CHECK(r16.out.scheduled_new_reqs.empty());
  const CachedRequestData& cd = r16.out.scheduled_cached_reqs;
  CHECK(cd.req_ids == std::vector<ReqId>{1});
  CHECK(cd.resumed_from_preemption == std::vector<std::uint8_t>{1});
  // Request 0's blocks [1..5, 8], freed tail first, went to the front: 8, 5, 4, 3, 2, 1, 7, 6, ...
  CHECK(cd.new_block_ids == std::vector<std::vector<int>>{{8, 5, 4, 3, 2}});
  CHECK(cd.num_computed_tokens == std::vector<int>{0});  // the value before the step's advance
  CHECK(s.request(1)->num_computed_tokens == 80);         // advanced after its data was written
  StepResult r17 = run_step(s);
  CHECK(r17.out.finished_req_ids.empty());
}

TEST_CASE("scheduler: request 0 needing its 6th block preempts the tail", "[scheduler]") {
  Scheduler s(make_config(100, 11));
  s.add_request(make_req(0, 79));
  StepResult r0 = run_step(s);
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 79}});
  s.add_request(make_req(1, 80));
  StepResult r1 = run_step(s);
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}, {1, 80}});
  CHECK(r1.out.scheduled_new_reqs[0].block_ids == std::vector<int>{6, 7, 8, 9, 10});
  CHECK(s.num_free_blocks() == 0);
  StepResult r2 = run_step(s);
  CHECK(r2.out.num_scheduled_tokens == Q{{0, 1}});
  CHECK(r2.out.preempted_req_ids == std::vector<ReqId>{1});
  CHECK(r2.out.scheduled_cached_reqs.new_block_ids == std::vector<std::vector<int>>{{10}});
  CHECK(s.request(1)->num_output_tokens() == 1);  // outputs are kept
  // Phase B: the resumed request recomputes prompt + outputs = 81 tokens (6 blocks, 4 free).
  for (int step = 3; step <= 15; ++step) CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 1}});
  StepResult r16 = run_step(s);
  CHECK(r16.out.num_scheduled_tokens == Q{{1, 81}});
  CHECK(r16.out.scheduled_cached_reqs.resumed_from_preemption == std::vector<std::uint8_t>{1});
  // Request 0 finished at step 15; its blocks [1..5, 10], tail first, went to the front.
  CHECK(r16.out.scheduled_cached_reqs.new_block_ids == std::vector<std::vector<int>>{{10, 5, 4, 3, 2, 1}});
  CHECK(r16.out.scheduled_cached_reqs.num_output_tokens == std::vector<int>{1});
}

TEST_CASE("scheduler: priority preemption picks max (priority, arrival) and returns its budget", "[scheduler]") {
  const bool priority = GENERATE(true, false);
  SchedulerConfig c = make_config(200, 11);
  c.policy = priority ? SchedulingPolicy::kPriority : SchedulingPolicy::kFcfs;
  Scheduler s(c);
  Request a = make_req(0, 40, 30);
  a.priority = 5;
  s.add_request(a);
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 40}});
  Request b = make_req(1, 112, 30);
  b.priority = 0;
  s.add_request(b);
  StepResult r1 = run_step(s);
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}, {1, 112}});
  CHECK(s.num_free_blocks() == 0);
  StepResult r2 = run_step(s);
  if (priority) {
    // A was scheduled first, then B needed an 8th block: A (priority 5) is the victim.
    CHECK(r2.out.num_scheduled_tokens == Q{{1, 1}});
    CHECK(r2.out.total_num_scheduled_tokens == 1);
    CHECK(r2.out.preempted_req_ids == std::vector<ReqId>{0});
    CHECK(r2.out.scheduled_cached_reqs.new_block_ids == std::vector<std::vector<int>>{{3}});
    CHECK(s.running() == std::vector<Request*>{const_cast<Request*>(s.request(1))});
  } else {
    // FCFS: the tail (B itself) is the victim; A keeps its slot.
    CHECK(r2.out.num_scheduled_tokens == Q{{0, 1}});
    CHECK(r2.out.preempted_req_ids == std::vector<ReqId>{1});
  }
}

TEST_CASE("scheduler: priority waiting queue orders by (priority, arrival)", "[scheduler]") {
  SchedulerConfig c = make_config(64, 100);
  c.policy = SchedulingPolicy::kPriority;
  Scheduler s(c);
  const int prios[] = {3, 1, 3, 0};
  for (int i = 0; i < 4; ++i) {
    Request r = make_req(i, 40);
    r.priority = prios[i];
    s.add_request(r);
  }
  std::vector<ReqId> order;
  for (const Request* r : s.waiting()) order.push_back(r->request_id);
  CHECK(order == std::vector<ReqId>{3, 1, 0, 2});
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{3, 40}, {1, 24}});
}

TEST_CASE("scheduler: max_num_seqs caps admission", "[scheduler]") {
  SchedulerConfig c = make_config(512, 100);
  c.max_num_seqs = 2;
  Scheduler s(c);
  for (int i = 0; i < 3; ++i) s.add_request(make_req(i, 10, i == 0 ? 2 : 5));
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 10}, {1, 10}});
  StepResult r1 = run_step(s);  // request 0 finishes here (2 outputs)
  CHECK(r1.out.num_scheduled_tokens == Q{{0, 1}, {1, 1}});
  CHECK(r1.finished.size() == 1);
  StepResult r2 = run_step(s);
  CHECK(r2.out.num_scheduled_tokens == Q{{1, 1}, {2, 10}});
  CHECK(r2.out.finished_req_ids == std::vector<ReqId>{0});
}

TEST_CASE("scheduler: prefix-cache hits through phase B", "[scheduler]") {
  const auto [n, hit] = GENERATE(std::pair{17, 16}, std::pair{32, 16}, std::pair{33, 32});
  SchedulerConfig c = make_config(512, 100);
  c.enable_prefix_caching = true;
  Scheduler s(c);
  s.add_request(make_req(0, n, 1, 3));
  StepResult r0 = run_step(s);
  CHECK(r0.finished.size() == 1);
  s.add_request(make_req(1, n, 1, 3));  // same prompt
  StepResult r1 = run_step(s);
  REQUIRE(r1.out.scheduled_new_reqs.size() == 1);
  CHECK(r1.out.scheduled_new_reqs[0].num_computed_tokens == hit);
  CHECK(r1.out.num_scheduled_tokens == Q{{1, n - hit}});
  CHECK(r1.out.scheduled_new_reqs[0].block_ids.front() == 1);  // request 0's first block, hit
}

TEST_CASE("scheduler: concurrent requests share cached prefix blocks", "[scheduler]") {
  SchedulerConfig c = make_config(512, 100);
  c.enable_prefix_caching = true;
  Scheduler s(c);
  Request a = make_req(0, 40, 4, 8);
  Request b = make_req(1, 40, 4, 8);
  b.all_token_ids[39] = 7;  // differs in the last (partial) block only
  s.add_request(a);
  s.add_request(b);
  StepResult r0 = run_step(s);
  // Blocks are cached at allocation, so b hits a's two full blocks in the same step.
  CHECK(r0.out.num_scheduled_tokens == Q{{0, 40}, {1, 8}});
  CHECK(r0.out.scheduled_new_reqs[0].block_ids == std::vector<int>{1, 2, 3});
  CHECK(r0.out.scheduled_new_reqs[1].block_ids == std::vector<int>{1, 2, 4});
  CHECK(r0.out.scheduled_new_reqs[1].num_computed_tokens == 32);
  CHECK(s.kv_cache_manager().block_pool().ref_cnt(1) == 2);
  CHECK(r0.out.num_common_prefix_blocks == 2);  // blocks 1, 2 are held by both running requests
}
