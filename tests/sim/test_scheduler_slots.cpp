// Request slots (Request::slot): the lowest free slot goes to each arrival, a finished request frees
// its slot at once, and every output carries the slots of the requests it names, a finished
// request's beside the new request that holds it now.
#include <catch2/catch.hpp>

#include "scheduler_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

TEST_CASE("scheduler: slots go lowest first and outputs carry them", "[scheduler]") {
  Scheduler s(make_config(1024, 1000));
  s.add_request(make_req(10, 16, 1));
  s.add_request(make_req(11, 16, 3));
  s.add_request(make_req(12, 16, 3));
  CHECK(s.request(10)->slot == 0);
  CHECK(s.request(12)->slot == 2);
  StepResult r0 = run_step(s);
  CHECK(r0.out.num_scheduled_tokens == Q{{10, 16}, {11, 16}, {12, 16}});
  CHECK(r0.out.scheduled_slots == std::vector<int>{0, 1, 2});
  REQUIRE(r0.out.scheduled_new_reqs.size() == 3);
  CHECK(r0.out.scheduled_new_reqs[1].slot == 1);
  REQUIRE(r0.finished.size() == 1);  // max_tokens 1: done at its prefill's sample
  CHECK(r0.finished[0].request_id == 10);
  CHECK(r0.finished[0].slot == 0);
  CHECK(s.request(10) == nullptr);
  // 13 arrives and takes slot 0, freed by 10; the next output names 10 finished in slot 0 too.
  s.add_request(make_req(13, 16, 2));
  CHECK(s.request(13)->slot == 0);
  StepResult r1 = run_step(s);
  CHECK(r1.out.finished_req_ids == std::vector<ReqId>{10});
  CHECK(r1.out.finished_slots == std::vector<int>{0});
  CHECK(r1.out.scheduled_cached_reqs.req_ids == std::vector<ReqId>{11, 12});
  CHECK(r1.out.scheduled_cached_reqs.slots == std::vector<int>{1, 2});
  REQUIRE(r1.out.scheduled_new_reqs.size() == 1);
  CHECK(r1.out.scheduled_new_reqs[0].req_id == 13);
  CHECK(r1.out.scheduled_new_reqs[0].slot == 0);
  CHECK(r1.out.scheduled_slots == std::vector<int>{1, 2, 0});
  // 14 arrives while 11 and 12 run: slot 3.
  s.add_request(make_req(14, 16, 4));
  CHECK(s.request(14)->slot == 3);
  StepResult r2 = run_step(s);
  CHECK(r2.out.scheduled_slots == std::vector<int>{1, 2, 0, 3});
  std::vector<ReqId> done;
  for (const Request& r : r2.finished) done.push_back(r.request_id);
  CHECK(done == std::vector<ReqId>{11, 12, 13});  // 3, 3 and 2 tokens
  CHECK(s.num_alive_requests() == 1);
  // Slots 0-2 are free: the lowest goes first.
  s.add_request(make_req(15, 16, 1));
  CHECK(s.request(15)->slot == 0);
  s.add_request(make_req(16, 16, 1));
  CHECK(s.request(16)->slot == 1);
  StepResult r3 = run_step(s);
  CHECK(r3.out.finished_req_ids == std::vector<ReqId>{11, 12, 13});
  CHECK(r3.out.finished_slots == std::vector<int>{1, 2, 0});
  CHECK(r3.out.scheduled_slots == std::vector<int>{3, 0, 1});
}
