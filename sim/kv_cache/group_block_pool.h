// The block pool of several KV cache groups (vllm/v1/core/block_pool.py): one BlockPool (sim/block_pool.h)
// keeps the ref counts and the free queue; this layer keeps vLLM's prefix-cache map keyed by
// (block hash, group id) (BlockHashWithGroupId, kv_cache_utils.py:60-80), a block's primary hash and
// the number of tokens it covers, and the extra entries of a block that already has one
// (cached_block_hashes_by_block, block_pool.py:185-186). The BlockPool sees a block as cached exactly
// while vLLM's block.block_hash is set, so its free order (unhashed blocks first) is vLLM's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/block_pool.h"

namespace mlasim {

struct BlockHashKey {
  std::uint64_t hash = 0;
  int group = -1;
  bool operator==(const BlockHashKey&) const = default;
};

struct BlockHashKeyHash {
  std::size_t operator()(const BlockHashKey& k) const {
    return static_cast<std::size_t>(k.hash ^ (static_cast<std::uint64_t>(k.group) * 0x9E3779B97F4A7C15ULL));
  }
};

inline constexpr int kNullBlock = 0;  // block_pool.py:191: the first block popped, never freed or cached

class GroupBlockPool {
 public:
  GroupBlockPool(int num_gpu_blocks, bool enable_caching, int hash_block_size, bool free_unhashed_first = true);

  BlockPool& pool() { return pool_; }
  const BlockPool& pool() const { return pool_; }
  bool enable_caching() const { return pool_.enable_caching(); }
  int hash_block_size() const { return hash_block_size_; }
  int num_gpu_blocks() const { return pool_.num_gpu_blocks(); }
  int get_num_free_blocks() const { return pool_.get_num_free_blocks(); }
  int ref_cnt(int id) const { return pool_.ref_cnt(id); }

  // block_pool.py:202-228: the first cached block of `block_hash` in every group of `group_ids`
  // (appended to `out`, one per group), or false when a group misses.
  bool get_cached_block(std::uint64_t block_hash, std::span<const int> group_ids, std::vector<int>& out) const;
  // block_pool.py:706-740: n blocks from the free queue's head, their hashes evicted.
  void get_new_blocks(int n, std::vector<int>& out);
  // block_pool.py:789-808 and 810-843: the null block is skipped.
  void touch(std::span<const int> block_ids);
  void free_blocks(std::span<const int> ordered_block_ids);
  // block_pool.py:230-306: caches blocks[num_cached_blocks:num_full_blocks] of a group of
  // `block_size` under the request's hashes viewed at that block size (the hash of the last
  // hash_block_size unit of each block, kv_cache_utils.py:1224-1230); null blocks and blocks the
  // mask leaves out are skipped. A block holding a shorter (partial) entry loses it first.
  void cache_full_blocks(std::span<const std::uint64_t> block_hashes, std::span<const int> blocks, int num_cached_blocks,
                         int num_full_blocks, int block_size, int group, const std::vector<char>* mask = nullptr);
  // block_pool.py:486-603: registers the prefix of `num_tokens` tokens (a multiple of
  // hash_block_size) as an entry of `block`; nullopt for the null block.
  std::optional<BlockHashKey> cache_partial_block(std::span<const std::uint64_t> block_hashes, int block, int num_tokens,
                                                  int group, bool replace_existing_hashes = false);
  // block_pool.py:630-649 (_remove_cached_block_hashes, as _maybe_evict_cached_block): drops every
  // entry of the block; whether it had one.
  bool remove_cached_block_hashes(int block);

  std::optional<BlockHashKey> block_hash(int block) const;
  int block_hash_num_tokens(int block) const { return num_tokens_[static_cast<std::size_t>(block)]; }  // -1: none
  // block_pool.py:812-814 is_block_writable.
  bool is_block_writable(int block) const { return block != kNullBlock && ref_cnt(block) == 1 && !block_hash(block); }

  // BlockPool::audit plus the map <-> blocks agreement.
  void audit() const;

 private:
  void insert_block_hash(const BlockHashKey& key, int block, int num_tokens);
  void set_primary(int block, const BlockHashKey& key, int num_tokens);
  void clear_primary(int block);
  bool map_contains(const BlockHashKey& key, int block) const;
  bool map_pop(const BlockHashKey& key, int block);

  BlockPool pool_;
  int hash_block_size_;
  std::vector<BlockHashKey> primary_;  // per block; group -1: none
  std::vector<int> num_tokens_;        // per block; -1 with no primary hash
  std::unordered_map<int, std::vector<BlockHashKey>> extra_;  // block -> its entries past the primary
  // key -> its blocks in insertion order (vLLM's dict of dicts; the first is returned).
  std::unordered_map<BlockHashKey, std::vector<int>, BlockHashKeyHash> cached_;
  std::vector<int> freed_;  // scratch
};

}  // namespace mlasim
