// KV cache manager: prefix hits, slot allocation, freeing.
#include "sim/kv_cache_manager.h"

#include <algorithm>

#include "base/check.h"
#include "sim/vllm_cannot_run.h"

namespace mlasim {

KVCacheManager::KVCacheManager(int num_gpu_blocks, int block_size, bool enable_caching, int max_model_len,
                               bool free_unhashed_first, KVCacheManager* donor)
    : block_size_(block_size),
      max_model_len_(max_model_len),
      pool_(donor ? BlockPool(num_gpu_blocks, enable_caching, free_unhashed_first, donor->pool_)
                  : BlockPool(num_gpu_blocks, enable_caching, free_unhashed_first)) {
  MLASIM_CHECK(block_size > 0, "block_size must be positive");
  MLASIM_CHECK(max_model_len > 0, "max_model_len must be positive");
}

int KVCacheManager::get_computed_blocks(const Request& request, std::vector<int>& blocks) const {
  blocks.clear();
  if (!pool_.enable_caching()) return 0;
  // "The last token must be recomputed to get logits."
  const int max_num_blocks = (request.num_tokens() - 1) / block_size_;
  const int n = std::min(max_num_blocks, static_cast<int>(request.block_hashes.size()));
  for (int i = 0; i < n; ++i) {
    const int id = pool_.get_cached_block(request.block_hashes[static_cast<std::size_t>(i)]);
    if (id < 0) break;
    blocks.push_back(id);
  }
  if (drop_last_hit_block_ && !blocks.empty()) blocks.pop_back();
  return static_cast<int>(blocks.size()) * block_size_;
}

bool KVCacheManager::allocate_new_slots(Request& request, int num_new_tokens, int num_lookahead_tokens,
                                        std::span<const int> new_computed_blocks, int num_new_computed_tokens,
                                        bool full_sequence_must_fit) {
  MLASIM_CHECK(num_new_tokens > 0, "allocate_slots needs num_new_tokens > 0");
  MLASIM_CHECK(new_computed_blocks.empty() || request.block_ids.empty(),
               "prefix-cache hits are only added to an empty block table");
  const int num_computed_tokens = request.num_computed_tokens + num_new_computed_tokens;
  const int num_held = static_cast<int>(new_computed_blocks.size()) + static_cast<int>(request.block_ids.size());
  int num_evictable_computed = 0;
  for (int id : new_computed_blocks) num_evictable_computed += pool_.ref_cnt(id) == 0 ? 1 : 0;
  auto blocks_to_allocate = [&](int num_tokens) {
    const int num_required_blocks = (num_tokens + block_size_ - 1) / block_size_;
    return std::max(0, num_required_blocks - num_held) + num_evictable_computed;
  };
  if (full_sequence_must_fit &&
      blocks_to_allocate(std::min(request.num_tokens(), max_model_len_)) > pool_.get_num_free_blocks())
    return false;
  const int num_required =
      blocks_to_allocate(std::min(num_computed_tokens + num_new_tokens + num_lookahead_tokens, max_model_len_));
  if (num_required > pool_.get_num_free_blocks()) return false;
  const int num_new_blocks = num_required - num_evictable_computed;

  if (!new_computed_blocks.empty()) {
    pool_.touch(new_computed_blocks);
    request.block_ids.assign(new_computed_blocks.begin(), new_computed_blocks.end());
    request.num_cached_blocks = static_cast<int>(new_computed_blocks.size());
  }
  if (num_new_blocks > 0) pool_.get_new_blocks(num_new_blocks, request.block_ids);  // most decode steps need none
  if (cache_count_counts_untrimmed_drafts_)
    cache_blocks_0_8(request, num_computed_tokens + num_new_tokens - static_cast<int>(request.spec_token_ids.size()));
  else
    cache_blocks(request, std::min(num_computed_tokens + num_new_tokens, request.num_tokens()));
  return true;
}

namespace {

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// A Python slice bound i of a sequence of length n.
int slice_bound(int i, int n) { return i < 0 ? std::max(0, n + i) : std::min(i, n); }

[[noreturn]] void vllm_0_8_raises(const Request& r, const std::string& what) {
  throw VllmCannotRun(0, "vLLM 0.8's KV cache manager " + what +
                             ": with drafts, allocate_slots counts the untrimmed drafts when it records the cached "
                             "blocks (v1/core/kv_cache_manager.py:279-293 in 0.8.5), which a step scheduling fewer "
                             "than 1 + drafts tokens lowers",
                      r.request_id);
}

}  // namespace

void KVCacheManager::cache_blocks_0_8(Request& request, int num_tokens_to_cache) {
  if (!pool_.enable_caching()) return;
  const int num_cached = request.num_cached_blocks;  // the recorded count, possibly negative
  const int num_full = floor_div(num_tokens_to_cache, block_size_);
  request.num_cached_blocks = num_full;
  if (num_cached == num_full) return;  // block_pool.py:105-106
  const int n = static_cast<int>(request.block_ids.size());
  const int num_hashes = static_cast<int>(request.block_hashes.size());
  if (num_hashes < num_cached) vllm_0_8_raises(request, "raises AssertionError at block_pool.py:108");
  if (num_cached != 0) {  // block_pool.py:114-116: the block before the new ones must be cached
    const int prev = num_cached - 1;
    if (prev < -n || prev >= n) vllm_0_8_raises(request, "raises IndexError at block_pool.py:115");
    if (!pool_.has_hash(request.block_ids[static_cast<std::size_t>(prev < 0 ? n + prev : prev)]))
      vllm_0_8_raises(request, "raises AssertionError at block_pool.py:116");
  }
  const int first = slice_bound(num_cached, n), last = slice_bound(num_full, n);
  const int first_hash = slice_bound(num_cached, num_hashes);  // new_block_hashes = block_hashes[num_cached:]
  for (int i = first; i < last; ++i) {
    const int id = request.block_ids[static_cast<std::size_t>(i)];
    if (pool_.has_hash(id))
      vllm_0_8_raises(request, "raises AssertionError at block_pool.py:120 (a cached block cached again)");
    const int h = first_hash + (i - first);
    if (h != i || h >= num_hashes)
      vllm_0_8_raises(request, "would cache block " + std::to_string(i) + " under the hash of another position");
    pool_.cache_full_block(id, request.block_hashes[static_cast<std::size_t>(h)]);
  }
}

void KVCacheManager::cache_full_blocks(Request& request, int num_full_blocks) {
  MLASIM_CHECK(static_cast<int>(request.block_ids.size()) >= num_full_blocks, "caching blocks the request does not hold");
  for (int i = request.num_cached_blocks; i < num_full_blocks; ++i) {
    pool_.cache_full_block(request.block_ids[static_cast<std::size_t>(i)], request.block_hashes[static_cast<std::size_t>(i)]);
  }
  request.num_cached_blocks = num_full_blocks;
}

void KVCacheManager::free(Request& request) {
  if (pool_.enable_caching() || !free_in_order_without_caching_)
    std::reverse(request.block_ids.begin(), request.block_ids.end());
  pool_.free_blocks_in_order(request.block_ids);
  request.block_ids.clear();
  request.num_cached_blocks = 0;
}

int KVCacheManager::get_num_common_prefix_blocks(const Request& request, int num_running_requests) const {
  int n = 0;
  for (int id : request.block_ids) {
    if (pool_.ref_cnt(id) != num_running_requests) break;
    ++n;
  }
  return n;
}

}  // namespace mlasim
