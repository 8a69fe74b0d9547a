// The scheduler's audits: the per-step invariants, the incremental audit of each step's changes
// (the owners kept from the tables' growth and frees), and the full O(blocks) audit.
#include <algorithm>
#include <string>

#include "base/check.h"
#include "sim/scheduler.h"

namespace mlasim {

void Scheduler::set_audit_changes(bool on) {
  if (grouped_) return;  // the groups' managers have their own audit (GroupedKVCacheManager::audit)
  delta_audit_ = on;
  kv_.block_pool().track_changes(on);
  delta_changed_.clear();
  delta_owners_.assign(on ? static_cast<std::size_t>(config_.num_gpu_blocks) : 0, 0);
  for (const std::unique_ptr<Request>& alive : slots_) {
    if (!alive) continue;
    Request& r = *alive;
    r.audited_num_blocks = on ? static_cast<int>(r.block_ids.size()) : 0;
    if (on)
      for (int b : r.block_ids) ++delta_owners_[static_cast<std::size_t>(b)];
  }
}

void Scheduler::check_step_invariants(int total) const {
  MLASIM_CHECK(total <= config_.max_num_batched_tokens, "scheduled more tokens than the budget");
  MLASIM_CHECK(static_cast<int>(running_.size()) <= config_.max_num_seqs, "len(running) > max_num_seqs");
  const BlockPool& pool = *pool_;
  MLASIM_CHECK(pool.get_num_free_blocks() + pool.num_used_blocks() == pool.num_usable_blocks(), "free + used != usable");
}

void Scheduler::check_scheduled_invariants(const Scheduled& s) const {
  const Request& r = *s.req;
  MLASIM_CHECK(s.num_new_tokens > 0, "scheduled zero tokens");
  // A padded admission's placeholder drafts are scheduled positions past its known tokens.
  const int placeholders = s.padded_drafts ? config_.num_speculative_tokens : 0;
  MLASIM_CHECK(r.num_computed_tokens + s.num_new_tokens <= r.num_tokens_with_spec() + placeholders,
               "nct would pass the request's tokens");
  MLASIM_CHECK(static_cast<long long>(r.block_ids.size()) * config_.block_size >= r.num_computed_tokens + s.num_new_tokens,
               "scheduled tokens without KV slots");
}

void Scheduler::count_table_growth() {
  const int num_blocks = kv_.block_pool().num_gpu_blocks();
  for (Request* r : scheduled_reqs_) {
    const auto n = static_cast<int>(r->block_ids.size());
    MLASIM_CHECK(r->audited_num_blocks <= n, "a scheduled request's block table shrank without being freed");
    for (int i = r->audited_num_blocks; i < n; ++i) {
      const int id = r->block_ids[static_cast<std::size_t>(i)];
      MLASIM_CHECK(id > 0 && id < num_blocks, "block id out of range");
      ++delta_owners_[static_cast<std::size_t>(id)];
      delta_changed_.push_back(id);
    }
    r->audited_num_blocks = n;
  }
}

void Scheduler::audit_changes() {
  BlockPool& pool = kv_.block_pool();
  for (const Request* p : preempted_)
    MLASIM_CHECK(p->block_ids.empty() && p->num_computed_tokens == 0 && p->audited_num_blocks == 0,
                 "a preempted request holds KV state");
  auto owners_match = [&](int id) {
    MLASIM_CHECK(delta_owners_[static_cast<std::size_t>(id)] == pool.ref_cnt(id),
                 "block " + std::to_string(id) + " ref count != number of owners");
  };
  for (int id : pool.changed_blocks()) owners_match(id);
  for (int id : delta_changed_) owners_match(id);
  delta_changed_.clear();
  pool.audit_changes();
}

void Scheduler::audit() const {
  if (grouped_) {
    audit_grouped();
    return;
  }
  const BlockPool& pool = kv_.block_pool();
  pool.audit();
  std::vector<int>& owners = audit_owners_;
  std::vector<int>& last_owner = audit_last_owner_;
  owners.assign(static_cast<std::size_t>(pool.num_gpu_blocks()), 0);
  last_owner.assign(static_cast<std::size_t>(pool.num_gpu_blocks()), -1);
  int idx = 0;
  for (const Request* r : running_) {
    MLASIM_CHECK(r->status == RequestStatus::kRunning, "a non-running request in running");
    MLASIM_CHECK(r->num_computed_tokens <= r->num_tokens(), "nct exceeds the request's tokens");
    for (int id : r->block_ids) {
      MLASIM_CHECK(id > 0 && id < pool.num_gpu_blocks(), "block id out of range");
      MLASIM_CHECK(last_owner[static_cast<std::size_t>(id)] != idx, "a request owns a block twice");
      last_owner[static_cast<std::size_t>(id)] = idx;
      ++owners[static_cast<std::size_t>(id)];
    }
    ++idx;
  }
  for (const Request* r : waiting_.in_order()) {
    MLASIM_CHECK(r->block_ids.empty() && r->num_computed_tokens == 0, "a waiting request holds KV state");
  }
  // With pool.audit()'s "referenced or free" per block, owners == ref count also means every
  // block is owned or free.
  for (int id = 1; id < pool.num_gpu_blocks(); ++id) {
    MLASIM_CHECK(owners[static_cast<std::size_t>(id)] == pool.ref_cnt(id),
                 "block " + std::to_string(id) + " ref count != number of owners");
  }
  if (delta_audit_) {  // the incremental audit's owners agree with these, counted afresh
    for (const Request* r : running_)
      MLASIM_CHECK(r->audited_num_blocks == static_cast<int>(r->block_ids.size()), "a table's growth went uncounted");
    MLASIM_CHECK(std::equal(owners.begin() + 1, owners.end(), delta_owners_.begin() + 1),
                 "the incremental audit's owner counts drifted from the tables");
  }
  MLASIM_CHECK(static_cast<int>(running_.size()) + waiting_.size() == num_alive_requests(), "requests lost track of");
}

}  // namespace mlasim
