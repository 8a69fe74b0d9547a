// The Mamba manager in modes "none" and "align".
#include "sim/kv_cache/mamba_manager.h"

#include <algorithm>

#include "base/check.h"

namespace mlasim {

using kv::cdiv;
using kv::floor_div;

int mamba_prefill_checkpoint_position(int num_tokens, int hash_block_size, int num_hash_lookahead_tokens) {
  // Without EAGLE's drop: leave the last token (or the lookahead hash's) for logits.
  const int proof_limit = num_tokens - std::max(1, num_hash_lookahead_tokens);
  return std::max(floor_div(proof_limit, hash_block_size) * hash_block_size, 0);
}

bool mamba_prefill_checkpoint_valid(int query_start, int query_end, int checkpoint_position, int hash_block_size,
                                    int mamba_block_size, int checkpoint_alignment) {
  if (checkpoint_alignment <= 0) return false;  // None
  const int initial_state_col = floor_div(query_start - 1, mamba_block_size);
  const int checkpoint_col = cdiv(query_end, mamba_block_size) - 2;
  return query_start % hash_block_size == 0 && checkpoint_col > initial_state_col &&
         query_start + hash_block_size <= checkpoint_position && query_start < checkpoint_position &&
         checkpoint_position < query_end && (checkpoint_position - query_start) % checkpoint_alignment == 0;
}

MambaManager::MambaManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching, int group_id,
                           int scheduler_block_size, int num_hash_lookahead_tokens)
    : SingleTypeKVCacheManager(spec, pool, enable_caching, group_id, scheduler_block_size),
      align_(spec.mamba_cache_mode == "align"),
      num_speculative_blocks_(spec.num_speculative_blocks),
      has_prefill_checkpoint_blocks_(align_ && spec.num_prefill_checkpoint_blocks > 0),
      num_hash_lookahead_tokens_(num_hash_lookahead_tokens) {
  MLASIM_CHECK(align_ || !enable_caching, "Mamba prefix caching requires mamba_cache_mode='align'");
}

int MambaManager::find_longest_cache_hit(std::span<const std::uint64_t> block_hashes, int max_length,
                                         std::span<const int> group_ids, int alignment_tokens, GroupBlocks& out) const {
  MLASIM_CHECK(alignment_tokens >= block_size_, "fine-grained prefix-cache hits are not modelled");
  const int max_num_blocks = std::min(max_length / block_size_, num_hashed_blocks(block_hashes));
  std::vector<int> cached;
  for (int i = max_num_blocks - 1; i >= 0; --i) {
    cached.clear();
    if (!pool_.get_cached_block(block_hash_at(block_hashes, i), group_ids, cached)) continue;
    if (block_size_ != alignment_tokens && ((i + 1) * block_size_) % alignment_tokens != 0) continue;
    for (std::size_t g = 0; g < group_ids.size(); ++g) {  // nulls, then the state block
      out[g].insert(out[g].end(), static_cast<std::size_t>(i), kNullBlock);
      out[g].push_back(cached[g]);
    }
    return (i + 1) * block_size_;
  }
  return 0;
}

bool MambaManager::needs_internal_checkpoint(ReqId id, int query_start, int query_end, int checkpoint_position,
                                             int prefill_end) const {
  // :1659-1690.
  const int checkpoint_idx = cdiv(query_end, block_size_) - 2;
  const std::span<const int> req_blocks = blocks(id);
  const int n = static_cast<int>(req_blocks.size());
  return has_prefill_checkpoint_blocks_ && query_end >= prefill_end &&
         mamba_prefill_checkpoint_valid(query_start, query_end, checkpoint_position, pool_.hash_block_size(), block_size_,
                                        spec_.prefill_checkpoint_alignment) &&
         checkpoint_idx >= 0 &&
         (checkpoint_idx >= n || req_blocks[static_cast<std::size_t>(checkpoint_idx)] == kNullBlock ||
          (allocated_block_reqs_.contains(id) && checkpoint_idx >= n - num_speculative_blocks_));
}

int MambaManager::get_num_blocks_to_allocate(ReqId id, int num_tokens, std::span<const int> new_computed_blocks,
                                             int total_computed_tokens, int num_local_computed_tokens,
                                             int num_tokens_main_model, bool apply_admission_cap, int prefill_end) {
  // :1703-1712: a hit on a state another request cached this step waits for the next step.
  if (!new_computed_blocks.empty()) {
    if (auto h = pool_.block_hash(new_computed_blocks.back());
        h && cached_blocks_this_step_.contains({h->hash, h->group}))
      return pool_.num_gpu_blocks() + 1;
  }
  if (align())
    return get_num_blocks_to_allocate_align(id, new_computed_blocks, total_computed_tokens, num_tokens_main_model,
                                            apply_admission_cap, prefill_end);
  // :1713-1726: mode "none" reserves num_speculative_blocks more state blocks.
  return SingleTypeKVCacheManager::get_num_blocks_to_allocate(
      id, num_tokens + block_size_ * num_speculative_blocks_, new_computed_blocks, total_computed_tokens,
      num_local_computed_tokens, num_tokens_main_model, apply_admission_cap, prefill_end);
}

int MambaManager::get_num_blocks_to_allocate_align(ReqId id, std::span<const int> new_computed_blocks,
                                                   int total_computed_tokens, int num_tokens_main_model,
                                                   bool apply_admission_cap, int prefill_end) {
  // :1727-1795; lookahead slots are not allocated in align mode (drafters have no Mamba layers).
  const int num_tokens = num_tokens_main_model;
  const int num_required_blocks = cdiv(num_tokens, block_size_) + num_speculative_blocks_;
  int num_new_blocks =
      num_required_blocks - static_cast<int>(new_computed_blocks.size()) - static_cast<int>(blocks(id).size());
  int checkpoint_position =
      mamba_prefill_checkpoint_position(num_tokens, cache_hit_alignment_tokens_, num_hash_lookahead_tokens_);
  if (!needs_internal_checkpoint(id, total_computed_tokens, num_tokens, checkpoint_position, prefill_end))
    checkpoint_position = 0;
  const int checkpoint_block = checkpoint_position > 0 ? 1 : 0;
  if (!apply_admission_cap) {
    if (checkpoint_position > 0) checkpoints_[id] = {checkpoint_position, cdiv(num_tokens, block_size_) - 2};
    else checkpoints_.erase(id);
  }
  if (num_new_blocks > 0) {
    int physical_block_cap = 1 + checkpoint_block;
    if (!allocated_block_reqs_.contains(id)) physical_block_cap += num_speculative_blocks_;
    num_new_blocks = std::min(num_new_blocks, physical_block_cap);
  }
  return num_new_blocks + count_evictable(new_computed_blocks);
}

void MambaManager::allocate_new_blocks(ReqId id, int num_tokens, int num_tokens_main_model, std::vector<int>& out) {
  if (align()) {
    allocate_new_blocks_align(id, num_tokens_main_model, out);
    return;
  }
  SingleTypeKVCacheManager::allocate_new_blocks(id, num_tokens + block_size_ * num_speculative_blocks_,
                                                num_tokens_main_model, out);
}

void MambaManager::allocate_new_blocks_align(ReqId id, int num_tokens_main_model, std::vector<int>& out) {
  // :1809-1923.
  std::vector<int>& req_blocks = req_to_blocks_[id];
  const int num_required_blocks = cdiv(num_tokens_main_model, block_size_) + num_speculative_blocks_;
  const int checkpoint_block = checkpoints_.contains(id) ? 1 : 0;
  if (num_required_blocks <= static_cast<int>(req_blocks.size()) && !checkpoint_block) {
    allocated_block_reqs_.insert(id);
    return;
  }
  const int prev_block_len = static_cast<int>(req_blocks.size());
  const bool blocks_allocated = allocated_block_reqs_.contains(id);
  // The running state lives in the last (1 + num_speculative_blocks) blocks; a fresh hit's state
  // in its last block.
  if (blocks_allocated) last_state_block_idx_[id] = prev_block_len - 1 - num_speculative_blocks_;
  else if (prev_block_len > 0) last_state_block_idx_[id] = prev_block_len - 1;
  const int num_skipped_blocks = num_required_blocks - num_speculative_blocks_ - 1;
  if (prev_block_len < num_skipped_blocks) {
    const int null_end = num_skipped_blocks - checkpoint_block;
    for (int i = prev_block_len; i < null_end; ++i) req_blocks.push_back(kNullBlock);
  }
  if (blocks_allocated) {
    // :1863-1873: scratch speculative blocks the step leaves behind move to the end.
    for (int idx = prev_block_len - num_speculative_blocks_; idx < prev_block_len; ++idx) {
      if (idx >= num_skipped_blocks - checkpoint_block) break;
      const int block = req_blocks[static_cast<std::size_t>(idx)];
      MLASIM_CHECK(pool_.is_block_writable(block), "a speculative Mamba block to relocate is shared or cached");
      req_blocks.push_back(block);
      req_blocks[static_cast<std::size_t>(idx)] = kNullBlock;
    }
  }
  const int num_new_blocks = std::max(num_required_blocks - static_cast<int>(req_blocks.size()), 0);
  const int max_new_blocks = 1 + checkpoint_block + (blocks_allocated ? 0 : num_speculative_blocks_);
  MLASIM_CHECK(num_new_blocks <= max_new_blocks, "Mamba align mode allocates more blocks than a step may");
  out.insert(out.end(), req_blocks.begin() + prev_block_len, req_blocks.end());
  const std::size_t before = req_blocks.size();
  pool_.get_new_blocks(num_new_blocks, req_blocks);
  out.insert(out.end(), req_blocks.begin() + static_cast<std::ptrdiff_t>(before), req_blocks.end());
  allocated_block_reqs_.insert(id);
}

void MambaManager::remove_blocks_in_range(ReqId id, int first_block, int last_block) {
  if (!align()) {
    SingleTypeKVCacheManager::remove_blocks_in_range(id, first_block, last_block);
    return;
  }
  // :1608-1627: nulls between states are stepped over, and the retired prefix is remembered.
  auto it = req_to_blocks_.find(id);
  const int n = it == req_to_blocks_.end() ? 0 : static_cast<int>(it->second.size());
  auto retired = num_retired_blocks_.find(id);
  first_block = std::max(first_block, retired == num_retired_blocks_.end() ? 0 : retired->second);
  last_block = std::min(last_block, n);
  if (first_block >= last_block) return;
  std::vector<int> freed;
  for (int i = last_block - 1; i >= first_block; --i) {
    int& b = it->second[static_cast<std::size_t>(i)];
    if (b == kNullBlock) continue;
    freed.push_back(b);
    b = kNullBlock;
  }
  if (!freed.empty()) pool_.free_blocks(freed);
  num_retired_blocks_[id] = last_block;
}

void MambaManager::remove_skipped_blocks(ReqId id, int processed_computed_tokens) {
  SingleTypeKVCacheManager::remove_skipped_blocks(id, processed_computed_tokens);
  if (!align()) return;
  // :1640-1657: the state block two steps back has been copied on and is freed.
  auto it = last_state_block_idx_.find(id);
  if (it == last_state_block_idx_.end() || it->second >= cdiv(processed_computed_tokens, block_size_) - 1) return;
  int& b = req_to_blocks_[id][static_cast<std::size_t>(it->second)];
  if (b == kNullBlock) return;
  const int freed = b;
  pool_.free_blocks(std::span<const int>(&freed, 1));
  b = kNullBlock;
}

bool MambaManager::reachable_block_mask(int start_block, int end_block, std::span<const int> boundaries,
                                        std::vector<char>& mask) const {
  if (retention_interval_ == kDenseRetention) return false;
  mask.assign(static_cast<std::size_t>(end_block - start_block), 0);
  if (retention_interval_ > 0) {  // (1) one state per interval: block i ends at (i + 1) * block_size
    const int per_segment = retention_interval_ / block_size_;
    if (per_segment <= 1) return false;
    const int first_boundary = (start_block + per_segment) / per_segment * per_segment - 1;
    for (int i = first_boundary - start_block; i < static_cast<int>(mask.size()); i += per_segment)
      mask[static_cast<std::size_t>(i)] = 1;
  }
  for (int boundary : boundaries) {  // (2) the state block ending on each reachable boundary
    const int aligned = kv::floor_div(boundary, cache_hit_alignment_tokens_) * cache_hit_alignment_tokens_;
    const int block = aligned / block_size_ - 1;
    if (start_block <= block && block < end_block) mask[static_cast<std::size_t>(block - start_block)] = 1;
  }
  return true;
}

void MambaManager::pop_blocks_for_free(ReqId id, std::vector<int>& out) {
  if (align()) {
    allocated_block_reqs_.erase(id);
    last_state_block_idx_.erase(id);
    num_retired_blocks_.erase(id);
    checkpoints_.erase(id);
  }
  SingleTypeKVCacheManager::pop_blocks_for_free(id, out);
}

void MambaManager::cache_blocks(const Request& request, int num_tokens) {
  // :1978-2023.
  auto cached_count = [&] {
    auto it = num_cached_block_.find(request.request_id);
    return it == num_cached_block_.end() ? 0 : it->second;
  };
  const int before = cached_count();
  SingleTypeKVCacheManager::cache_blocks(request, num_tokens);
  const int after = cached_count();
  if (align())
    if (auto key = cache_partial_tail_block(request, num_tokens)) cached_blocks_this_step_.insert({key->hash, key->group});
  if (after <= before) return;
  const std::vector<int>& req_blocks = req_to_blocks_[request.request_id];
  for (int idx = before; idx < after; ++idx) {
    const int block = req_blocks[static_cast<std::size_t>(idx)];
    if (block == kNullBlock) continue;
    if (auto h = pool_.block_hash(block)) cached_blocks_this_step_.insert({h->hash, h->group});
  }
}

std::optional<BlockHashKey> MambaManager::cache_partial_tail_block(const Request& request, int num_tokens) {
  // :2028-2135 with dense retention and no shared-prefix checkpoints.
  const int hash_block_size = pool_.hash_block_size();
  if (auto cp = checkpoints_.find(request.request_id); cp != checkpoints_.end()) {
    const auto [position, idx] = cp->second;
    const std::vector<int>& req_blocks = req_to_blocks_[request.request_id];
    MLASIM_CHECK(idx >= 0 && idx < static_cast<int>(req_blocks.size()), "a Mamba checkpoint outside the block table");
    const int block = req_blocks[static_cast<std::size_t>(idx)];
    // :2047-2069: a checkpoint that is neither the prompt's, nor retained (a whole slot the mask
    // keeps without boundaries), nor the shared prefix's is dropped.
    const bool is_prompt_checkpoint =
        position == mamba_prefill_checkpoint_position(request.num_prompt_tokens, cache_hit_alignment_tokens_,
                                                      num_hash_lookahead_tokens_);
    bool is_retained_checkpoint = false;
    if (position % block_size_ == 0) {
      const int slot = position / block_size_ - 1;
      std::vector<char> retained;
      is_retained_checkpoint = !reachable_block_mask(slot, slot + 1, {}, retained) || retained[0];
    }
    if (!is_prompt_checkpoint && !is_retained_checkpoint && position != request.shared_prefix_boundary) {
      pool_.remove_cached_block_hashes(block);
      return std::nullopt;
    }
    if (pool_.block_hash_num_tokens(block) == position) return std::nullopt;
    return pool_.cache_partial_block(request.block_hashes, block, position, group_id_, /*replace_existing_hashes=*/true);
  }
  if (num_tokens <= 0 || num_tokens % hash_block_size != 0) return std::nullopt;
  if (num_tokens != mamba_prefill_checkpoint_position(request.num_prompt_tokens, hash_block_size, num_hash_lookahead_tokens_))
    return std::nullopt;
  const int block_idx = cdiv(num_tokens, block_size_) - 1;
  auto it = req_to_blocks_.find(request.request_id);
  if (it == req_to_blocks_.end() || block_idx >= static_cast<int>(it->second.size())) return std::nullopt;
  const int source = it->second[static_cast<std::size_t>(block_idx)];
  if (source == kNullBlock || pool_.block_hash_num_tokens(source) == num_tokens) return std::nullopt;
  // A boundary inside the block would need fine-grained hashes (hash_block_size < block_size).
  MLASIM_CHECK(num_tokens % block_size_ == 0, "a Mamba partial tail inside a block");
  return pool_.cache_partial_block(request.block_hashes, source, num_tokens, group_id_);
}

}  // namespace mlasim
