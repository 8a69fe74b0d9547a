// Model runner V2's row order (sort_batch_req_ids, vllm/v1/worker/gpu/model_runner.py ~2507):
// rows with drafts first, then q == 1 + k, then ascending q, stable over the scheduler's order.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>

#include <catch2/catch.hpp>

#include "attention/batch_order_v2.h"

using namespace mlasim;

namespace {

SchedulerOutput output(std::vector<std::pair<ReqId, int>> q, std::vector<ReqId> with_drafts = {}) {
  SchedulerOutput out;
  for (const auto& [id, n] : q) {
    NewRequestData d;
    d.req_id = id;
    d.slot = id;  // the slot (Request::slot) a scheduler whose ids are small would give
    static const std::vector<int> prompt(4096, 7);  // the outputs view prompts in place
    d.prompt_token_ids = std::span<const int>(prompt).first(static_cast<std::size_t>(n));
    out.scheduled_new_reqs.push_back(d);
    out.num_scheduled_tokens.emplace_back(id, n);
    out.scheduled_slots.push_back(id);
    out.total_num_scheduled_tokens += n;
  }
  for (ReqId id : with_drafts) out.scheduled_spec_decode_tokens.emplace_back(id, std::vector<int>{5, 6, 7});
  return out;
}

}  // namespace

TEST_CASE("model runner v2: rows with drafts, then q == 1 + k, then ascending q (stable)", "[routing]") {
  // k = 3: decode_query_len 4. Scheduler order 0..5.
  const SchedulerOutput out = output({{0, 9}, {1, 4}, {2, 1}, {3, 4}, {4, 2}, {5, 1}}, {3});
  CHECK(sort_batch_req_ids(out, 4) == std::vector<ReqId>{3, 1, 2, 5, 4, 0});
  // Without speculation (decode_query_len 1): the 1-token rows first, in scheduler order.
  const SchedulerOutput plain = output({{0, 2}, {1, 1}, {2, 5}, {3, 1}});
  CHECK(sort_batch_req_ids(plain, 1) == std::vector<ReqId>{1, 3, 0, 2});
}

TEST_CASE("model runner v2: the batch rows are permuted into that order", "[routing]") {
  const SchedulerOutput out = output({{0, 2}, {1, 1}, {2, 5}, {3, 1}});
  InputBatch batch;
  batch.update(out);
  CHECK(batch.req_ids() == std::vector<ReqId>{0, 1, 2, 3});
  order_batch_v2(batch, out, 1);
  CHECK(batch.req_ids() == std::vector<ReqId>{1, 3, 0, 2});
  CHECK(batch.rows()[2].num_scheduled_tokens == 2);
}

TEST_CASE("model runner v2: the class-counting order equals one stable sort by the whole key", "[routing]") {
  // The key's plain stable sort (model_runner.py ~2507-2519) as the reference, over random outputs:
  // q from 1 to 6 around decode_query_len 3, drafts on some rows (some empty), listed in
  // scheduling order or, as a hand-built output may, shuffled.
  std::uint64_t state = 12345;
  auto next = [&state](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    SchedulerOutput out;
    const int n = next(40);
    for (int i = 0; i < n; ++i) {
      const ReqId id = 100 + (i * 7919) % 1000;
      out.num_scheduled_tokens.emplace_back(id, 1 + next(6));
      // Every third output without drafts at all (the order's pass for outputs with no drafts).
      if (trial % 3 != 2 && next(3) == 0)
        out.scheduled_spec_decode_tokens.emplace_back(id, std::vector<int>(static_cast<std::size_t>(next(3)), 9));
    }
    if (trial % 2 == 1) std::reverse(out.scheduled_spec_decode_tokens.begin(), out.scheduled_spec_decode_tokens.end());
    struct Key {
      ReqId id;
      bool no_drafts, not_decode_len;
      int q;
    };
    std::vector<Key> keys;
    for (const auto& [id, q] : out.num_scheduled_tokens) {
      bool drafts = false;
      for (const auto& [sid, d] : out.scheduled_spec_decode_tokens) drafts = drafts || (sid == id && !d.empty());
      keys.push_back({id, !drafts, q != 3, q});
    }
    std::stable_sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
      return std::tie(a.no_drafts, a.not_decode_len, a.q) < std::tie(b.no_drafts, b.not_decode_len, b.q);
    });
    std::vector<ReqId> expected;
    for (const Key& k : keys) expected.push_back(k.id);
    REQUIRE(sort_batch_req_ids(out, 3) == expected);
    ++compared;
  }
  CHECK(compared == 300);
}

TEST_CASE("model runner v2: over steps where requests join and leave, the rows follow the order and the slots", "[routing]") {
  // Each step finishes some running requests (anywhere in the running order), admits new ones at
  // the end, and schedules every request (mostly q = 1, some chunks): the batch's rows, after
  // update and order_batch_v2, must be sort_batch_req_ids' order, and row_of and row_of_slot must
  // name each row. Slots are given as the scheduler gives them: a finished request's slot goes to
  // the next arrival, in the same output.
  std::uint64_t state = 777;
  auto next = [&state](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  static const std::vector<int> prompt(64, 7);
  InputBatch batch;
  std::vector<ReqId> running;
  ReqId next_id = 0;
  int rows_checked = 0, slots_reused = 0;
  std::vector<int> slot_of_id, free_slots;
  int num_slots = 0;
  for (int step = 0; step < 400; ++step) {
    SchedulerOutput out;
    out.step = step;
    std::vector<ReqId> kept;
    for (ReqId id : running) {
      if (next(6) == 0) {
        out.finished_req_ids.push_back(id);
        out.finished_slots.push_back(slot_of_id[static_cast<std::size_t>(id)]);
        free_slots.push_back(slot_of_id[static_cast<std::size_t>(id)]);
      } else {
        kept.push_back(id);
      }
    }
    running = kept;
    CachedRequestData& c = out.scheduled_cached_reqs;
    for (ReqId id : running) {
      const int q = next(5) == 0 ? 2 + next(6) : 1;
      out.num_scheduled_tokens.emplace_back(id, q);
      out.scheduled_slots.push_back(slot_of_id[static_cast<std::size_t>(id)]);
      c.req_ids.push_back(id);
      c.slots.push_back(slot_of_id[static_cast<std::size_t>(id)]);
      c.resumed_from_preemption.push_back(false);
      c.new_block_ids.emplace_back();
      c.num_computed_tokens.push_back(step);
      c.num_output_tokens.push_back(1);
    }
    for (int a = next(running.size() < 40 ? 5 : 2); a > 0; --a) {
      NewRequestData d;
      d.req_id = next_id++;
      if (free_slots.empty()) {
        d.slot = num_slots++;
      } else {
        d.slot = free_slots.back();
        free_slots.pop_back();
        ++slots_reused;
      }
      slot_of_id.push_back(d.slot);
      d.prompt_token_ids = std::span<const int>(prompt).first(static_cast<std::size_t>(8 + next(50)));
      out.scheduled_new_reqs.push_back(d);
      out.num_scheduled_tokens.emplace_back(d.req_id, static_cast<int>(d.prompt_token_ids.size()));
      out.scheduled_slots.push_back(d.slot);
      running.push_back(d.req_id);
    }
    batch.update(out);
    order_batch_v2(batch, out, 1);
    const std::vector<ReqId> expected = sort_batch_req_ids(out, 1);
    REQUIRE(batch.req_ids() == expected);
    for (int row = 0; row < batch.num_reqs(); ++row) {
      const ReqId id = batch.rows()[static_cast<std::size_t>(row)].req_id;
      REQUIRE(batch.row_of(id) == std::optional<int>(row));
      REQUIRE(batch.row_of_slot(slot_of_id[static_cast<std::size_t>(id)]) == row);
      for (const auto& [sid, q] : out.num_scheduled_tokens)
        if (sid == id) REQUIRE(batch.rows()[static_cast<std::size_t>(row)].num_scheduled_tokens == q);
      ++rows_checked;
    }
  }
  INFO("requests admitted: " << next_id);
  CHECK(next_id > 300);
  CHECK(rows_checked == 4982);  // the generator is seeded: these counts show the steps ran
  CHECK(slots_reused == 829);  // most admissions take a finished request's slot
}
