// Full attention's and the circular buffer's managers.
#include "sim/kv_cache/full_attention_manager.h"

#include <algorithm>

#include "base/check.h"

namespace mlasim {

using kv::cdiv;

int FullAttentionManager::find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length,
                                                 std::span<const int> group_ids, int alignment_tokens,
                                                 GroupBlocks& out) const {
  MLASIM_CHECK(alignment_tokens >= block_size_, "fine-grained prefix-cache hits are not modelled");
  const std::size_t start = out.front().size();
  const int n = std::min(max_length / block_size_, num_hashed_blocks(block_hashes));
  std::vector<int> cached;
  int num_hit = 0;
  for (int i = 0; i < n; ++i) {  // :792-800: a miss ends the run (chained hashes)
    cached.clear();
    if (!pool_.get_cached_block(block_hash_at(block_hashes, i), group_ids, cached)) break;
    for (std::size_t g = 0; g < group_ids.size(); ++g) out[g].push_back(cached[g]);
    ++num_hit;
  }
  int hit_length = num_hit * block_size_;
  hit_length -= hit_length % alignment_tokens;  // :828-832
  const std::size_t keep = start + static_cast<std::size_t>(cdiv(hit_length, block_size_));
  for (std::size_t g = 0; g < group_ids.size(); ++g) out[g].resize(keep);
  return hit_length;
}

void FullAttentionManager::cache_blocks(const Request& request, int num_tokens) {
  SingleTypeKVCacheManager::cache_blocks(request, num_tokens);
  if (block_size_ == pool_.hash_block_size()) return;
  cache_partial_tail_block(request, num_tokens);
}

void FullAttentionManager::cache_partial_tail_block(const Request& request, int num_tokens) {
  const int hash_block_size = pool_.hash_block_size();
  // A resend hits at most num_prompt_tokens - 1 tokens (EAGLE's lookups read the whole prompt).
  const int token_limit = request.num_prompt_tokens - 1;
  const int boundary_tokens =
      std::min(token_limit / hash_block_size, static_cast<int>(request.block_hashes.size())) * hash_block_size;
  if (boundary_tokens <= 0 || boundary_tokens > num_tokens) return;
  if (boundary_tokens % block_size_ == 0) return;
  auto it = req_to_blocks_.find(request.request_id);
  const int block_idx = boundary_tokens / block_size_;
  if (it == req_to_blocks_.end() || block_idx >= static_cast<int>(it->second.size())) return;
  pool_.cache_partial_block(request.block_hashes, it->second[static_cast<std::size_t>(block_idx)], boundary_tokens,
                            group_id_);
}

int CircularBufferManager::get_num_blocks_to_allocate(ReqId id, int, std::span<const int>, int, int, int, bool, int) {
  return blocks(id).empty() ? 1 : 0;  // :1203-1214
}

void CircularBufferManager::allocate_new_blocks(ReqId id, int, int, std::vector<int>& out) {
  std::vector<int>& req_blocks = req_to_blocks_[id];  // :1191-1201 _claim_ring_block
  if (!req_blocks.empty()) return;
  pool_.get_new_blocks(1, req_blocks);
  out.push_back(req_blocks.back());
}

int CircularBufferManager::find_longest_cache_hit(std::span<const std::uint64_t>, int, std::span<const int>, int,
                                                  GroupBlocks&) const {
  return 0;
}

}  // namespace mlasim
