// The KV cache manager of one group: the parts every kind shares
// (vllm/v1/core/single_type_kv_cache_manager.py SingleTypeKVCacheManager).
#include "sim/kv_cache/single_type_manager.h"

#include <algorithm>

#include "base/check.h"

namespace mlasim {

using kv::cdiv;
using kv::floor_div;

SingleTypeKVCacheManager::SingleTypeKVCacheManager(const KvCacheGroup& spec, GroupBlockPool& pool, bool enable_caching,
                                                   int group_id, int scheduler_block_size,
                                                   std::optional<int> max_admission_blocks)
    : spec_(spec),
      pool_(pool),
      enable_caching_(enable_caching),
      group_id_(group_id),
      block_size_(spec.block_size),
      scheduler_block_size_(scheduler_block_size),
      cache_hit_alignment_tokens_(scheduler_block_size),
      max_admission_blocks_(max_admission_blocks) {
  MLASIM_CHECK(block_size_ > 0, "a KV cache group's block_size must be positive");
}

std::span<const int> SingleTypeKVCacheManager::blocks(ReqId id) const {
  auto it = req_to_blocks_.find(id);
  return it == req_to_blocks_.end() ? std::span<const int>() : std::span<const int>(it->second);
}

void SingleTypeKVCacheManager::count_owners(std::vector<int>& owners) const {
  for (const auto& [id, blocks] : req_to_blocks_)
    for (int b : blocks)
      if (b != kNullBlock) ++owners[static_cast<std::size_t>(b)];
}

int SingleTypeKVCacheManager::num_hashed_blocks(std::span<const std::uint64_t> block_hashes) const {
  return static_cast<int>(block_hashes.size()) / (block_size_ / pool_.hash_block_size());
}

std::uint64_t SingleTypeKVCacheManager::block_hash_at(std::span<const std::uint64_t> block_hashes, int block_index) const {
  const int scale = block_size_ / pool_.hash_block_size();
  return block_hashes[static_cast<std::size_t>((block_index + 1) * scale - 1)];
}

int SingleTypeKVCacheManager::count_evictable(std::span<const int> blocks) const {
  // :160-162 _get_num_evictable_blocks: hit blocks sitting in the free queue.
  int n = 0;
  for (int b : blocks) n += b != kNullBlock && pool_.ref_cnt(b) == 0 ? 1 : 0;
  return n;
}

int SingleTypeKVCacheManager::get_num_skipped_tokens(int /*num_computed_tokens*/) const { return 0; }

int SingleTypeKVCacheManager::get_num_blocks_to_allocate(ReqId id, int num_tokens, std::span<const int> new_computed_blocks,
                                                         int total_computed_tokens, int num_local_computed_tokens,
                                                         int /*num_tokens_main_model*/, bool apply_admission_cap,
                                                         int /*prefill_end*/) {
  int num_required_blocks = cdiv(num_tokens, block_size_);
  if (apply_admission_cap && max_admission_blocks_) num_required_blocks = std::min(num_required_blocks, *max_admission_blocks_);
  const int num_req_blocks = static_cast<int>(blocks(id).size());
  if (is_running(id)) {
    MLASIM_CHECK(new_computed_blocks.empty(), "a running request with new prefix-cache hits");
    return std::max(num_required_blocks - num_req_blocks, 0);
  }
  const int num_skipped_blocks = floor_div(get_num_skipped_tokens(total_computed_tokens), block_size_);
  const int num_local_computed_blocks = static_cast<int>(new_computed_blocks.size()) + num_req_blocks;
  const int num_new_blocks = std::max(num_required_blocks - std::max(num_skipped_blocks, num_local_computed_blocks), 0);
  // :247-258: the skipped hit blocks are not touched, so they do not count as evictable.
  const int num_skipped_new = std::max(0, num_skipped_blocks - num_req_blocks);
  const std::size_t from = std::min(static_cast<std::size_t>(num_skipped_new), new_computed_blocks.size());
  // :259-263: a hit ending inside a block (partial hit) needs fine-grained hashes, which these
  // layouts never enable.
  MLASIM_CHECK(new_computed_blocks.empty() || num_local_computed_tokens % block_size_ == 0,
               "a prefix-cache hit ends inside a block");
  return num_new_blocks + count_evictable(new_computed_blocks.subspan(from));
}

void SingleTypeKVCacheManager::add_local_computed_blocks(ReqId id, std::span<const int> new_computed_blocks,
                                                         int num_local_computed_tokens) {
  std::vector<int>& req_blocks = req_to_blocks_[id];
  MLASIM_CHECK(req_blocks.empty(), "prefix-cache hits are only added to an empty block table");
  const int num_skipped_blocks = floor_div(get_num_skipped_tokens(num_local_computed_tokens), block_size_);
  const std::size_t skip = std::min(static_cast<std::size_t>(std::max(num_skipped_blocks, 0)), new_computed_blocks.size());
  const std::span<const int> kept = new_computed_blocks.subspan(skip);
  if (enable_caching_) pool_.touch(kept);
  else MLASIM_CHECK(kept.empty(), "prefix-cache hits with prefix caching off");
  req_blocks.assign(static_cast<std::size_t>(std::max(num_skipped_blocks, 0)), kNullBlock);
  req_blocks.insert(req_blocks.end(), kept.begin(), kept.end());
  num_cached_block_[id] = static_cast<int>(req_blocks.size());
}

void SingleTypeKVCacheManager::allocate_new_blocks(ReqId id, int num_tokens, int /*num_tokens_main_model*/,
                                                   std::vector<int>& out) {
  std::vector<int>& req_blocks = req_to_blocks_[id];
  const int num_new_blocks = cdiv(num_tokens, block_size_) - static_cast<int>(req_blocks.size());
  if (num_new_blocks <= 0) return;
  const std::size_t start = req_blocks.size();
  pool_.get_new_blocks(num_new_blocks, req_blocks);
  out.insert(out.end(), req_blocks.begin() + static_cast<std::ptrdiff_t>(start), req_blocks.end());
}

bool SingleTypeKVCacheManager::reachable_block_mask(int, int, std::span<const int>, std::vector<char>&) const {
  return false;
}

void SingleTypeKVCacheManager::cache_blocks(const Request& request, int num_tokens) {
  if (!prefix_cacheable(spec_)) return;
  const int num_cached_blocks = [&] {
    auto it = num_cached_block_.find(request.request_id);
    return it == num_cached_block_.end() ? 0 : it->second;
  }();
  const int num_hashed_tokens = static_cast<int>(request.block_hashes.size()) * pool_.hash_block_size();
  const int num_full_blocks = std::min(num_tokens, num_hashed_tokens) / block_size_;
  if (num_cached_blocks >= num_full_blocks) return;
  std::vector<int>& req_blocks = req_to_blocks_[request.request_id];
  MLASIM_CHECK(static_cast<int>(req_blocks.size()) >= num_full_blocks, "caching blocks the request does not hold");
  // :506-521: the positions a replaying request resumes at (the prompt's num_tokens - 1 without
  // EAGLE, kv_cache_coordinator.py:65-86) and the shared-prefix junction.
  int boundaries[2] = {request.num_prompt_tokens - 1, request.shared_prefix_boundary};
  const std::size_t num_boundaries = request.shared_prefix_boundary ? 2 : 1;
  std::vector<char> mask;
  const bool masked = reachable_block_mask(num_cached_blocks, num_full_blocks,
                                           std::span<const int>(boundaries, num_boundaries), mask);
  pool_.cache_full_blocks(request.block_hashes, req_blocks, num_cached_blocks, num_full_blocks, block_size_, group_id_,
                          masked ? &mask : nullptr);
  num_cached_block_[request.request_id] = num_full_blocks;
}

void SingleTypeKVCacheManager::pop_blocks_for_free(ReqId id, std::vector<int>& out) {
  auto it = req_to_blocks_.find(id);
  num_cached_block_.erase(id);
  if (it == req_to_blocks_.end()) return;
  // kv_cache_utils.py:227-251 trim_null_head.
  auto first = std::find_if(it->second.begin(), it->second.end(), [](int b) { return b != kNullBlock; });
  out.insert(out.end(), first, it->second.end());
  req_to_blocks_.erase(it);
}

void SingleTypeKVCacheManager::free(ReqId id) {
  std::vector<int> blocks;
  pop_blocks_for_free(id, blocks);
  std::reverse(blocks.begin(), blocks.end());
  pool_.free_blocks(blocks);
}

void SingleTypeKVCacheManager::remove_blocks_in_range(ReqId id, int first_block, int last_block) {
  auto it = req_to_blocks_.find(id);
  if (it == req_to_blocks_.end() || first_block >= last_block) return;
  std::vector<int>& blocks = it->second;
  last_block = std::min(last_block, static_cast<int>(blocks.size()));
  std::vector<int> freed;
  for (int i = last_block - 1; i >= first_block; --i) {
    int& b = blocks[static_cast<std::size_t>(i)];
    if (b == kNullBlock) break;
    freed.push_back(b);
    b = kNullBlock;
  }
  if (!freed.empty()) pool_.free_blocks(freed);
}

void SingleTypeKVCacheManager::remove_skipped_blocks(ReqId id, int processed_computed_tokens) {
  const int num_skipped_tokens = get_num_skipped_tokens(processed_computed_tokens);
  if (num_skipped_tokens <= 0) return;
  const int num_blocks = static_cast<int>(blocks(id).size());
  remove_blocks_in_range(id, 0, std::min(num_skipped_tokens / block_size_, num_blocks));
}

}  // namespace mlasim
