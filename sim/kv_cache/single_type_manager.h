// The KV cache manager of one KV cache group (vllm/v1/core/single_type_kv_cache_manager.py
// SingleTypeKVCacheManager, :49-737): the group's block table per request, the count of its blocks
// already in the prefix cache, allocation and freeing from the shared pool. The kinds that derive
// from it (full attention, sliding window, Mamba, circular buffer) override what their attention
// needs. Block tables hold block ids; 0 is the null block of a slot no longer (or never) needed.
//
// What vLLM 0.33 offers and mlasim's configurations never reach is left out, each named where its
// branch would be: KV connectors (external computed tokens), partial-block prefix hits and their
// copy-on-write (prefix_match_unit unset and Mamba blocks as large as the hash block: no
// fine-grained hits, kv_cache_utils.py:762-801), sparse retention (prefix_cache_retention_interval
// unset: dense caching), DCP/PCP, and EAGLE's last-block drop (MTP with prefix caching hashes the
// lookahead token instead, config/vllm.py:677-692, scheduler.py:339-342).
#pragma once

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "config/kv_cache_layout.h"
#include "sim/kv_cache/group_block_pool.h"
#include "sim/request.h"

namespace mlasim {

using GroupBlocks = std::vector<std::vector<int>>;  // per KV cache group

namespace kv {
// Python's a // b and vllm.utils.math_utils.cdiv (-(a // -b)) for b > 0.
inline int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int cdiv(int a, int b) { return -floor_div(-a, b); }
}  // namespace kv

class SingleTypeKVCacheManager {
 public:
  // max_admission_blocks: SlidingWindowSpec.max_admission_blocks_per_request (single_type_kv_cache_manager.py:2636-2650);
  // nullopt for the kinds that hold every block until the request ends.
  SingleTypeKVCacheManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching, int group_id,
                           int scheduler_block_size, std::optional<int> max_admission_blocks = std::nullopt);
  virtual ~SingleTypeKVCacheManager() = default;

  const KvCacheGroup& spec() const { return spec_; }
  int block_size() const { return block_size_; }
  int group_id() const { return group_id_; }
  bool enable_caching() const { return enable_caching_; }
  // The coordinator's hit alignment (scheduler_block_size without fine-grained hits, :101-103).
  void set_cache_hit_alignment_tokens(int tokens) { cache_hit_alignment_tokens_ = tokens; }
  // KVCacheConfig.prefix_cache_retention_interval (kDenseRetention: None), which the coordinator
  // hands every cache_blocks call (kv_cache_coordinator.py:359-380).
  void set_retention_interval(int interval) { retention_interval_ = interval; }

  // :176-266. A request with an entry in num_cached_block is running: it gets no new hits.
  virtual int get_num_blocks_to_allocate(ReqId id, int num_tokens, std::span<const int> new_computed_blocks,
                                         int total_computed_tokens, int num_local_computed_tokens,
                                         int num_tokens_main_model, bool apply_admission_cap, int prefill_end);
  // :268-325: touches the hit blocks (nulls for the skipped ones) and records them as cached.
  virtual void add_local_computed_blocks(ReqId id, std::span<const int> new_computed_blocks, int num_local_computed_tokens);
  // :370-410: blocks up to cdiv(num_tokens, block_size); the new ones are appended to `out`.
  virtual void allocate_new_blocks(ReqId id, int num_tokens, int num_tokens_main_model, std::vector<int>& out);
  // :477-543: caches the full hashed blocks up to num_tokens.
  virtual void cache_blocks(const Request& request, int num_tokens);
  // :571-589: the table without its leading nulls, in table order; the request's state goes.
  virtual void pop_blocks_for_free(ReqId id, std::vector<int>& out);
  // :591-601: frees them tail first.
  void free(ReqId id);
  // :682-720: frees the blocks the attention window has left behind, replacing them by nulls.
  virtual void remove_skipped_blocks(ReqId id, int processed_computed_tokens);
  virtual int get_num_skipped_tokens(int num_computed_tokens) const;
  virtual void new_step_starts() {}
  // The classmethod find_longest_cache_hit (:603-653), on the first manager of groups that share a
  // spec: per group of `group_ids` its hit blocks (appended to out[g]) and the hit length in tokens.
  virtual int find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length,
                                     std::span<const int> group_ids, int alignment_tokens, GroupBlocks& out) const = 0;

  bool is_running(ReqId id) const { return num_cached_block_.contains(id); }
  std::span<const int> blocks(ReqId id) const;
  // Every block held by some request of this group, with multiplicity (the scheduler's audit).
  void count_owners(std::vector<int>& owners) const;

 protected:
  // :545-569 reachable_block_mask for blocks [start, end) under the retention interval, keeping
  // the tails that end on `boundaries` (token positions a later request resumes at): false for
  // None (every block cached).
  virtual bool reachable_block_mask(int start_block, int end_block, std::span<const int> boundaries,
                                    std::vector<char>& mask) const;
  // :655-680: frees the non-null blocks of [first, last) from the back, stopping at a null.
  virtual void remove_blocks_in_range(ReqId id, int first_block, int last_block);
  // The request's hashes viewed at this group's block size (kv_cache_utils.py:1224-1230).
  std::uint64_t block_hash_at(std::span<const std::uint64_t> block_hashes, int block_index) const;
  int num_hashed_blocks(std::span<const std::uint64_t> block_hashes) const;
  int count_evictable(std::span<const int> blocks) const;

  KvCacheGroup spec_;
  GroupBlockPool& pool_;
  bool enable_caching_;
  int group_id_;
  int block_size_;
  int scheduler_block_size_;
  int cache_hit_alignment_tokens_;
  int retention_interval_ = kDenseRetention;
  std::optional<int> max_admission_blocks_;
  std::unordered_map<ReqId, std::vector<int>> req_to_blocks_;
  std::unordered_map<ReqId, int> num_cached_block_;
};

}  // namespace mlasim
