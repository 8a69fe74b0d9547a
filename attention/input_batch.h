// The model runner's persistent batch (vllm/v1/worker/gpu_input_batch.py + gpu_model_runner.py
// _update_states, docs/spec/scheduler.md §8): rows persist across steps; removals leave holes,
// additions fill the smallest hole, condense moves the highest live row into the lowest hole.
#pragma once

#include <optional>
#include <span>
#include <deque>
#include <cstdint>
#include <vector>

#include "base/flat_index_map.h"
#include "sim/scheduler_output.h"

namespace mlasim {

// The model runner's state of one request (vLLM CachedRequestState, gpu_model_runner.py
// _update_states), kept from the scheduler's outputs alone: its block table (vLLM's BlockTable
// row: NewRequestData.block_ids, extended by each step's new_block_ids, replaced on resumption)
// and, when the batch tracks them, its known token ids (the prompt, then every sampled token).
struct CachedRequestState {
  int num_prompt_tokens = 0;
  // Tokens the request was last added to model runner V2 with (states.py ~106): the prompt, or
  // the prompt and its outputs when resumed after a preemption (V2 re-adds a resumed request as a
  // new one, scheduler.py ~1642-1652).
  int prefill_len = 0;
  std::vector<int> block_ids;
  std::vector<int> token_ids;  // empty unless the batch tracks token ids
};

struct BatchRow {
  ReqId req_id = 0;
  int num_prompt_tokens = 0;
  int num_computed_tokens = 0;   // pre-step, from the scheduler output
  int num_scheduled_tokens = 0;  // q this step
};

class InputBatch {
 public:
  // track_token_ids: keep each request's prompt and sampled tokens (a model run feeds them to the
  // model; a dry run needs none).
  explicit InputBatch(bool track_token_ids = false) : track_token_ids_(track_token_ids) {}
  // An empty batch in the storage of `donor`, a batch about to be dropped (base/recycled_storage.h).
  InputBatch(bool track_token_ids, InputBatch& donor);

  // Steps 1-3 of §8 for one SchedulerOutput: remove finished, then unscheduled cached requests;
  // add new requests, then scheduled requests not in the batch (resumed ones, and running ones
  // that were unscheduled earlier: vLLM re-adds those too, in scheduled_cached_reqs order);
  // condense. Afterwards every row is live and holds this step's nct and q.
  void update(const SchedulerOutput& out);

  int num_reqs() const { return static_cast<int>(rows_.size()); }
  std::span<const BatchRow> rows() const { return rows_; }
  std::vector<ReqId> req_ids() const;          // ReqId per row, in row order
  std::optional<int> row_of(ReqId id) const;   // row index, if in the batch
  // Row `row`'s block table and (with track_token_ids) its request's known token ids.
  std::span<const int> block_ids(int row) const { return state(row).block_ids; }
  int prefill_len(int row) const { return state(row).prefill_len; }
  std::span<const int> token_ids(int row) const { return state(row).token_ids; }
  // After the model ran: appends each request's sampled tokens to its known token ids (vLLM:
  // req_state.output_token_ids.extend). Nothing without track_token_ids.
  void add_sampled_tokens(const ModelRunnerOutput& output);
  // Swaps two rows (the reorder of docs/spec/routing.md); persists to later steps.
  void swap_rows(int i, int j);
  // Puts row from[pos] at pos for every pos (from: a permutation of the rows); persists.
  void permute_rows(std::span<const int> from);

 private:
  void remove_request(ReqId id);
  int add_request(ReqId id, CachedRequestState& state);  // returns its row
  void condense();
  const CachedRequestState& state(int row) const;

  std::vector<BatchRow> rows_;
  std::vector<char> live_;           // per row; false = hole
  std::vector<int> holes_;           // hole indices (unsorted until used)
  FlatIndexMap req_id_to_index_;  // key: ReqId as uint32
  // Every request seen and not finished, in slots: a finished request's slot goes to a later one
  // with its vectors' capacity (a deque: the states stay where they are as it grows).
  std::deque<CachedRequestState> states_;
  std::vector<int> free_states_;
  FlatIndexMap state_of_;  // key: ReqId as uint32 -> its slot in states_
  CachedRequestState* find_state(ReqId id);
  CachedRequestState& state_for_new(ReqId id);  // its state, emptied, in a free slot (or its own)
  bool track_token_ids_ = false;
  std::vector<unsigned> stamp_;      // per row: last update() that scheduled it
  std::vector<CachedRequestState*> state_;  // per row: its request's state in states_
  unsigned epoch_ = 0;
  std::vector<BatchRow> permuted_rows_;                // scratch of permute_rows
  std::vector<unsigned> permuted_stamp_;
  std::vector<CachedRequestState*> permuted_state_;
  std::vector<int> scheduled_row_;   // per num_scheduled_tokens entry: its row when marked, or -1 (scratch)
};

}  // namespace mlasim
