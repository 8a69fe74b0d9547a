// KV block pool: free queue, ref counts, prefix-cache map.
#include "sim/block_pool.h"

#include <algorithm>
#include <string>

#include "base/check.h"
#include "base/recycled_storage.h"

namespace mlasim {

BlockPool::BlockPool(int num_gpu_blocks, bool enable_caching, bool free_unhashed_first)
    : num_gpu_blocks_(num_gpu_blocks),
      enable_caching_(enable_caching),
      free_unhashed_first_(free_unhashed_first),
      sentinel_(num_gpu_blocks),
      // The prefix-cache map grows with the blocks cached, not the pool: sized for the pool, a
      // 2^24-block pool held 1 GiB of empty slots before anything was cached, and clearing even
      // 4096 entries' slots was a tenth of a small fuzz trace's replay.
      cached_(std::min(num_gpu_blocks, 64)) {
  init_blocks();
}

BlockPool::BlockPool(int num_gpu_blocks, bool enable_caching, bool free_unhashed_first, BlockPool& donor)
    : num_gpu_blocks_(num_gpu_blocks),
      enable_caching_(enable_caching),
      free_unhashed_first_(free_unhashed_first),
      sentinel_(num_gpu_blocks),
      cached_(std::min(num_gpu_blocks, 64), donor.cached_) {
  take_capacity(blocks_, donor.blocks_);
  take_capacity(hashes_, donor.hashes_);
  take_capacity(freed_, donor.freed_);
  take_capacity(changed_epoch_, donor.changed_epoch_);
  take_capacity(changed_, donor.changed_);
  take_capacity(changed_ids_, donor.changed_ids_);
  init_blocks();
}

void BlockPool::init_blocks() {
  MLASIM_CHECK(num_gpu_blocks_ >= 2, "need the null block plus at least one usable block");
  const int n = num_gpu_blocks_;
  blocks_.assign(static_cast<std::size_t>(n) + 1, Block{});
  hashes_.assign(static_cast<std::size_t>(n) + 1, 0);
  Block& s = blocks_[static_cast<std::size_t>(sentinel_)];
  // vLLM queues every block, then pops block 0 as the null block; ids are handed out ascending:
  // the queue sentinel <-> 1 <-> 2 ... <-> num_gpu_blocks - 1 <-> sentinel, linked in one pass.
  for (int id = 1; id < n; ++id) {
    Block& b = blocks_[static_cast<std::size_t>(id)];
    b.prev = id == 1 ? sentinel_ : id - 1;
    b.next = id + 1;  // the last block's next is num_gpu_blocks, the sentinel
  }
  s.next = 1;
  s.prev = n - 1;
  num_free_ = n - 1;
}

bool BlockPool::in_free_queue(int block_id) const {
  return blocks_[static_cast<std::size_t>(block_id)].prev != -1;
}

void BlockPool::queue_remove(int id) {
  Block& b = blocks_[static_cast<std::size_t>(id)];
  MLASIM_CHECK(b.prev != -1, "block " + std::to_string(id) + " is not in the free queue");
  note(id);
  note(b.prev);
  note(b.next);
  blocks_[static_cast<std::size_t>(b.prev)].next = b.next;
  blocks_[static_cast<std::size_t>(b.next)].prev = b.prev;
  b.prev = b.next = -1;
  --num_free_;
}

void BlockPool::queue_insert_before(int id, int next) {
  Block& b = blocks_[static_cast<std::size_t>(id)];
  Block& n = blocks_[static_cast<std::size_t>(next)];
  note(id);
  note(next);
  note(n.prev);
  b.prev = n.prev;
  b.next = next;
  blocks_[static_cast<std::size_t>(n.prev)].next = id;
  n.prev = id;
  ++num_free_;
}

void BlockPool::queue_push_back(int id) { queue_insert_before(id, sentinel_); }

int BlockPool::queue_pop_front() {
  const int id = blocks_[static_cast<std::size_t>(sentinel_)].next;
  MLASIM_CHECK(id != sentinel_, "free queue is empty");
  queue_remove(id);
  return id;
}

int BlockPool::get_cached_block(std::uint64_t block_hash) const {
  if (!enable_caching_) return -1;
  return cached_.find(block_hash);
}

void BlockPool::evict_cached_block(int id) {
  std::uint64_t& hash = hashes_[static_cast<std::size_t>(id)];
  if (hash == 0) return;
  Block& b = blocks_[static_cast<std::size_t>(id)];
  note(id);  // and its chain neighbours (the head keeping the chain's last: below)
  note(b.dup_prev);
  if (b.dup_next != -1) note(b.dup_next);
  // The head of its duplicate chain is the one block whose dup_prev (the chain's last) does not
  // point back at it; only the head is in the prefix-cache map, so only it costs a map lookup.
  Block& prev = blocks_[static_cast<std::size_t>(b.dup_prev)];
  if (prev.dup_next != id) {
    if (b.dup_next == -1) {
      MLASIM_CHECK(cached_.erase(hash) == id, "the prefix-cache map does not point at the block it evicts");
    } else {
      blocks_[static_cast<std::size_t>(b.dup_next)].dup_prev = b.dup_prev;  // the last stays the last
      MLASIM_CHECK(cached_.put(hash, b.dup_next) == id, "the prefix-cache map does not point at the block it evicts");
    }
  } else {
    prev.dup_next = b.dup_next;
    if (b.dup_next != -1) {
      blocks_[static_cast<std::size_t>(b.dup_next)].dup_prev = b.dup_prev;
    } else {  // it was the last: the head, found through the map, keeps the new last
      const int first = cached_.find(hash);
      MLASIM_CHECK(first >= 0, "hashed block missing from the prefix-cache map");
      note(first);
      blocks_[static_cast<std::size_t>(first)].dup_prev = b.dup_prev;
    }
  }
  b.dup_prev = -1;
  b.dup_next = -1;
  hash = 0;
}

void BlockPool::get_new_blocks(int n, std::vector<int>& out) {
  MLASIM_CHECK(n <= num_free_, "get_new_blocks: not enough free blocks");
  for (int i = 0; i < n; ++i) {
    const int id = queue_pop_front();
    // The next block to hand out (here or at the next call, a running request's next block) is
    // evicted from the prefix cache then: its map slot and the block after it are fetched now.
    const int next = blocks_[static_cast<std::size_t>(sentinel_)].next;
    if (next != sentinel_) {
      if (const std::uint64_t h = hashes_[static_cast<std::size_t>(next)]; h != 0) cached_.prefetch(h);
      const int after = blocks_[static_cast<std::size_t>(next)].next;
      __builtin_prefetch(&blocks_[static_cast<std::size_t>(after)]);
      __builtin_prefetch(&hashes_[static_cast<std::size_t>(after)]);
    }
    Block& b = blocks_[static_cast<std::size_t>(id)];
    MLASIM_CHECK(b.ref_cnt == 0, "a free block is referenced");
    evict_cached_block(id);
    note(id);
    b.ref_cnt = 1;
    ++num_used_;
    out.push_back(id);
  }
}

void BlockPool::touch(std::span<const int> block_ids) {
  for (int id : block_ids) {
    Block& b = blocks_[static_cast<std::size_t>(id)];
    note(id);
    if (b.ref_cnt == 0) {
      queue_remove(id);
      ++num_used_;
    }
    ++b.ref_cnt;
  }
}

void BlockPool::free_blocks_in_order(std::span<const int> block_ids) {
  freed_.clear();
  for (int id : block_ids) {
    Block& b = blocks_[static_cast<std::size_t>(id)];
    MLASIM_CHECK(id > 0 && b.ref_cnt > 0, "freeing an unreferenced or null block");
    note(id);
    if (--b.ref_cnt != 0) continue;
    --num_used_;
    freed_.push_back(id);
  }
  auto goes_first = [&](int id) { return free_unhashed_first_ && (!enable_caching_ || !has_hash(id)); };
  // prepend_n: the evict-first blocks, in order, before the old head; then append_n the rest.
  const int old_head = blocks_[static_cast<std::size_t>(sentinel_)].next;
  for (int id : freed_)
    if (goes_first(id)) queue_insert_before(id, old_head);
  for (int id : freed_)
    if (!goes_first(id)) queue_push_back(id);
}

void BlockPool::cache_full_block(int block_id, std::uint64_t block_hash) {
  Block& b = blocks_[static_cast<std::size_t>(block_id)];
  MLASIM_CHECK(hashes_[static_cast<std::size_t>(block_id)] == 0, "block " + std::to_string(block_id) + " is already cached");
  MLASIM_CHECK(block_hash != 0, "block hash 0 is reserved");
  note(block_id);
  hashes_[static_cast<std::size_t>(block_id)] = block_hash;
  b.dup_next = -1;
  const int first = cached_.find(block_hash);
  if (first < 0) {
    cached_.put(block_hash, block_id);
    b.dup_prev = block_id;  // first and last
  } else {  // a duplicate: appended, the earliest stays first, as in vLLM's dict of dicts
    Block& head = blocks_[static_cast<std::size_t>(first)];
    const int last = head.dup_prev;
    note(first);
    note(last);
    blocks_[static_cast<std::size_t>(last)].dup_next = block_id;
    b.dup_prev = last;
    head.dup_prev = block_id;
  }
}

bool BlockPool::is_chain_head(int id) const {
  const Block& b = blocks_[static_cast<std::size_t>(id)];
  if (hashes_[static_cast<std::size_t>(id)] == 0 || b.dup_prev < 0 || b.dup_prev > num_gpu_blocks_) return false;
  return blocks_[static_cast<std::size_t>(b.dup_prev)].dup_next != id;
}

void BlockPool::note_first_change(int id) {
  MLASIM_CHECK(id >= 0 && id <= num_gpu_blocks_, "a change to a block id out of the pool");
  changed_epoch_[static_cast<std::size_t>(id)] = epoch_;
  const Block& b = blocks_[static_cast<std::size_t>(id)];
  changed_.push_back({hashes_[static_cast<std::size_t>(id)], id, b.dup_prev, b.dup_next, b.prev != -1, b.ref_cnt > 0,
                      is_chain_head(id)});
  if (id != sentinel_) changed_ids_.push_back(id);
}

void BlockPool::track_changes(bool on) {
  tracking_ = on;
  changed_.clear();
  changed_ids_.clear();
  changed_epoch_.assign(on ? blocks_.size() : 0, 0);
  if (on) {  // room for a step's changes of a small run
    changed_.reserve(std::min<std::size_t>(blocks_.size(), 256));
    changed_ids_.reserve(std::min<std::size_t>(blocks_.size(), 256));
  }
  epoch_ = 1;
  audited_free_ = num_free_;
  audited_used_ = num_used_;
  audited_heads_ = cached_.size();
}

void BlockPool::audit_changes() {
  MLASIM_CHECK(tracking_, "audit_changes needs track_changes(true)");
  auto link_ok = [&](int link) { return link >= 0 && link <= num_gpu_blocks_; };
  int queued = 0, used = 0;
  long long heads = 0;
  for (const Before& c : changed_) {
    const int id = c.id;
    const Block& b = blocks_[static_cast<std::size_t>(id)];
    auto which = [id](const char* what) { return "block " + std::to_string(id) + what; };  // built on failure only
    MLASIM_CHECK(b.ref_cnt >= 0, which(": negative ref count"));
    MLASIM_CHECK((b.ref_cnt == 0) == (b.prev != -1), which(" is neither referenced nor free"));
    MLASIM_CHECK(id != 0 || b.prev == -1, "the null block was handed out");
    if (b.prev != -1) {
      MLASIM_CHECK(link_ok(b.prev) && link_ok(b.next), which(": a free-queue link out of the pool"));
      MLASIM_CHECK(blocks_[static_cast<std::size_t>(b.prev)].next == id && blocks_[static_cast<std::size_t>(b.next)].prev == id,
                   which(": its free-queue neighbours do not link back to it"));
    } else {
      MLASIM_CHECK(b.next == -1, which(": half in the free queue"));
    }
    const std::uint64_t hash = hashes_[static_cast<std::size_t>(id)];
    const bool head = is_chain_head(id);
    // Its prefix-cache entry and chain are checked where they changed: only the operations that
    // change a hash or a chain link touch the map, and they note each block they change.
    const bool chain_changed =
        hash != c.hash || head != c.head || b.dup_prev != c.dup_prev || b.dup_next != c.dup_next;
    if (chain_changed && hash != 0) {
      MLASIM_CHECK(b.dup_prev > 0 && b.dup_prev < num_gpu_blocks_, which(": a cached block's chain link is out of range"));
      if (head) {
        MLASIM_CHECK(cached_.find(hash) == id, which(": the prefix-cache map does not point at the head of its chain"));
        const Block& last = blocks_[static_cast<std::size_t>(b.dup_prev)];
        MLASIM_CHECK(last.dup_next == -1 && hashes_[static_cast<std::size_t>(b.dup_prev)] == hash,
                     which(": its chain's last block is lost"));
      } else {
        MLASIM_CHECK(hashes_[static_cast<std::size_t>(b.dup_prev)] == hash, which(": a duplicate chain holds another hash"));
      }
      if (b.dup_next != -1) {
        MLASIM_CHECK(b.dup_next > 0 && b.dup_next < num_gpu_blocks_, which(": a chain link out of range"));
        MLASIM_CHECK(blocks_[static_cast<std::size_t>(b.dup_next)].dup_prev == id &&
                         hashes_[static_cast<std::size_t>(b.dup_next)] == hash,
                     which(": a duplicate chain's links disagree"));
      }
    } else if (chain_changed) {
      MLASIM_CHECK(b.dup_prev == -1 && b.dup_next == -1, which(": chain links on an uncached block"));
    }
    if (id == sentinel_) continue;
    queued += (b.prev != -1 ? 1 : 0) - (c.queued ? 1 : 0);
    used += (b.ref_cnt > 0 ? 1 : 0) - (c.used ? 1 : 0);
    heads += (head ? 1 : 0) - (c.head ? 1 : 0);
  }
  MLASIM_CHECK(num_free_ - audited_free_ == queued && num_used_ - audited_used_ == used,
               "pool counters moved unlike the blocks that changed");
  MLASIM_CHECK(num_free_ + num_used_ == num_usable_blocks(), "free + used != usable");
  MLASIM_CHECK(static_cast<long long>(cached_.size()) - static_cast<long long>(audited_heads_) == heads,
               "the prefix-cache map gained or lost entries unlike the chains' heads");
  audited_free_ = num_free_;
  audited_used_ = num_used_;
  audited_heads_ = cached_.size();
  changed_.clear();
  changed_ids_.clear();
  if (++epoch_ == 0) {  // wrapped: no block may look noted
    std::fill(changed_epoch_.begin(), changed_epoch_.end(), 0);
    epoch_ = 1;
  }
}

std::vector<int> BlockPool::free_queue() const {
  std::vector<int> ids;
  for (int id = blocks_[static_cast<std::size_t>(sentinel_)].next; id != sentinel_;
       id = blocks_[static_cast<std::size_t>(id)].next) {
    ids.push_back(id);
  }
  return ids;
}

void BlockPool::audit() const {
  // One pass over the blocks; the prefix-cache map is checked through the heads of the duplicate
  // chains (a lookup each), not by walking its table, which is mostly empty in a small run.
  int queued = 0, used = 0, hashed = 0, heads = 0, chained = 0;
  for (int id = 1; id < num_gpu_blocks_; ++id) {
    const Block& b = blocks_[static_cast<std::size_t>(id)];
    MLASIM_CHECK(b.ref_cnt >= 0, "negative ref count");
    MLASIM_CHECK((b.ref_cnt == 0) == (b.prev != -1), "block " + std::to_string(id) + " is neither referenced nor free");
    queued += b.prev != -1 ? 1 : 0;
    used += b.ref_cnt > 0 ? 1 : 0;
    const std::uint64_t hash = hashes_[static_cast<std::size_t>(id)];
    if (hash == 0) continue;
    ++hashed;
    MLASIM_CHECK(b.dup_prev > 0 && b.dup_prev < num_gpu_blocks_, "a cached block's chain link is out of range");
    if (blocks_[static_cast<std::size_t>(b.dup_prev)].dup_next == id) continue;  // inside a chain, walked from its head
    ++heads;
    MLASIM_CHECK(cached_.find(hash) == id, "the prefix-cache map does not point at the head of a duplicate chain");
    int last = id;
    for (int cur = b.dup_next; cur != -1; cur = blocks_[static_cast<std::size_t>(cur)].dup_next) {
      MLASIM_CHECK(cur > 0 && cur < num_gpu_blocks_ && chained < num_gpu_blocks_, "a duplicate chain runs out of the pool");
      MLASIM_CHECK(hashes_[static_cast<std::size_t>(cur)] == hash, "a duplicate chain holds a block with another hash");
      MLASIM_CHECK(blocks_[static_cast<std::size_t>(cur)].dup_prev == last, "a duplicate chain's links disagree");
      last = cur;
      ++chained;
    }
    ++chained;
    MLASIM_CHECK(b.dup_prev == last, "a duplicate chain's last block is lost");
  }
  MLASIM_CHECK(blocks_[0].ref_cnt == 0 && blocks_[0].prev == -1, "the null block was handed out");
  MLASIM_CHECK(queued == num_free_ && used == num_used_, "pool counters disagree with the blocks");
  MLASIM_CHECK(num_free_ + num_used_ == num_usable_blocks(), "free + used != usable");
  MLASIM_CHECK(static_cast<int>(cached_.size()) == heads, "the prefix-cache map holds entries that head no chain");
  MLASIM_CHECK(chained == hashed, "hashed blocks missing from the prefix-cache map");
}

}  // namespace mlasim
