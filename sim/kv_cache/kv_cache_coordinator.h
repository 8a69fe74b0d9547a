// vLLM's KV cache manager over several KV cache groups (vllm/v1/core/kv_cache_manager.py
// KVCacheManager with the coordinator of vllm/v1/core/kv_cache_coordinator.py): one manager per
// group (sim/kv_cache/*_manager.h) sharing one GroupBlockPool. With prefix caching it is vLLM's
// HybridKVCacheCoordinator (:587-987): a prefix hit is the longest length every group hits, found by
// the fixed-point loop over groups of equal specs, full attention first. Without prefix caching it
// is KVCacheCoordinatorNoPrefixCache (:468-514): no hits, nothing cached. One MLA group keeps
// sim/kv_cache_manager.h (UnitaryKVCacheCoordinator's behaviour, unchanged and as fast as before).
#pragma once

#include <memory>
#include <vector>

#include "config/kv_cache_layout.h"
#include "sim/kv_cache/group_block_pool.h"
#include "sim/kv_cache/single_type_manager.h"
#include "sim/request.h"

namespace mlasim {

struct GroupedKVCacheConfig {
  KvCacheLayout layout;  // block sizes resolved (resolve_kv_cache_block_sizes)
  int num_gpu_blocks = 0;
  bool enable_caching = true;
  int max_model_len = 0;
  int max_num_batched_tokens = 0;     // max_in_flight_tokens with synchronous scheduling (config/vllm.py:601-609)
  int num_hash_lookahead_tokens = 0;  // config/vllm.py:677-692
  bool free_unhashed_first = true;
};

class GroupedKVCacheManager {
 public:
  explicit GroupedKVCacheManager(const GroupedKVCacheConfig& config);
  // The managers hold the pool by reference: the object stays where it was built.
  GroupedKVCacheManager(const GroupedKVCacheManager&) = delete;
  GroupedKVCacheManager& operator=(const GroupedKVCacheManager&) = delete;

  int num_groups() const { return static_cast<int>(managers_.size()); }
  const KvCacheGroup& group(int i) const { return managers_[static_cast<std::size_t>(i)]->spec(); }
  bool enable_caching() const { return enable_caching_; }
  int hash_block_size() const { return pool_.hash_block_size(); }
  int scheduler_block_size() const { return scheduler_block_size_; }
  const GroupBlockPool& pool() const { return pool_; }
  // The first full-attention (MLA) group: the attention layers' block table.
  int attention_group() const { return attention_group_; }
  std::span<const int> blocks(ReqId id, int group) const { return managers_[static_cast<std::size_t>(group)]->blocks(id); }

  // kv_cache_manager.py:249-313 get_computed_blocks: the hit blocks per group (`hits` sized to the
  // groups), the hit length, and the shared prefix a lagging group has not cached yet
  // (shared_prefix_boundary, 0 when none).
  int get_computed_blocks(const Request& request, GroupBlocks& hits, int& shared_prefix_boundary) const;
  // kv_cache_manager.py:379-626 allocate_slots: false, changing nothing but the blocks freed behind
  // a window, when the free blocks are too few; else the blocks each group allocated this step
  // (in `new_blocks`, sized to the groups).
  bool allocate_slots(Request& request, int num_new_tokens, int num_lookahead_tokens, const GroupBlocks* hits,
                      int num_new_computed_tokens, bool full_sequence_must_fit, GroupBlocks& new_blocks);
  // kv_cache_manager.py:790-800 cache_blocks.
  void cache_blocks(const Request& request, int num_computed_tokens);
  // kv_cache_coordinator.py:394-403: every group frees its blocks, tail first, group by group.
  void free(const Request& request);
  // kv_cache_coordinator.py:447-452 get_blocks: each group's block table.
  void get_blocks(ReqId id, GroupBlocks& out) const;
  void new_step_starts();
  // Pool audit plus: every block's ref count is the number of tables holding it.
  void audit() const;

 private:
  struct SpecGroup {  // kv_cache_coordinator.py:560-573
    std::vector<int> group_ids;
  };
  int find_longest_cache_hit(const Request& request, int max_cache_hit_length, GroupBlocks& hits, int& num_uncached) const;
  int get_num_blocks_to_allocate(ReqId id, int num_tokens, const GroupBlocks& hits, int total_computed_tokens,
                                 int num_local_computed_tokens, int num_tokens_main_model, bool apply_admission_cap,
                                 int prefill_end);
  void build_spec_groups();

  GroupBlockPool pool_;
  bool enable_caching_;
  int max_model_len_;
  int scheduler_block_size_;
  int retention_interval_;  // kDenseRetention: None
  int attention_group_ = 0;
  std::vector<std::unique_ptr<SingleTypeKVCacheManager>> managers_;
  mutable std::vector<int> audit_owners_;  // audit()'s per-block owner counts, reused
  std::vector<SpecGroup> attention_groups_;  // full attention first
  GroupBlocks no_hits_;
};

// Whether two groups' specs are equal, as vLLM's dataclass equality merges them into one lookup
// (kv_cache_coordinator.py:725-742): kind, block size, window, tokens per state, Mamba fields, page.
bool same_kv_cache_spec(const KvCacheGroup& a, const KvCacheGroup& b);

}  // namespace mlasim
