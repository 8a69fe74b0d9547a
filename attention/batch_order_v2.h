// Model runner V2's batch order (vllm/v1/worker/gpu/model_runner.py sort_batch_req_ids, vLLM
// 0.33.0 ~2507-2519): no persistent order and no reorder; every step the scheduled requests are
// sorted by (no drafts, q != 1 + k, q), stably over the scheduler output's order.
#pragma once

#include <vector>

#include "attention/input_batch.h"
#include "sim/scheduler_output.h"

namespace mlasim {

// The request ids of `out` in V2's row order; decode_query_len = 1 + num_speculative_tokens.
std::vector<ReqId> sort_batch_req_ids(const SchedulerOutput& out, int decode_query_len);
// The same as indices of out.num_scheduled_tokens, into `entries` (its capacity kept): the step
// loop's form.
void sort_batch_entries(const SchedulerOutput& out, int decode_query_len, std::vector<int>& entries);

// Permutes the batch's rows (already updated for `out`) into that order.
void order_batch_v2(InputBatch& batch, const SchedulerOutput& out, int decode_query_len);

}  // namespace mlasim
