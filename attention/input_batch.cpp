// Persistent batch rows: holes, smallest-hole insertion, condense.
#include "attention/input_batch.h"

#include <algorithm>
#include <functional>

#include "base/check.h"
#include "base/recycled_storage.h"

namespace mlasim {

InputBatch::InputBatch(bool track_token_ids, InputBatch& donor) : track_token_ids_(track_token_ids) {
  // The donor's states, every one free: a state is emptied when a request takes it.
  states_.swap(donor.states_);
  take_capacity(free_states_, donor.free_states_);
  for (int i = static_cast<int>(states_.size()) - 1; i >= 0; --i) free_states_.push_back(i);
  take_capacity(state_of_slot_, donor.state_of_slot_);
  take_capacity(rows_, donor.rows_);
  take_capacity(live_, donor.live_);
  take_capacity(holes_, donor.holes_);
  take_capacity(row_of_slot_, donor.row_of_slot_);
  take_capacity(stamp_, donor.stamp_);
  take_capacity(state_, donor.state_);
  take_capacity(permuted_rows_, donor.permuted_rows_);
  take_capacity(permuted_stamp_, donor.permuted_stamp_);
  take_capacity(permuted_state_, donor.permuted_state_);
}

std::vector<ReqId> InputBatch::req_ids() const {
  std::vector<ReqId> ids;
  ids.reserve(rows_.size());
  for (const BatchRow& r : rows_) ids.push_back(r.req_id);
  return ids;
}

std::optional<int> InputBatch::row_of(ReqId id) const {
  for (std::size_t row = 0; row < rows_.size(); ++row)
    if (live_[row] && rows_[row].req_id == id) return static_cast<int>(row);
  return std::nullopt;
}

const CachedRequestState& InputBatch::state(int row) const {
  MLASIM_CHECK(row >= 0 && row < num_reqs(), "InputBatch row out of range");
  return *state_[static_cast<std::size_t>(row)];
}

void InputBatch::set_row_of_slot(int slot, int row) {
  MLASIM_CHECK(slot >= 0, "a request without a slot (Request::slot) in a scheduler output");
  const auto s = static_cast<std::size_t>(slot);
  if (s >= row_of_slot_.size()) row_of_slot_.resize(s + 1, -1);
  row_of_slot_[s] = row;
}

CachedRequestState* InputBatch::state_of(int slot) {
  const auto s = static_cast<std::size_t>(slot);
  if (slot < 0 || s >= state_of_slot_.size() || state_of_slot_[s] < 0) return nullptr;
  return &states_[static_cast<std::size_t>(state_of_slot_[s])];
}

CachedRequestState& InputBatch::state_for_new(ReqId id, int slot) {
  MLASIM_CHECK(slot >= 0, "a request without a slot (Request::slot) in a scheduler output");
  const auto s = static_cast<std::size_t>(slot);
  if (s >= state_of_slot_.size()) state_of_slot_.resize(s + 1, -1);
  int& index = state_of_slot_[s];
  if (index < 0) {
    if (free_states_.empty()) {
      index = static_cast<int>(states_.size());
      states_.emplace_back();
    } else {
      index = free_states_.back();
      free_states_.pop_back();
    }
  }
  CachedRequestState& st = states_[static_cast<std::size_t>(index)];
  st.req_id = id;
  st.num_prompt_tokens = st.prefill_len = 0;
  st.block_ids.clear();
  st.token_ids.clear();
  return st;
}

void InputBatch::add_sampled_tokens(const SchedulerOutput& out, const ModelRunnerOutput& output) {
  if (!track_token_ids_) return;
  MLASIM_CHECK(output.req_ids.size() == out.scheduled_slots.size(), "model output not aligned with the scheduler output");
  for (std::size_t i = 0; i < output.req_ids.size(); ++i) {
    const int row = row_of_slot(out.scheduled_slots[i]);
    MLASIM_CHECK(row >= 0 && rows_[static_cast<std::size_t>(row)].req_id == output.req_ids[i],
                 "sampled tokens of a request the batch does not hold");
    const std::vector<int>& sampled = output.sampled_token_ids[i];
    std::vector<int>& known = state_[static_cast<std::size_t>(row)]->token_ids;
    known.insert(known.end(), sampled.begin(), sampled.end());
  }
}

void InputBatch::swap_rows(int i, int j) {
  MLASIM_CHECK(i >= 0 && j >= 0 && i < num_reqs() && j < num_reqs(), "swap_rows out of range");
  if (i == j) return;
  auto& a = rows_[static_cast<std::size_t>(i)];
  auto& b = rows_[static_cast<std::size_t>(j)];
  std::swap(a, b);
  std::swap(stamp_[static_cast<std::size_t>(i)], stamp_[static_cast<std::size_t>(j)]);
  std::swap(state_[static_cast<std::size_t>(i)], state_[static_cast<std::size_t>(j)]);
  set_row_of_slot(a.slot, i);
  set_row_of_slot(b.slot, j);
}

void InputBatch::permute_rows(std::span<const int> from) {
  const std::size_t n = rows_.size();
  MLASIM_CHECK(from.size() == n && holes_.empty(), "permute_rows: not a permutation of a condensed batch");
  permuted_rows_.resize(n);
  permuted_stamp_.resize(n);
  permuted_state_.resize(n);
  for (std::size_t pos = 0; pos < n; ++pos) {
    const auto src = static_cast<std::size_t>(from[pos]);
    MLASIM_CHECK(src < n && live_[src], "permute_rows: not a permutation of a condensed batch");
    live_[src] = 0;  // taken: a second use of the row is refused above
    permuted_rows_[pos] = rows_[src];
    permuted_stamp_[pos] = stamp_[src];
    permuted_state_[pos] = state_[src];
    if (src != pos) row_of_slot_[static_cast<std::size_t>(rows_[src].slot)] = static_cast<int>(pos);
  }
  rows_.swap(permuted_rows_);
  stamp_.swap(permuted_stamp_);
  state_.swap(permuted_state_);
  std::fill(live_.begin(), live_.end(), 1);
}

void InputBatch::remove_request(int slot) {
  const int idx = row_of_slot(slot);
  if (idx < 0) return;
  row_of_slot_[static_cast<std::size_t>(slot)] = -1;
  live_[static_cast<std::size_t>(idx)] = 0;
  holes_.push_back(idx);
}

int InputBatch::add_request(ReqId id, int slot, CachedRequestState& state) {
  MLASIM_CHECK(row_of_slot(slot) < 0, "request added to the batch twice");
  int idx;
  if (!holes_.empty()) {  // the smallest hole (vLLM pops the minimum of its removed indices)
    auto it = std::min_element(holes_.begin(), holes_.end());
    idx = *it;
    *it = holes_.back();
    holes_.pop_back();
  } else {
    idx = static_cast<int>(rows_.size());
    rows_.emplace_back();
    live_.push_back(0);
    stamp_.push_back(0);
    state_.push_back(nullptr);
  }
  rows_[static_cast<std::size_t>(idx)] = BatchRow{id, slot, state.num_prompt_tokens, 0, 0};
  state_[static_cast<std::size_t>(idx)] = &state;
  live_[static_cast<std::size_t>(idx)] = 1;
  stamp_[static_cast<std::size_t>(idx)] = epoch_;
  set_row_of_slot(slot, idx);
  return idx;
}

void InputBatch::condense() {
  if (holes_.empty()) return;
  std::sort(holes_.begin(), holes_.end(), std::greater<>());  // smallest at the back
  int last = static_cast<int>(rows_.size()) - 1;
  while (!holes_.empty()) {
    while (last >= 0 && !live_[static_cast<std::size_t>(last)]) --last;
    const int hole = holes_.back();
    if (hole >= last) break;
    holes_.pop_back();
    rows_[static_cast<std::size_t>(hole)] = rows_[static_cast<std::size_t>(last)];
    stamp_[static_cast<std::size_t>(hole)] = stamp_[static_cast<std::size_t>(last)];
    state_[static_cast<std::size_t>(hole)] = state_[static_cast<std::size_t>(last)];
    live_[static_cast<std::size_t>(hole)] = 1;
    live_[static_cast<std::size_t>(last)] = 0;
    row_of_slot_[static_cast<std::size_t>(rows_[static_cast<std::size_t>(hole)].slot)] = hole;
    --last;
  }
  // Everything past the last live row is a hole now; drop it.
  while (!rows_.empty() && !live_.back()) {
    rows_.pop_back();
    live_.pop_back();
    stamp_.pop_back();
    state_.pop_back();
  }
  holes_.clear();
}

void InputBatch::update(const SchedulerOutput& out) {
  ++epoch_;
  const std::size_t n = out.num_scheduled_tokens.size();
  MLASIM_CHECK(out.scheduled_slots.size() == n && out.finished_slots.size() == out.finished_req_ids.size() &&
                   out.scheduled_cached_reqs.slots.size() == out.scheduled_cached_reqs.req_ids.size(),
               "a scheduler output without its requests' slots");
  // 1. Finished requests leave the batch and free their states. Done first: a later request of
  //    this output may hold a finished one's slot already.
  for (int slot : out.finished_slots) {
    remove_request(slot);
    if (static_cast<std::size_t>(slot) < state_of_slot_.size() && state_of_slot_[static_cast<std::size_t>(slot)] >= 0) {
      free_states_.push_back(state_of_slot_[static_cast<std::size_t>(slot)]);
      state_of_slot_[static_cast<std::size_t>(slot)] = -1;
    }
  }
  // Mark the rows scheduled this step; every other live row is an unscheduled cached request.
  // Each row's values for this step are set where the row stands now: removals and additions leave
  // live rows in place, and condense moves a row with its values.
  for (std::size_t i = 0; i < n; ++i) {
    const int row = row_of_slot(out.scheduled_slots[i]);
    if (row >= 0) {
      MLASIM_CHECK(rows_[static_cast<std::size_t>(row)].req_id == out.num_scheduled_tokens[i].first,
                   "a slot's row holds another request");
      stamp_[static_cast<std::size_t>(row)] = epoch_;
      rows_[static_cast<std::size_t>(row)].num_scheduled_tokens = out.num_scheduled_tokens[i].second;
    }
  }
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    if (live_[i] && stamp_[i] != epoch_) remove_request(rows_[i].slot);
  }
  // q of a request added this step, from its entry of num_scheduled_tokens: new requests keep
  // scheduling order (one forward pass); a re-added cached request is looked for.
  std::size_t qi = 0;
  auto scheduled_q = [&](ReqId id, std::size_t& from) {
    for (std::size_t i = from; i < n; ++i)
      if (out.num_scheduled_tokens[i].first == id) return from = i, out.num_scheduled_tokens[i].second;
    for (std::size_t i = 0; i < from; ++i)
      if (out.num_scheduled_tokens[i].first == id) return out.num_scheduled_tokens[i].second;
    MLASIM_CHECK(false, "a request added to the batch is not scheduled");
    return 0;
  };
  // 2. New requests, then scheduled cached requests that are not in the batch.
  for (const NewRequestData& d : out.scheduled_new_reqs) {
    const int p = static_cast<int>(d.prompt_token_ids.size());
    CachedRequestState& st = state_for_new(d.req_id, d.slot);
    st.num_prompt_tokens = p;
    st.prefill_len = p;
    st.block_ids = d.block_ids;
    if (track_token_ids_) st.token_ids.assign(d.prompt_token_ids.begin(), d.prompt_token_ids.end());
    BatchRow& row = rows_[static_cast<std::size_t>(add_request(d.req_id, d.slot, st))];
    row.num_computed_tokens = d.num_computed_tokens;
    row.num_scheduled_tokens = scheduled_q(d.req_id, qi);
  }
  const CachedRequestData& c = out.scheduled_cached_reqs;
  for (int i = 0; i < c.num_reqs(); ++i) {
    const std::size_t ci = static_cast<std::size_t>(i);
    const ReqId id = c.req_ids[ci];
    const int slot = c.slots[ci];
    const int row = row_of_slot(slot);
    CachedRequestState* st = row >= 0 ? state_[static_cast<std::size_t>(row)] : state_of(slot);
    MLASIM_CHECK(st != nullptr && st->req_id == id, "a cached request the batch has never seen");
    // The block table: a resumed request's is the whole new one, a running one's grows.
    const std::vector<int>& new_blocks = c.new_block_ids[ci];
    if (c.resumed_from_preemption[ci]) {
      st->block_ids = new_blocks;
      st->prefill_len = st->num_prompt_tokens + c.num_output_tokens[ci];
    } else if (!new_blocks.empty()) {
      st->block_ids.insert(st->block_ids.end(), new_blocks.begin(), new_blocks.end());
    }
    if (row >= 0) {
      rows_[static_cast<std::size_t>(row)].num_computed_tokens = c.num_computed_tokens[ci];
      continue;
    }
    BatchRow& added = rows_[static_cast<std::size_t>(add_request(id, slot, *st))];
    added.num_computed_tokens = c.num_computed_tokens[ci];
    std::size_t from = 0;
    added.num_scheduled_tokens = scheduled_q(id, from);
  }
  // 3. Condense.
  condense();
  MLASIM_CHECK(rows_.size() == n, "batch rows != scheduled requests");
}

}  // namespace mlasim
