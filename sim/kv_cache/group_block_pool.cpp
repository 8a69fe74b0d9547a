// The block pool of several KV cache groups: group-keyed prefix-cache entries over a BlockPool.
#include "sim/kv_cache/group_block_pool.h"

#include <algorithm>
#include <string>

#include "base/check.h"

namespace mlasim {

namespace {

// The BlockPool's own hash of a block holding a primary entry: distinct per block and never 0, so
// the BlockPool's map holds one block per value (its free order only asks whether a block has one).
std::uint64_t marker(int block) { return (static_cast<std::uint64_t>(block) << 1) | 1ULL; }

}  // namespace

GroupBlockPool::GroupBlockPool(int num_gpu_blocks, bool enable_caching, int hash_block_size, bool free_unhashed_first)
    : pool_(num_gpu_blocks, enable_caching, free_unhashed_first),
      hash_block_size_(hash_block_size),
      primary_(static_cast<std::size_t>(num_gpu_blocks)),
      num_tokens_(static_cast<std::size_t>(num_gpu_blocks), -1) {
  MLASIM_CHECK(hash_block_size > 0, "hash_block_size must be positive");
}

bool GroupBlockPool::get_cached_block(std::uint64_t block_hash, std::span<const int> group_ids, std::vector<int>& out) const {
  const std::size_t start = out.size();
  for (int g : group_ids) {
    auto it = cached_.find(BlockHashKey{block_hash, g});
    if (it == cached_.end()) {
      out.resize(start);
      return false;
    }
    out.push_back(it->second.front());
  }
  return true;
}

std::optional<BlockHashKey> GroupBlockPool::block_hash(int block) const {
  const BlockHashKey& k = primary_[static_cast<std::size_t>(block)];
  if (k.group < 0) return std::nullopt;
  return k;
}

void GroupBlockPool::set_primary(int block, const BlockHashKey& key, int num_tokens) {
  primary_[static_cast<std::size_t>(block)] = key;
  num_tokens_[static_cast<std::size_t>(block)] = num_tokens;
  pool_.cache_full_block(block, marker(block));
}

void GroupBlockPool::clear_primary(int block) {
  primary_[static_cast<std::size_t>(block)] = BlockHashKey{};
  num_tokens_[static_cast<std::size_t>(block)] = -1;
  pool_.uncache_block(block);
}

bool GroupBlockPool::map_contains(const BlockHashKey& key, int block) const {
  auto it = cached_.find(key);
  return it != cached_.end() && std::find(it->second.begin(), it->second.end(), block) != it->second.end();
}

bool GroupBlockPool::map_pop(const BlockHashKey& key, int block) {
  auto it = cached_.find(key);
  if (it == cached_.end()) return false;
  auto pos = std::find(it->second.begin(), it->second.end(), block);
  if (pos == it->second.end()) return false;
  it->second.erase(pos);
  if (it->second.empty()) cached_.erase(it);
  return true;
}

bool GroupBlockPool::remove_cached_block_hashes(int block) {
  std::vector<BlockHashKey> keys;
  if (auto p = block_hash(block)) keys.push_back(*p);
  if (auto it = extra_.find(block); it != extra_.end()) {
    keys.insert(keys.end(), it->second.begin(), it->second.end());
    extra_.erase(it);
  }
  if (keys.empty()) return false;
  bool removed = false;
  for (const BlockHashKey& k : keys) removed = map_pop(k, block) || removed;
  if (block_hash(block)) clear_primary(block);  // block.reset_hash()
  return removed;
}

void GroupBlockPool::insert_block_hash(const BlockHashKey& key, int block, int num_tokens) {
  // block_pool.py:666-686.
  if (block_hash(block) == key) return;
  if (map_contains(key, block)) return;
  if (!block_hash(block)) {
    set_primary(block, key, num_tokens);
  } else {
    std::vector<BlockHashKey>& extras = extra_[block];
    if (std::find(extras.begin(), extras.end(), key) == extras.end()) extras.push_back(key);
  }
  cached_[key].push_back(block);
}

void GroupBlockPool::get_new_blocks(int n, std::vector<int>& out) {
  const std::size_t start = out.size();
  pool_.get_new_blocks(n, out);  // evicts the BlockPool's marker of each block
  if (!enable_caching()) return;
  for (std::size_t i = start; i < out.size(); ++i) {
    const int id = out[i];
    // _maybe_evict_cached_block (block_pool.py:768-787): every entry of the block goes.
    if (auto p = block_hash(id)) {
      map_pop(*p, id);
      primary_[static_cast<std::size_t>(id)] = BlockHashKey{};
      num_tokens_[static_cast<std::size_t>(id)] = -1;
    }
    if (auto it = extra_.find(id); it != extra_.end()) {
      for (const BlockHashKey& k : it->second) map_pop(k, id);
      extra_.erase(it);
    }
  }
}

void GroupBlockPool::touch(std::span<const int> block_ids) {
  for (int id : block_ids) {
    if (id == kNullBlock) continue;
    pool_.touch(std::span<const int>(&id, 1));
  }
}

void GroupBlockPool::free_blocks(std::span<const int> ordered_block_ids) {
  freed_.clear();
  for (int id : ordered_block_ids)
    if (id != kNullBlock) freed_.push_back(id);
  pool_.free_blocks_in_order(freed_);
}

void GroupBlockPool::cache_full_blocks(std::span<const std::uint64_t> block_hashes, std::span<const int> blocks,
                                       int num_cached_blocks, int num_full_blocks, int block_size, int group,
                                       const std::vector<char>* mask) {
  if (num_cached_blocks >= num_full_blocks) return;
  MLASIM_CHECK(block_size % hash_block_size_ == 0, "a group's block size must be a multiple of hash_block_size");
  const int scale = block_size / hash_block_size_;
  for (int i = num_cached_blocks; i < num_full_blocks; ++i) {
    const int blk = blocks[static_cast<std::size_t>(i)];
    if (blk == kNullBlock || (mask && !(*mask)[static_cast<std::size_t>(i - num_cached_blocks)])) continue;
    const std::size_t hash_index = static_cast<std::size_t>(i + 1) * static_cast<std::size_t>(scale) - 1;
    MLASIM_CHECK(hash_index < block_hashes.size(), "caching a block that is not hashed yet");
    const int num_hash_tokens = (i + 1) * block_size;
    const BlockHashKey key{block_hashes[hash_index], group};
    if (block_hash(blk)) {
      // block_pool.py:290-298: a shorter partial entry is replaced by the full block's.
      MLASIM_CHECK(block_hash_num_tokens(blk) < num_hash_tokens, "block " + std::to_string(blk) + " is already cached");
      remove_cached_block_hashes(blk);
    }
    insert_block_hash(key, blk, num_hash_tokens);
  }
}

std::optional<BlockHashKey> GroupBlockPool::cache_partial_block(std::span<const std::uint64_t> block_hashes, int block,
                                                                int num_tokens, int group, bool replace_existing_hashes) {
  if (block == kNullBlock) return std::nullopt;
  MLASIM_CHECK(num_tokens % hash_block_size_ == 0, "a partial entry ends on a hash block boundary");
  const int num_hash_blocks = num_tokens / hash_block_size_;
  MLASIM_CHECK(num_hash_blocks > 0 && num_hash_blocks <= static_cast<int>(block_hashes.size()),
               "a partial entry past the request's hashes");
  const BlockHashKey key{block_hashes[static_cast<std::size_t>(num_hash_blocks - 1)], group};
  const bool already_cached = block_hash(block) == key || map_contains(key, block);
  if (replace_existing_hashes) {
    remove_cached_block_hashes(block);
  } else if (!already_cached && block_hash(block) && block_hash_num_tokens(block) < num_hash_blocks * hash_block_size_) {
    remove_cached_block_hashes(block);
  }
  insert_block_hash(key, block, num_hash_blocks * hash_block_size_);
  return key;
}

void GroupBlockPool::audit() const {
  pool_.audit();
  std::size_t entries = 0;
  for (const auto& [key, ids] : cached_) {
    MLASIM_CHECK(!ids.empty(), "an empty prefix-cache entry");
    for (int id : ids) {
      const bool primary = block_hash(id) == key;
      const auto it = extra_.find(id);
      const bool extra = it != extra_.end() && std::find(it->second.begin(), it->second.end(), key) != it->second.end();
      MLASIM_CHECK(primary != extra, "a prefix-cache entry is not its block's primary or extra hash exactly once");
      ++entries;
    }
  }
  std::size_t owned = 0;
  for (int id = 1; id < num_gpu_blocks(); ++id) {
    MLASIM_CHECK(block_hash(id).has_value() == pool_.has_hash(id), "the pool's cached flag disagrees with the block's hash");
    owned += block_hash(id) ? 1 : 0;
  }
  for (const auto& [id, keys] : extra_) {
    MLASIM_CHECK(block_hash(id).has_value() && !keys.empty(), "extra hashes on a block without a primary hash");
    owned += keys.size();
  }
  MLASIM_CHECK(owned == entries, "prefix-cache entries and block hashes disagree");
}

}  // namespace mlasim
