// The reorder applied to the persistent InputBatch: swaps persist to later steps (docs/spec/scheduler.md §8).
#include <catch2/catch.hpp>

#include "attention/input_batch.h"
#include "attention/reorder.h"
#include "attention/route.h"
#include "routing_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

struct Out {
  SchedulerOutput out;
  Out& add_new(ReqId id, int prompt_len, int q) {
    NewRequestData d;
    d.req_id = id;
    d.slot = id;  // the slot (Request::slot) a scheduler whose ids are small would give
    static const std::vector<int> prompt(4096, 5);  // the outputs view prompts in place
    d.prompt_token_ids = std::span<const int>(prompt).first(static_cast<std::size_t>(prompt_len));
    out.scheduled_new_reqs.push_back(d);
    out.num_scheduled_tokens.emplace_back(id, q);
    out.scheduled_slots.push_back(id);
    return *this;
  }
  Out& add_cached(ReqId id, int q, int nct) {
    CachedRequestData& c = out.scheduled_cached_reqs;
    c.req_ids.push_back(id);
    c.slots.push_back(id);
    c.resumed_from_preemption.push_back(false);
    c.new_block_ids.emplace_back();
    c.num_computed_tokens.push_back(nct);
    c.num_output_tokens.push_back(0);
    out.num_scheduled_tokens.emplace_back(id, q);
    out.scheduled_slots.push_back(id);
    return *this;
  }
};

}  // namespace

TEST_CASE("routing reorder: swaps applied to the InputBatch persist", "[routing]") {
  const RoutingConfig c = current(AttentionBackendKind::kFlashAttnMla);
  InputBatch b;
  b.update(Out().add_new(5, 10, 10).add_new(6, 10, 10).add_new(3, 10, 10).out);
  CHECK_FALSE(reorder_input_batch(b, c).modified);  // all fresh: region 3, nothing moves
  // 5 and 6 finish; 1 (P 300) and 2 (P 200) fill holes 0 and 1: [P, Q, A].
  SchedulerOutput s1 = Out().add_cached(3, 1, 10).add_new(1, 300, 300).add_new(2, 200, 200).out;
  s1.finished_req_ids = {5, 6};
  s1.finished_slots = {5, 6};
  b.update(s1);
  REQUIRE(b.req_ids() == std::vector<ReqId>{1, 2, 3});
  const BatchRoute r = route_batch(b, c);
  CHECK(r.order == std::vector<int>{2, 1, 0});
  CHECK(b.req_ids() == std::vector<ReqId>{3, 2, 1});  // applied in place
  CHECK(b.rows()[0].num_computed_tokens == 10);
  // Next step: every row decodes; the order from the swaps persists.
  b.update(Out().add_cached(3, 1, 11).add_cached(1, 1, 300).add_cached(2, 1, 200).out);
  CHECK(b.req_ids() == std::vector<ReqId>{3, 2, 1});
  CHECK_FALSE(reorder_input_batch(b, c).modified);
  CHECK(b.req_ids() == std::vector<ReqId>{3, 2, 1});
}

TEST_CASE("routing reorder: sglang never reorders the InputBatch", "[routing]") {
  InputBatch b;
  b.update(Out().add_new(1, 300, 300).add_new(2, 1, 1).out);
  CHECK_FALSE(reorder_input_batch(b, cfg(EngineProfile::kSglang, AttentionBackendKind::kFlashInferMla)).modified);
  CHECK(b.req_ids() == std::vector<ReqId>{1, 2});
  // vllm-0.11 moves the 1-token prompt to the front.
  CHECK(reorder_input_batch(b, cfg(EngineProfile::kVllm011, AttentionBackendKind::kFlashInferMla)).modified);
  CHECK(b.req_ids() == std::vector<ReqId>{2, 1});
}
