// KV cache manager (vllm/v1/core/kv_cache_manager.py, one full-attention group): prefix-cache
// lookup, allocate_slots (docs/spec/scheduler.md §3-4), freeing. Block tables live on the Request.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "sim/block_pool.h"
#include "sim/request.h"

namespace mlasim {

class KVCacheManager {
 public:
  // donor: a manager about to be dropped whose pool's storage this one's reuses
  // (base/recycled_storage.h).
  KVCacheManager(int num_gpu_blocks, int block_size, bool enable_caching, int max_model_len,
                 bool free_unhashed_first = true, KVCacheManager* donor = nullptr);

  int block_size() const { return block_size_; }
  bool enable_caching() const { return pool_.enable_caching(); }
  BlockPool& block_pool() { return pool_; }
  const BlockPool& block_pool() const { return pool_; }

  // Longest prefix-cache hit from block 0, stopping at the first miss, capped at
  // num_tokens - 1 in whole blocks. Replaces `blocks` with the hit block ids and returns the
  // number of hit tokens (0 when caching is off). The request's block_hashes must be current.
  int get_computed_blocks(const Request& request, std::vector<int>& blocks) const;

  // vLLM <= 0.22 with an EAGLE-family drafter (MTP included): the longest hit drops its last
  // block, whose drafter state the hit cannot restore (single_type_kv_cache_manager.py, 0.11.0
  // :282-284, `if use_eagle and computed_blocks[0]: computed.pop()`).
  void set_drop_last_hit_block(bool drop) { drop_last_hit_block_ = drop; }

  // vLLM 0.8 freed a request's blocks in table order when prefix caching was off, reversed only
  // with caching on (0.8.5 v1/core/kv_cache_manager.py:305-312); later releases always reverse.
  void set_free_in_order_without_caching(bool in_order) { free_in_order_without_caching_ = in_order; }

  // vLLM 0.8 (kv_cache_manager.py:274-293): allocate_slots caches the blocks from the count it
  // recorded for the request up to (nct + hits + num_new_tokens - drafts) // block_size, counting
  // the request's drafts before the scheduler trims them, with Python's slicing, and records that
  // count. A request with drafts scheduled fewer than 1 + drafts tokens lowers the count, and a
  // later call re-caches a cached block: block_pool.py:120 `assert blk.block_hash is None` fails.
  // With this on, request.num_cached_blocks is that record, and where 0.8's block pool raises (or
  // would cache a block under another position's hash) allocate_slots throws VllmCannotRun.
  void set_cache_count_counts_untrimmed_drafts(bool on) { cache_count_counts_untrimmed_drafts_ = on; }

  // Reserves slots for nct + num_new_computed_tokens + num_new_tokens + num_lookahead_tokens
  // tokens (capped at max_model_len): adds the hit blocks (touching them), then new blocks from
  // the free-queue head. Returns false, changing nothing, if too few blocks are free (hit blocks
  // sitting in the free queue count against it). Caches the full blocks up to
  // min(nct + hits + num_new_tokens, num_tokens), never drafts. With full_sequence_must_fit
  // (scheduler_reserve_full_isl, kv_cache_manager.py ~531-547) it first fails unless the free
  // blocks also hold the request's whole known sequence, min(num_tokens, max_model_len).
  // Inline: a running request that holds every block it needs and has no new full block to cache
  // (most decode steps: 15 of 16 with 16-token blocks) gets nothing and needs no more.
  bool allocate_slots(Request& request, int num_new_tokens, int num_lookahead_tokens,
                      std::span<const int> new_computed_blocks = {}, int num_new_computed_tokens = 0,
                      bool full_sequence_must_fit = false) {
    if (new_computed_blocks.empty() && num_new_computed_tokens == 0 && !full_sequence_must_fit &&
        !cache_count_counts_untrimmed_drafts_ && num_new_tokens > 0) {
      const int nct = request.num_computed_tokens;
      const int needed = std::min(nct + num_new_tokens + num_lookahead_tokens, max_model_len_);
      const bool held = (needed + block_size_ - 1) / block_size_ <= static_cast<int>(request.block_ids.size());
      if (held && num_blocks_to_cache(request, std::min(nct + num_new_tokens, request.num_tokens())) <= request.num_cached_blocks)
        return true;
    }
    return allocate_new_slots(request, num_new_tokens, num_lookahead_tokens, new_computed_blocks,
                              num_new_computed_tokens, full_sequence_must_fit);
  }

  // Caches the request's hashed full blocks up to num_tokens_to_cache (kv_cache_manager.py
  // cache_blocks ~791); nothing when caching is off. Inline: most calls (every row of every step)
  // find no new full block.
  void cache_blocks(Request& request, int num_tokens_to_cache) {
    const int num_full_blocks = num_blocks_to_cache(request, num_tokens_to_cache);
    if (num_full_blocks > request.num_cached_blocks) cache_full_blocks(request, num_full_blocks);
  }

  // Frees the request's blocks in reverse table order (tail evicted first; see
  // set_free_in_order_without_caching); the table empties.
  void free(Request& request);

  // Leading blocks of `request` referenced by every running request (cascade attention).
  int get_num_common_prefix_blocks(const Request& request, int num_running_requests) const;

 private:
  int block_size_;
  int max_model_len_;
  bool drop_last_hit_block_ = false;
  bool free_in_order_without_caching_ = false;
  bool cache_count_counts_untrimmed_drafts_ = false;
  void cache_blocks_0_8(Request& request, int num_tokens_to_cache);
  // The table's blocks that caching up to num_tokens_to_cache would have cached (0 with caching
  // off). Only hashed blocks can be cached; with MTP's lookahead hashes the last full block may not
  // be hashed yet (single_type_kv_cache_manager.py ~501-503).
  int num_blocks_to_cache(const Request& request, int num_tokens_to_cache) const {
    if (!pool_.enable_caching()) return 0;
    return std::min(num_tokens_to_cache / block_size_, static_cast<int>(request.block_hashes.size()));
  }
  // allocate_slots past its inline case.
  bool allocate_new_slots(Request& request, int num_new_tokens, int num_lookahead_tokens,
                          std::span<const int> new_computed_blocks, int num_new_computed_tokens,
                          bool full_sequence_must_fit);
  // Caches the table's blocks [num_cached_blocks, num_full_blocks).
  void cache_full_blocks(Request& request, int num_full_blocks);
  BlockPool pool_;
};

}  // namespace mlasim
