// InputBatch (docs/spec/scheduler.md §8): holes, smallest-hole insertion, condense, persistence.
#include <catch2/catch.hpp>

#include "attention/input_batch.h"

using namespace mlasim;

namespace {

// Each request's slot (Request::slot) is its id unless given: a scheduler whose ids are small and
// never held twice would give those.
struct OutBuilder {
  SchedulerOutput out;
  OutBuilder& add_new(ReqId id, int prompt_len, int q, int nct = 0, int slot = -1) {
    NewRequestData d;
    d.req_id = id;
    d.slot = slot < 0 ? id : slot;
    static const std::vector<int> prompt(4096, 5);  // the outputs view prompts in place
    d.prompt_token_ids = std::span<const int>(prompt).first(static_cast<std::size_t>(prompt_len));
    d.num_computed_tokens = nct;
    out.scheduled_new_reqs.push_back(d);
    out.num_scheduled_tokens.emplace_back(id, q);
    out.scheduled_slots.push_back(d.slot);
    return *this;
  }
  OutBuilder& add_cached(ReqId id, int q, int nct, bool resumed = false, int slot = -1) {
    CachedRequestData& c = out.scheduled_cached_reqs;
    c.req_ids.push_back(id);
    c.slots.push_back(slot < 0 ? id : slot);
    c.resumed_from_preemption.push_back(resumed);
    c.new_block_ids.emplace_back();
    c.num_computed_tokens.push_back(nct);
    c.num_output_tokens.push_back(0);
    out.num_scheduled_tokens.emplace_back(id, q);
    out.scheduled_slots.push_back(c.slots.back());
    return *this;
  }
  OutBuilder& finished(std::vector<ReqId> ids, std::vector<int> slots = {}) {
    out.finished_slots = slots.empty() ? ids : std::move(slots);
    out.finished_req_ids = std::move(ids);
    return *this;
  }
};

}  // namespace

TEST_CASE("input batch: new requests append, finished leave holes filled by the smallest index", "[input_batch]") {
  InputBatch b;
  b.update(OutBuilder().add_new(10, 5, 5).add_new(11, 6, 6).add_new(12, 7, 7).out);
  CHECK(b.req_ids() == std::vector<ReqId>{10, 11, 12});
  CHECK(b.rows()[1].num_prompt_tokens == 6);
  CHECK(b.rows()[1].num_scheduled_tokens == 6);
  // 11 finished; 13 is new and fills hole 1.
  b.update(OutBuilder().add_cached(10, 1, 5).add_cached(12, 1, 7).add_new(13, 4, 4).finished({11}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{10, 13, 12});
  CHECK(b.rows()[0].num_computed_tokens == 5);
  CHECK(b.rows()[2].num_computed_tokens == 7);
  CHECK(b.row_of(13) == 1);
  CHECK_FALSE(b.row_of(11).has_value());
}

TEST_CASE("input batch: condense moves the highest live row into the lowest hole", "[input_batch]") {
  InputBatch b;
  OutBuilder first;
  for (ReqId id = 0; id < 5; ++id) first.add_new(id, 3, 3);
  b.update(first.out);
  CHECK(b.req_ids() == std::vector<ReqId>{0, 1, 2, 3, 4});
  b.update(OutBuilder().add_cached(0, 1, 3).add_cached(3, 1, 3).add_cached(4, 1, 3).finished({1, 2}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{0, 4, 3});
  CHECK(b.row_of(4) == 1);
  CHECK(b.rows()[1].num_prompt_tokens == 3);
}

TEST_CASE("input batch: unscheduled requests leave, new first, then re-added cached ones", "[input_batch]") {
  InputBatch b;
  b.update(OutBuilder().add_new(0, 8, 8).add_new(1, 8, 8).add_new(2, 8, 8).add_new(3, 8, 8).out);
  // 1 is not scheduled (e.g. preempted): removed, hole 1; no additions; condense moves 3 to 1.
  b.update(OutBuilder().add_cached(0, 1, 8).add_cached(2, 1, 8).add_cached(3, 1, 8).out);
  CHECK(b.req_ids() == std::vector<ReqId>{0, 3, 2});
  // 0 finished, 2 unscheduled: holes 0 and 2. New 7 fills 0, resumed 1 fills 2.
  b.update(OutBuilder().add_cached(3, 1, 9).add_new(7, 2, 2).add_cached(1, 9, 0, true).finished({0}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{7, 3, 1});
  CHECK(b.rows()[2].num_prompt_tokens == 8);  // remembered from when 1 was new
  CHECK(b.rows()[2].num_scheduled_tokens == 9);
  CHECK(b.rows()[2].num_computed_tokens == 0);
}

TEST_CASE("input batch: swaps persist to the next step", "[input_batch]") {
  InputBatch b;
  b.update(OutBuilder().add_new(0, 1, 1).add_new(1, 1, 1).add_new(2, 1, 1).out);
  b.swap_rows(0, 2);
  CHECK(b.req_ids() == std::vector<ReqId>{2, 1, 0});
  CHECK(b.row_of(0) == 2);
  b.update(OutBuilder().add_cached(0, 1, 1).add_cached(1, 1, 1).add_cached(2, 1, 1).out);
  CHECK(b.req_ids() == std::vector<ReqId>{2, 1, 0});
  // Removing the middle row of three with no additions: row 2 moves into hole 1.
  b.update(OutBuilder().add_cached(0, 1, 2).add_cached(2, 1, 2).finished({1}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{2, 0});
}

TEST_CASE("input batch: a finished request's slot held by a new request of the same output", "[input_batch]") {
  // The scheduler frees a finished request's slot in update_from_output, and the next arrival may
  // take it before the next schedule(): that output lists the finished request and the new one
  // with the same slot. The finished one leaves first; the new one gets a fresh state.
  InputBatch b;
  b.update(OutBuilder().add_new(10, 5, 5, 0, 0).add_new(11, 6, 6, 0, 1).add_new(12, 7, 7, 0, 2).out);
  // 11 (slot 1) finished; 20 arrives in slot 1 and fills row 1.
  b.update(OutBuilder().add_cached(10, 1, 5, false, 0).add_cached(12, 1, 7, false, 2).add_new(20, 9, 9, 0, 1).finished({11}, {1}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{10, 20, 12});
  CHECK(b.row_of_slot(1) == 1);
  CHECK(b.rows()[1].num_prompt_tokens == 9);
  CHECK(b.prefill_len(1) == 9);
  CHECK(b.block_ids(1).empty());
  // 12 (slot 2) is not scheduled and keeps its state; 10 (slot 0) finished and 30 takes slot 0.
  b.update(OutBuilder().add_cached(20, 1, 9, false, 1).add_new(30, 4, 4, 0, 0).finished({10}, {0}).out);
  CHECK(b.req_ids() == std::vector<ReqId>{30, 20});
  CHECK(b.row_of_slot(2) == -1);
  CHECK(b.row_of_slot(0) == 0);
  // 12 comes back (resumed) in its slot and finds its prompt length.
  b.update(OutBuilder().add_cached(20, 1, 10, false, 1).add_cached(30, 1, 4, false, 0).add_cached(12, 8, 0, true, 2).out);
  CHECK(b.req_ids() == std::vector<ReqId>{30, 20, 12});
  CHECK(b.rows()[2].num_prompt_tokens == 7);
}

