// The model runner's persistent batch (vllm/v1/worker/gpu_input_batch.py + gpu_model_runner.py
// _update_states, docs/spec/scheduler.md §8): rows persist across steps; removals leave holes,
// additions fill the smallest hole, condense moves the highest live row into the lowest hole.
#pragma once

#include <optional>
#include <span>
#include <deque>
#include <cstdint>
#include <vector>

#include "sim/scheduler_output.h"

namespace mlasim {

// The model runner's state of one request (vLLM CachedRequestState, gpu_model_runner.py
// _update_states), kept from the scheduler's outputs alone: its block table (vLLM's BlockTable
// row: NewRequestData.block_ids, extended by each step's new_block_ids, replaced on resumption)
// and, when the batch tracks them, its known token ids (the prompt, then every sampled token).
struct CachedRequestState {
  ReqId req_id = 0;  // the request whose state this is
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
  int slot = 0;  // the request's slot (Request::slot)
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
  std::optional<int> row_of(ReqId id) const;   // row index, if in the batch: a search of the rows
  // The row of the request in `slot` (Request::slot), or -1 when it is not in the batch.
  int row_of_slot(int slot) const {
    return static_cast<std::size_t>(slot) < row_of_slot_.size() ? row_of_slot_[static_cast<std::size_t>(slot)] : -1;
  }
  // Row `row`'s block table and (with track_token_ids) its request's known token ids.
  std::span<const int> block_ids(int row) const { return state(row).block_ids; }
  int prefill_len(int row) const { return state(row).prefill_len; }
  std::span<const int> token_ids(int row) const { return state(row).token_ids; }
  // After the model ran on `out`: appends each request's sampled tokens to its known token ids
  // (vLLM: req_state.output_token_ids.extend). Nothing without track_token_ids.
  void add_sampled_tokens(const SchedulerOutput& out, const ModelRunnerOutput& output);
  // Swaps two rows (the reorder of docs/spec/routing.md); persists to later steps.
  void swap_rows(int i, int j);
  // Puts row from[pos] at pos for every pos (from: a permutation of the rows); persists.
  void permute_rows(std::span<const int> from);

 private:
  void remove_request(int slot);
  int add_request(ReqId id, int slot, CachedRequestState& state);  // returns its row
  void condense();
  const CachedRequestState& state(int row) const;
  void set_row_of_slot(int slot, int row);

  std::vector<BatchRow> rows_;
  std::vector<char> live_;           // per row; false = hole
  std::vector<int> holes_;           // hole indices (unsorted until used)
  std::vector<int> row_of_slot_;     // per slot: its request's row, or -1
  // The state of every request seen and not finished: state_of_slot_ gives a request's by its slot.
  // A finished request's state goes to a later one with its vectors' capacity (a deque: the states
  // stay where they are as it grows).
  std::deque<CachedRequestState> states_;
  std::vector<int> free_states_;
  std::vector<int> state_of_slot_;  // per slot: its request's index in states_, or -1
  CachedRequestState* state_of(int slot);  // null when the batch holds no state for the slot
  CachedRequestState& state_for_new(ReqId id, int slot);  // its state, emptied
  bool track_token_ids_ = false;
  std::vector<unsigned> stamp_;      // per row: last update() that scheduled it
  std::vector<CachedRequestState*> state_;  // per row: its request's state in states_
  unsigned epoch_ = 0;
  std::vector<BatchRow> permuted_rows_;                // scratch of permute_rows
  std::vector<unsigned> permuted_stamp_;
  std::vector<CachedRequestState*> permuted_state_;
};

}  // namespace mlasim
