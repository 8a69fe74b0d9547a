// The scheduler's side of several KV cache groups (vllm/v1/core/sched/scheduler.py with a hybrid
// KVCacheConfig): allocation and freeing through the grouped manager, the Mamba "align" chunk
// split, each group's block ids in the output, and the audit of the groups' tables.
#include <algorithm>

#include "base/check.h"
#include "sim/kv_cache/mamba_manager.h"
#include "sim/scheduler.h"

namespace mlasim {

void Scheduler::free_blocks(Request& r) {
  if (grouped_) {
    grouped_->free(r);
    return;
  }
  if (delta_audit_) {  // the table's owners leave, as the incremental audit counted them
    for (int i = 0; i < r.audited_num_blocks; ++i) {
      const int id = r.block_ids[static_cast<std::size_t>(i)];
      --delta_owners_[static_cast<std::size_t>(id)];
      delta_changed_.push_back(id);
    }
    r.audited_num_blocks = 0;
  }
  kv_.free(r);
}

bool Scheduler::allocate_running(Request& r, int num_new_tokens) {
  const auto slot = static_cast<std::size_t>(r.slot);
  if (slot >= step_new_blocks_.size()) {
    step_new_blocks_.resize(slot + 1);
    step_new_blocks_at_.resize(slot + 1, -1);
  }
  const bool allocated =
      grouped_->allocate_slots(r, num_new_tokens, num_lookahead_tokens(), nullptr, 0, false, step_new_blocks_[slot]);
  step_new_blocks_at_[slot] = allocated ? step_ : -1;
  return allocated;
}

bool Scheduler::allocate_waiting(Request& r, int num_new_tokens, int num_lookahead, int num_new_computed) {
  GroupBlocks unused;  // a waiting request's output lists its whole tables (get_blocks)
  return grouped_->allocate_slots(r, num_new_tokens, num_lookahead, &group_hits_, num_new_computed,
                                  config_.rules.scheduler_reserve_full_isl, unused);
}

int Scheduler::prefix_hit(Request& r) {
  hit_blocks_.clear();
  if (r.num_computed_tokens != 0) {  // no lookup (a request with KV loaded: not modelled)
    if (grouped_) group_hits_.assign(static_cast<std::size_t>(grouped_->num_groups()), {});
    return 0;
  }
  return grouped_ ? grouped_->get_computed_blocks(r, group_hits_, r.shared_prefix_boundary)
                  : kv_.get_computed_blocks(r, hit_blocks_);
}

bool Scheduler::split_admission(const Request& r, int num_new_computed, int& n, bool& padded) const {
  n = mamba_block_aligned_split(r, n, num_new_computed);  // scheduler.py ~1349-1368
  if (n == 0) return false;
  if (padded && n != 1 + config_.num_speculative_tokens) {  // the split clipped the placeholder rows
    n = 1;
    padded = false;
  }
  return true;
}

int Scheduler::mamba_block_aligned_split(const Request& r, int num_new_tokens, int num_new_local_computed_tokens) const {
  // scheduler.py:546-654 without EAGLE's drop, partial (sub-block) hits or shared-prefix checkpoints.
  const int start = r.num_computed_tokens + num_new_local_computed_tokens;
  const int prefill_end = std::max(r.num_prompt_tokens, r.num_tokens() - 1);
  if (start >= prefill_end) return num_new_tokens;
  const int block_size = mamba_split_block_size_;
  const int lookahead = num_hash_lookahead_tokens();
  int last_cache_position = mamba_prefill_checkpoint_position(r.num_tokens(), block_size, lookahead);
  int end = start + num_new_tokens;
  const int checkpoint_position =
      mamba_prefill_checkpoint_position(prefill_end, grouped_->scheduler_block_size(), lookahead);
  const bool use_internal_checkpoint =
      mamba_has_prefill_checkpoint_blocks_ && end >= prefill_end &&
      mamba_prefill_checkpoint_valid(start, end, checkpoint_position, hash_block_size_, block_size,
                                     mamba_prefill_checkpoint_alignment_);
  if (use_internal_checkpoint) last_cache_position = 0;
  // Chunk ends are block aligned, but for the prompt's last chunk; a block wider than a chunk may
  // advance inside it.
  if (end < prefill_end) {
    int max_prefill_tokens = config_.max_num_batched_tokens;
    if (config_.long_prefill_token_threshold > 0)
      max_prefill_tokens = std::min(max_prefill_tokens, config_.long_prefill_token_threshold);
    const int aligned_end = end / block_size * block_size;
    if (aligned_end > start || block_size <= max_prefill_tokens) end = aligned_end;
  }
  const int next_block_boundary = (start / block_size + 1) * block_size;
  const int junction = r.shared_prefix_boundary;
  const int junction_stop = start + kv::floor_div(junction - start, block_size) * block_size;  // block-floored
  const int stops[] = {start % block_size != 0 && !use_internal_checkpoint ? next_block_boundary : 0,
                       last_cache_position, start < junction && junction < end ? junction_stop : 0};
  int stop = end;
  for (int s : stops)
    if (start < s && s < end) stop = std::min(stop, s);
  return std::max(stop - start, 0);
}

void Scheduler::fill_group_block_ids(SchedulerOutput& out) {
  const int attn = grouped_->attention_group();  // block_ids: the MLA layers' table
  for (NewRequestData& d : out.scheduled_new_reqs) {
    grouped_->get_blocks(d.req_id, d.group_block_ids);
    d.block_ids = d.group_block_ids[static_cast<std::size_t>(attn)];
  }
  CachedRequestData& c = out.scheduled_cached_reqs;
  c.new_group_block_ids.resize(c.req_ids.size());
  for (std::size_t i = 0; i < c.req_ids.size(); ++i) {
    GroupBlocks& blocks = c.new_group_block_ids[i];
    if (c.resumed_from_preemption[i]) {
      grouped_->get_blocks(c.req_ids[i], blocks);
    } else {
      const auto slot = static_cast<std::size_t>(c.slots[i]);
      MLASIM_CHECK(slot < step_new_blocks_at_.size() && step_new_blocks_at_[slot] == step_,
                   "a running request scheduled without an allocation");
      blocks = step_new_blocks_[slot];
    }
    if (std::all_of(blocks.begin(), blocks.end(), [](const std::vector<int>& b) { return b.empty(); })) blocks.clear();
    c.new_block_ids[i] = blocks.empty() ? std::vector<int>() : blocks[static_cast<std::size_t>(attn)];
  }
}

void Scheduler::audit_grouped() const {
  grouped_->audit();
  for (const Request* r : running_) {
    MLASIM_CHECK(r->status == RequestStatus::kRunning, "a non-running request in running");
    MLASIM_CHECK(r->num_computed_tokens <= r->num_tokens(), "nct exceeds the request's tokens");
  }
  GroupBlocks tables;
  for (const Request* r : waiting_.in_order()) {
    grouped_->get_blocks(r->request_id, tables);
    const bool holds = std::any_of(tables.begin(), tables.end(), [](const std::vector<int>& t) { return !t.empty(); });
    MLASIM_CHECK(!holds && r->num_computed_tokens == 0, "a waiting request holds KV state");
  }
  MLASIM_CHECK(static_cast<int>(running_.size()) + waiting_.size() == num_alive_requests(), "requests lost track of");
}

}  // namespace mlasim
