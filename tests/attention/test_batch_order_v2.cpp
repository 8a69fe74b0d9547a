// Model runner V2's row order (sort_batch_req_ids, vllm/v1/worker/gpu/model_runner.py ~2507):
// rows with drafts first, then q == 1 + k, then ascending q, stable over the scheduler's order.
#include <catch2/catch.hpp>

#include "attention/batch_order_v2.h"

using namespace mlasim;

namespace {

SchedulerOutput output(std::vector<std::pair<ReqId, int>> q, std::vector<ReqId> with_drafts = {}) {
  SchedulerOutput out;
  for (const auto& [id, n] : q) {
    NewRequestData d;
    d.req_id = id;
    d.prompt_token_ids.assign(static_cast<std::size_t>(n), 7);
    out.scheduled_new_reqs.push_back(d);
    out.num_scheduled_tokens.emplace_back(id, n);
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
