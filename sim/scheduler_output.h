// What one schedule() call decided (vllm/v1/core/sched/output.py, docs/spec/scheduler.md §7) and what
// the model runner returned (vllm/v1/outputs.py). Plain data with vLLM's field names; ids are
// integer ReqIds and dicts are vectors in scheduling order, so nothing depends on hash order.
// Scheduler::schedule(SchedulerOutput&) resizes (not clears) the vectors so inner vectors keep
// their capacity from step to step; all parallel vectors always have equal sizes.
// Beside vLLM's fields each request comes with its slot (Request::slot), a small number the
// scheduler reuses once the request finishes: the model runner's state is an array by slot, so its
// step path looks no id up. A finished request's slot may already be a new request's in the same
// output: the runner drops finished requests first.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/request.h"

namespace mlasim {

// A request scheduled for the first time (vLLM NewRequestData).
struct NewRequestData {
  ReqId req_id = 0;
  int slot = -1;  // the request's slot (Request::slot): the model runner keeps its state by it
  // The request's prompt, viewed in place: valid until the scheduler appends the step's samples
  // (update_from_output), which is after the model runner has read it.
  std::span<const int> prompt_token_ids;
  std::vector<int> block_ids;       // the whole block table (prefix hits first)
  int num_computed_tokens = 0;      // pre-step: the prefix-cache hit
  // Several KV cache groups: every group's table (vLLM's tuple of lists), block_ids being the first
  // full-attention group's (the MLA layers' table); empty with one group.
  std::vector<std::vector<int>> group_block_ids;
};

// Requests scheduled before (running) and resumed after preemption (vLLM CachedRequestData).
// Parallel vectors; running requests first in `running` order, then resumed ones.
struct CachedRequestData {
  std::vector<ReqId> req_ids;
  std::vector<int> slots;  // each request's slot (Request::slot)
  std::vector<std::uint8_t> resumed_from_preemption;  // 0 / 1: a byte per request, not std::vector<bool>'s bits
  // Running: blocks allocated this step; resumed: the whole new table (as vLLM's get_blocks).
  std::vector<std::vector<int>> new_block_ids;
  std::vector<int> num_computed_tokens;  // pre-step
  std::vector<int> num_output_tokens;
  // Several KV cache groups: per request each group's new blocks (vLLM's get_block_ids(allow_none=True):
  // empty for None, when no group has one), new_block_ids being the first full-attention group's.
  // Empty with one group.
  std::vector<std::vector<std::vector<int>>> new_group_block_ids;
  int num_reqs() const { return static_cast<int>(req_ids.size()); }
};

struct SchedulerOutput {
  int step = 0;  // 0-based index of the schedule() call that produced it
  std::vector<NewRequestData> scheduled_new_reqs;
  CachedRequestData scheduled_cached_reqs;
  // (req_id, q) in scheduling order: running requests first, then admitted ones.
  std::vector<std::pair<ReqId, int>> num_scheduled_tokens;
  std::vector<int> scheduled_slots;  // the slot (Request::slot) of each num_scheduled_tokens entry
  int total_num_scheduled_tokens = 0;
  // (req_id, draft token ids) for requests with drafts scheduled, in scheduling order.
  std::vector<std::pair<ReqId, std::vector<int>>> scheduled_spec_decode_tokens;
  int num_common_prefix_blocks = 0;
  std::vector<ReqId> finished_req_ids;   // finished since the previous schedule(), in finish order
  std::vector<int> finished_slots;       // their slots, which later requests may hold already
  std::vector<ReqId> preempted_req_ids;  // in preemption order

  int num_new_reqs() const { return static_cast<int>(scheduled_new_reqs.size()); }
};

// The model runner's result for one step (vllm/v1/outputs.py ModelRunnerOutput), aligned with
// SchedulerOutput::num_scheduled_tokens. sampled_token_ids[i] is empty for a partial prefill
// chunk; spec_token_ids[i] holds the drafts proposed for the next step (empty without
// speculation). All three vectors have equal sizes.
// The draft token id of a padded one-token admission (vLLM's PLACEHOLDER_TOKEN_ID,
// v1/sample/rejection_sampler.py ~43): never accepted; the model runner clamps it to 0 before
// the embedding lookup (v1/worker/gpu_model_runner.py ~3275).
inline constexpr int kPlaceholderDraftToken = -1;

struct ModelRunnerOutput {
  std::vector<ReqId> req_ids;
  std::vector<std::vector<int>> sampled_token_ids;
  std::vector<std::vector<int>> spec_token_ids;
  int num_reqs() const { return static_cast<int>(req_ids.size()); }
};

}  // namespace mlasim
