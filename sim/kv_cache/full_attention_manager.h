// Full attention's manager (single_type_kv_cache_manager.py FullAttentionManager, :739-897), which
// MLAAttentionSpec groups get whatever their tokens_per_state (DeepSeek-V4's compressed MLA and
// indexer caches, GLM-5-Next's kpool indexer: tokens_per_state only shapes the kernel's states per
// block, kv_cache_interface.py:267-275, never the scheduler's block counts), and the circular
// buffer's (:1186-1273), which claims one block per request and stays out of prefix caching.
#pragma once

#include "sim/kv_cache/single_type_manager.h"

namespace mlasim {

class FullAttentionManager : public SingleTypeKVCacheManager {
 public:
  using SingleTypeKVCacheManager::SingleTypeKVCacheManager;

  // :743-838 without fine-grained lookups: the longest run of cached blocks from block 0, cut to
  // the alignment.
  int find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length, std::span<const int> group_ids,
                             int alignment_tokens, GroupBlocks& out) const override;
  // :840-857: the full blocks, then (a group larger than the hash block) the prompt's tail.
  void cache_blocks(const Request& request, int num_tokens) override;

 private:
  // :859-897: the prompt's last hash boundary inside a block becomes a partial entry of it.
  void cache_partial_tail_block(const Request& request, int num_tokens);
};

class CircularBufferManager : public FullAttentionManager {
 public:
  using FullAttentionManager::FullAttentionManager;

  int get_num_blocks_to_allocate(ReqId id, int num_tokens, std::span<const int> new_computed_blocks,
                                 int total_computed_tokens, int num_local_computed_tokens, int num_tokens_main_model,
                                 bool apply_admission_cap, int prefill_end) override;
  void allocate_new_blocks(ReqId id, int num_tokens, int num_tokens_main_model, std::vector<int>& out) override;
  int find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length, std::span<const int> group_ids,
                             int alignment_tokens, GroupBlocks& out) const override;
  void cache_blocks(const Request&, int) override {}
  void add_local_computed_blocks(ReqId, std::span<const int>, int) override {}
  void remove_skipped_blocks(ReqId, int) override {}
};

}  // namespace mlasim
