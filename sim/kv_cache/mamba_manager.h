// The Mamba manager (single_type_kv_cache_manager.py MambaManager, :1428-2135), which the KDA
// (linear attention) groups of Kimi-Linear and GLM-5-Next get. vLLM runs them in mamba_cache_mode
// "align" with prefix caching and "none" without (model_executor/models/config.py:750-787):
//   none:  one state block per request (block_size = max_model_len) plus num_speculative_blocks.
//   align: block_size tokens per state slot; slot p holds the state after (p + 1) * block_size
//          tokens; a request keeps its running state block (and the one before, until the next
//          step copies it on), nulls elsewhere; a prefill chunk that spans a slot boundary may
//          export the state at the boundary into a reserved checkpoint block (FlashKDA,
//          num_prefill_checkpoint_blocks = 1); full state blocks and the prompt's last boundary
//          enter the prefix cache, and a hit is the single state block of the longest cached
//          boundary.
#pragma once

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "sim/kv_cache/single_type_manager.h"

namespace mlasim {

// v1/kv_cache_interface.py:1168-1186: the reusable state boundary of a prefill of num_tokens.
int mamba_prefill_checkpoint_position(int num_tokens, int hash_block_size, int num_hash_lookahead_tokens);
// v1/kv_cache_interface.py:1189-1210: whether the backend can export the checkpoint in this query.
bool mamba_prefill_checkpoint_valid(int query_start, int query_end, int checkpoint_position, int hash_block_size,
                                    int mamba_block_size, int checkpoint_alignment);

class MambaManager : public SingleTypeKVCacheManager {
 public:
  MambaManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching, int group_id,
               int scheduler_block_size, int num_hash_lookahead_tokens);

  int get_num_blocks_to_allocate(ReqId id, int num_tokens, std::span<const int> new_computed_blocks,
                                 int total_computed_tokens, int num_local_computed_tokens, int num_tokens_main_model,
                                 bool apply_admission_cap, int prefill_end) override;
  void allocate_new_blocks(ReqId id, int num_tokens, int num_tokens_main_model, std::vector<int>& out) override;
  void cache_blocks(const Request& request, int num_tokens) override;
  void pop_blocks_for_free(ReqId id, std::vector<int>& out) override;
  void remove_skipped_blocks(ReqId id, int processed_computed_tokens) override;
  // :1971-1976: only the state after the last computed token is needed.
  int get_num_skipped_tokens(int num_computed_tokens) const override { return num_computed_tokens - 1; }
  void new_step_starts() override { cached_blocks_this_step_.clear(); }
  // :1470-1547 without fine-grained lookups: the right-most cached aligned state block.
  int find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length, std::span<const int> group_ids,
                             int alignment_tokens, GroupBlocks& out) const override;

 protected:
  void remove_blocks_in_range(ReqId id, int first_block, int last_block) override;
  // :1549-1606: under a retention interval, the state blocks ending on each interval (k > 0) and on
  // each reachable boundary; None (dense) caches every state block.
  bool reachable_block_mask(int start_block, int end_block, std::span<const int> boundaries,
                            std::vector<char>& mask) const override;

 private:
  bool align() const { return align_; }
  int get_num_blocks_to_allocate_align(ReqId id, std::span<const int> new_computed_blocks, int total_computed_tokens,
                                       int num_tokens_main_model, bool apply_admission_cap, int prefill_end);
  void allocate_new_blocks_align(ReqId id, int num_tokens_main_model, std::vector<int>& out);
  bool needs_internal_checkpoint(ReqId id, int query_start, int query_end, int checkpoint_position, int prefill_end) const;
  std::optional<BlockHashKey> cache_partial_tail_block(const Request& request, int num_tokens);

  bool align_;
  int num_speculative_blocks_;
  bool has_prefill_checkpoint_blocks_;
  int num_hash_lookahead_tokens_;
  std::set<std::pair<std::uint64_t, int>> cached_blocks_this_step_;  // BlockHashWithGroupId
  // align mode (:1453-1466)
  std::unordered_map<ReqId, int> last_state_block_idx_;
  std::unordered_map<ReqId, int> num_retired_blocks_;
  std::unordered_set<ReqId> allocated_block_reqs_;
  std::unordered_map<ReqId, std::pair<int, int>> checkpoints_;  // (checkpoint position, reserved block index)
};

}  // namespace mlasim
