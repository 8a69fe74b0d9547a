// The sliding window's manager (single_type_kv_cache_manager.py SlidingWindowManager, :946-1183),
// which SlidingWindowMLASpec groups get (DeepSeek-V4's SWA cache and compressor states): blocks
// behind the window are freed as the request advances, a prefix hit needs only the blocks under
// the window before its end, and only the blocks a later hit can use enter the prefix cache.
#pragma once

#include "sim/kv_cache/single_type_manager.h"

namespace mlasim {

class SlidingWindowManager : public SingleTypeKVCacheManager {
 public:
  SlidingWindowManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching, int group_id,
                       int scheduler_block_size, int max_admission_blocks);

  // :969-1065: the right-most run of cdiv(window - 1, block_size) cached blocks ending on an
  // aligned boundary; the blocks before it are nulls.
  int find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length, std::span<const int> group_ids,
                             int alignment_tokens, GroupBlocks& out) const override;
  // :1148-1183: tokens before the window of the next token (plus extra_retained_tokens).
  int get_num_skipped_tokens(int num_computed_tokens) const override;

  // SlidingWindowSpec.max_admission_blocks_per_request (kv_cache_interface.py:918-945).
  static int max_admission_blocks(const KvCacheGroup& spec, int max_in_flight_tokens, int max_model_len);

 protected:
  // :1067-1146: the tail of `need` blocks before every aligned boundary (dense retention), every
  // retention interval (k > 0), and each reachable boundary (any retention but dense).
  bool reachable_block_mask(int start_block, int end_block, std::span<const int> boundaries,
                            std::vector<char>& mask) const override;

 private:
  int contiguous_blocks_for_hit() const;  // :956-967 without EAGLE
};

}  // namespace mlasim
