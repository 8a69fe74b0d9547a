// The KV block pool (vllm/v1/core/block_pool.py): ref counts, an LRU free queue (intrusive
// doubly linked list, O(1) removal from the middle), and the prefix-cache map hash -> block.
// Block 0 is the reserved null block; usable = num_gpu_blocks - 1.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/flat_index_map.h"

namespace mlasim {

class BlockPool {
 public:
  // free_unhashed_first: vLLM 0.33's free order (blocks without a hash, or every block with caching
  // off, go to the queue's front); false: every freed block goes to the back (vLLM <= 0.11).
  BlockPool(int num_gpu_blocks, bool enable_caching, bool free_unhashed_first = true);
  // The same pool in the storage of `donor`, a pool about to be dropped (base/recycled_storage.h).
  BlockPool(int num_gpu_blocks, bool enable_caching, bool free_unhashed_first, BlockPool& donor);

  int num_gpu_blocks() const { return num_gpu_blocks_; }
  int num_usable_blocks() const { return num_gpu_blocks_ - 1; }
  int get_num_free_blocks() const { return num_free_; }
  int num_used_blocks() const { return num_used_; }  // blocks with ref_cnt > 0
  bool enable_caching() const { return enable_caching_; }

  // The cached block with this hash (the earliest cached of duplicates), or -1.
  int get_cached_block(std::uint64_t block_hash) const;
  // Pops n blocks from the head of the free queue (evicting their hashes), ref_cnt = 1, and
  // appends their ids to `out`. The caller has checked n <= get_num_free_blocks().
  void get_new_blocks(int n, std::vector<int>& out);
  // Re-references prefix-cache hits; blocks with ref_cnt 0 leave the free queue.
  void touch(std::span<const int> block_ids);
  // Drops one reference of each block in the given order (the first is evicted first). Blocks
  // reaching 0 keep their hash; with free_unhashed_first (v1/core/block_pool.py ~816-847) those
  // without a hash, or all with caching off, are put at the queue's front in that order (LIFO
  // reuse) and hashed ones appended to its tail (LRU); otherwise all are appended.
  void free_blocks_in_order(std::span<const int> block_ids);
  // Records a full block's hash in the prefix cache.
  void cache_full_block(int block_id, std::uint64_t block_hash);
  // Drops the block's prefix-cache entry, if it has one; the block stays where it is (referenced or
  // in the free queue). For the KV cache groups' pool (sim/kv_cache/group_block_pool.h), whose
  // blocks lose their hashes while referenced (v1/core/block_pool.py _remove_cached_block_hashes).
  void uncache_block(int block_id) { evict_cached_block(block_id); }

  int ref_cnt(int block_id) const { return blocks_[static_cast<std::size_t>(block_id)].ref_cnt; }
  bool has_hash(int block_id) const { return hashes_[static_cast<std::size_t>(block_id)] != 0; }
  std::uint64_t block_hash(int block_id) const { return hashes_[static_cast<std::size_t>(block_id)]; }
  bool in_free_queue(int block_id) const;
  // The free queue, head (next to be allocated) first. O(free); for tests and audits.
  std::vector<int> free_queue() const;
  // Full consistency audit (O(num_gpu_blocks)): queue links, counters, map <-> hashes.
  void audit() const;

  // The incremental audit. With tracking on, every block whose ref count, free-queue links or
  // prefix-cache entry changes is noted (with its state before) the first time it changes after
  // the last audit_changes(). audit_changes() checks each noted block's invariants and its
  // neighbours' links to it, and that the counters moved exactly as the noted blocks did: O(changed
  // blocks), so it can run every step. Turning tracking on takes the current state as audited.
  void track_changes(bool on);
  // The blocks noted since the last audit_changes(), sentinel excluded.
  std::span<const int> changed_blocks() const { return changed_ids_; }
  void audit_changes();

 private:
  friend struct BlockPoolTestAccess;  // tests/sim/test_block_pool.cpp corrupts a pool for the audit
  struct Block {
    int ref_cnt = 0;
    int prev = -1, next = -1;  // free-queue links; -1 when not queued
    // The blocks cached under one hash, earliest first (vLLM's dict of dicts keeps insertion
    // order): next and previous, the first block's dup_prev being the last, so appending and
    // evicting are O(1) however many blocks share the hash. -1 when not cached.
    int dup_next = -1, dup_prev = -1;
  };
  void init_blocks();  // every block free, queued in id order
  void queue_remove(int id);
  void queue_push_back(int id);
  void queue_insert_before(int id, int next);
  int queue_pop_front();
  void evict_cached_block(int id);
  bool is_chain_head(int id) const;
  // Before any field of block `id` changes (tracking on): notes it and its state.
  void note(int id) {
    if (tracking_ && changed_epoch_[static_cast<std::size_t>(id)] != epoch_) note_first_change(id);
  }
  void note_first_change(int id);

  int num_gpu_blocks_;
  bool enable_caching_;
  bool free_unhashed_first_;
  std::vector<Block> blocks_;  // index num_gpu_blocks_ is the queue's sentinel
  std::vector<std::uint64_t> hashes_;  // per block; 0 = not cached (hashes are never 0)
  int sentinel_;
  int num_free_ = 0;
  int num_used_ = 0;
  FlatIndexMap cached_;  // hash -> first block of its duplicate chain
  std::vector<int> freed_;  // scratch of free_blocks_in_order

  // The incremental audit's state: per noted block, its hash and chain links, and whether it was
  // queued, referenced and a chain head before its first change; the counters at the last audit.
  struct Before {
    std::uint64_t hash;
    int id, dup_prev, dup_next;
    bool queued, used, head;
  };
  bool tracking_ = false;
  std::uint32_t epoch_ = 1;
  std::vector<std::uint32_t> changed_epoch_;  // per block (and the sentinel): the epoch it was noted in
  std::vector<Before> changed_;
  std::vector<int> changed_ids_;
  int audited_free_ = 0, audited_used_ = 0;
  std::size_t audited_heads_ = 0;
};

}  // namespace mlasim
