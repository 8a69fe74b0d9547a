// The sliding window's manager.
#include "sim/kv_cache/sliding_window_manager.h"

#include <algorithm>

#include "base/check.h"

namespace mlasim {

using kv::cdiv;

SlidingWindowManager::SlidingWindowManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching,
                                           int group_id, int scheduler_block_size, int max_admission_blocks)
    : SingleTypeKVCacheManager(spec, pool, enable_caching, group_id, scheduler_block_size, max_admission_blocks) {
  MLASIM_CHECK(spec.sliding_window > 0, "a sliding-window group needs sliding_window > 0");
}

int SlidingWindowManager::max_admission_blocks(const KvCacheGroup& spec, int max_in_flight_tokens, int max_model_len) {
  const long long tokens = std::min<long long>(
      static_cast<long long>(spec.sliding_window) - 1 + spec.extra_retained_tokens + max_in_flight_tokens, max_model_len);
  return cdiv(static_cast<int>(tokens), spec.block_size) + 1;
}

int SlidingWindowManager::contiguous_blocks_for_hit() const { return cdiv(spec_.sliding_window - 1, block_size_); }

int SlidingWindowManager::get_num_skipped_tokens(int num_computed_tokens) const {
  return std::max(0, num_computed_tokens - spec_.sliding_window + 1 - spec_.extra_retained_tokens);
}

int SlidingWindowManager::find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length,
                                                 std::span<const int> group_ids, int alignment_tokens,
                                                 GroupBlocks& out) const {
  const int need = contiguous_blocks_for_hit();
  const int max_num_blocks = max_length / block_size_;
  MLASIM_CHECK(max_num_blocks <= num_hashed_blocks(block_hashes), "a sliding-window lookup past the hashed blocks");
  std::vector<std::vector<int>> computed(group_ids.size(), std::vector<int>(static_cast<std::size_t>(max_num_blocks), kNullBlock));
  std::vector<int> cached;
  int num_contiguous = 0;
  bool match_found = false;
  std::size_t keep = 0;
  for (int i = max_num_blocks - 1; i >= 0; --i) {  // :1025-1048: right to left, first match wins
    cached.clear();
    if (!pool_.get_cached_block(block_hash_at(block_hashes, i), group_ids, cached)) {
      num_contiguous = 0;
      continue;
    }
    // A run must end on an aligned boundary.
    if (num_contiguous == 0 && block_size_ != alignment_tokens && ((i + 1) * block_size_) % alignment_tokens != 0) continue;
    for (std::size_t g = 0; g < group_ids.size(); ++g) computed[g][static_cast<std::size_t>(i)] = cached[g];
    if (++num_contiguous >= need) {
      keep = static_cast<std::size_t>(i + num_contiguous);
      match_found = true;
      break;
    }
  }
  if (!match_found) {  // :1049-1058: the run from block 0 is a hit too, cut to the alignment
    keep = static_cast<std::size_t>(num_contiguous);
    while (block_size_ != alignment_tokens && keep * static_cast<std::size_t>(block_size_) % alignment_tokens != 0) --keep;
  }
  for (std::size_t g = 0; g < group_ids.size(); ++g)
    out[g].insert(out[g].end(), computed[g].begin(), computed[g].begin() + static_cast<std::ptrdiff_t>(keep));
  return static_cast<int>(keep) * block_size_;
}

bool SlidingWindowManager::reachable_block_mask(int start_block, int end_block, std::span<const int> boundaries,
                                                std::vector<char>& mask) const {
  const int alignment = cache_hit_alignment_tokens_;
  if (alignment % block_size_ != 0) return false;  // :1089-1097: falls back to dense
  const int need = contiguous_blocks_for_hit();
  mask.assign(static_cast<std::size_t>(end_block - start_block), 0);
  // (1) :1108-1133: segment tails, every `alignment` tokens (dense) or `retention` (k > 0).
  const int segment_tokens = retention_interval_ == kDenseRetention ? alignment : retention_interval_;
  if (segment_tokens > 0) {
    const int per_segment = segment_tokens / block_size_;
    if (need >= per_segment) return false;  // every block is reachable
    for (int i = start_block; i < end_block; ++i)  // shift 0 without EAGLE
      if (i % per_segment >= per_segment - need) mask[static_cast<std::size_t>(i - start_block)] = 1;
  }
  // (2) :1135-1144: the tail ending on each reachable boundary (not under dense retention).
  if (retention_interval_ != kDenseRetention) {
    for (int boundary : boundaries) {
      const int end = kv::floor_div(boundary, alignment) * alignment / block_size_;
      for (int j = std::max(start_block, end - need); j < std::min(end_block, end); ++j)
        mask[static_cast<std::size_t>(j - start_block)] = 1;
    }
  }
  return true;
}

}  // namespace mlasim
