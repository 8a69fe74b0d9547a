// BlockPool and KVCacheManager: ids, free-queue order, hashes kept until reallocation, hits.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "base/check.h"

#include "sim/block_hash.h"
#include "sim/block_pool.h"
#include "sim/kv_cache_manager.h"
#include "scheduler_test_util.h"

using namespace mlasim;
using mlasim::test::make_req;

namespace mlasim {
struct BlockPoolTestAccess {  // reaches into a pool to break one invariant
  static std::vector<BlockPool::Block>& blocks(BlockPool& p) { return p.blocks_; }
  static std::vector<std::uint64_t>& hashes(BlockPool& p) { return p.hashes_; }
  static FlatIndexMap& cached(BlockPool& p) { return p.cached_; }
};
}  // namespace mlasim

TEST_CASE("block pool: null block reserved, ascending ids, LRU free queue", "[scheduler]") {
  // vLLM 0.33 puts freed blocks without a hash at the front (block_pool.py ~836-847); 0.11
  // appended every freed block.
  const bool unhashed_first = GENERATE(true, false);
  BlockPool pool(11, true, unhashed_first);
  CHECK(pool.num_usable_blocks() == 10);
  CHECK(pool.get_num_free_blocks() == 10);
  CHECK(pool.free_queue() == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  std::vector<int> got;
  pool.get_new_blocks(4, got);
  CHECK(got == std::vector<int>{1, 2, 3, 4});
  CHECK(pool.get_num_free_blocks() == 6);
  CHECK(pool.num_used_blocks() == 4);
  pool.cache_full_block(1, 111);
  pool.cache_full_block(2, 222);
  const std::vector<int> reversed{4, 3, 2, 1};
  pool.free_blocks_in_order(reversed);
  const std::vector<int> queue = unhashed_first ? std::vector<int>{4, 3, 5, 6, 7, 8, 9, 10, 2, 1}
                                                : std::vector<int>{5, 6, 7, 8, 9, 10, 4, 3, 2, 1};
  CHECK(pool.free_queue() == queue);
  // Freed blocks keep their hash...
  CHECK(pool.get_cached_block(111) == 1);
  CHECK(pool.get_cached_block(222) == 2);
  // ...and a hit is taken out of the middle of the free queue.
  const std::vector<int> hit{2};
  pool.touch(hit);
  std::vector<int> after_hit = queue;
  std::erase(after_hit, 2);
  CHECK(pool.free_queue() == after_hit);
  CHECK(pool.ref_cnt(2) == 1);
  got.clear();
  pool.get_new_blocks(9, got);
  CHECK(got == after_hit);
  CHECK(pool.get_cached_block(111) == -1);  // evicted on reallocation
  CHECK_FALSE(pool.has_hash(1));
  CHECK(pool.get_cached_block(222) == 2);
  pool.audit();
}

TEST_CASE("block pool: duplicate hashes resolve to the earliest cached block", "[scheduler]") {
  BlockPool pool(5, true);
  std::vector<int> got;
  pool.get_new_blocks(3, got);
  pool.cache_full_block(1, 42);
  pool.cache_full_block(2, 42);
  CHECK(pool.get_cached_block(42) == 1);
  const std::vector<int> first{1};
  pool.free_blocks_in_order(first);
  got.clear();
  pool.get_new_blocks(2, got);  // 4, then 1 (evicts block 1's hash)
  CHECK(got == std::vector<int>{4, 1});
  CHECK(pool.get_cached_block(42) == 2);
  pool.audit();
}

TEST_CASE("kv cache manager: 55 tokens on 11 blocks get blocks [1,2,3,4]", "[scheduler]") {
  KVCacheManager kv(11, 16, true, 4096);
  Request r = make_req(0, 55);
  update_block_hashes(r, 16);
  REQUIRE(kv.allocate_slots(r, 55, 0));
  CHECK(r.block_ids == std::vector<int>{1, 2, 3, 4});
  CHECK(kv.block_pool().get_num_free_blocks() == 6);
  CHECK(r.num_cached_blocks == 3);  // only full blocks are cached
  CHECK(kv.block_pool().has_hash(3));
  CHECK_FALSE(kv.block_pool().has_hash(4));
  kv.free(r);
  // Block 4 (partly filled, no hash) goes to the front, the hashed ones to the back.
  CHECK(kv.block_pool().free_queue() == std::vector<int>{4, 5, 6, 7, 8, 9, 10, 3, 2, 1});
}

TEST_CASE("kv cache manager: prefix hit capped at num_tokens - 1 in whole blocks", "[scheduler]") {
  const auto [n, expected_hit] = GENERATE(std::pair{17, 16}, std::pair{32, 16}, std::pair{33, 32}, std::pair{16, 0},
                                          std::pair{48, 32}, std::pair{1, 0});
  KVCacheManager kv(20, 16, true, 4096);
  Request a = make_req(0, n, 16, 5);
  update_block_hashes(a, 16);
  REQUIRE(kv.allocate_slots(a, n, 0));
  kv.free(a);
  Request b = make_req(1, n, 16, 5);  // same prompt
  update_block_hashes(b, 16);
  std::vector<int> hits;
  CHECK(kv.get_computed_blocks(b, hits) == expected_hit);
  CHECK(static_cast<int>(hits.size()) * 16 == expected_hit);
  const int free_before = kv.block_pool().get_num_free_blocks();
  REQUIRE(kv.allocate_slots(b, n - expected_hit, 0, hits, expected_hit));
  CHECK(kv.block_pool().get_num_free_blocks() == free_before - (n + 15) / 16);
  // The hit blocks are the first blocks a held: ids 1, 2, ...
  for (std::size_t i = 0; i < hits.size(); ++i) CHECK(b.block_ids[i] == static_cast<int>(i) + 1);
}

TEST_CASE("kv cache manager: evictable hit blocks count against the free pool", "[scheduler]") {
  KVCacheManager kv(4, 16, true, 4096);  // 3 usable
  Request a = make_req(0, 33, 16, 9);
  update_block_hashes(a, 16);
  REQUIRE(kv.allocate_slots(a, 33, 0));  // blocks 1,2,3
  kv.free(a);                            // all free, 1 and 2 still hashed
  Request b = make_req(1, 33, 16, 9);
  update_block_hashes(b, 16);
  std::vector<int> hits;
  REQUIRE(kv.get_computed_blocks(b, hits) == 32);
  // 2 hits + 1 new + 2 lookahead slots -> 3 blocks needed + ... 33+2 = 35 tokens -> 3 blocks: fits.
  CHECK(kv.allocate_slots(b, 1, 2, hits, 32));
  CHECK(b.block_ids == std::vector<int>{1, 2, 3});
  kv.free(b);
  Request c = make_req(2, 33, 16, 9);
  update_block_hashes(c, 16);
  REQUIRE(kv.get_computed_blocks(c, hits) == 32);
  // 49 slots -> 4 blocks > 3 usable: fails and changes nothing.
  CHECK_FALSE(kv.allocate_slots(c, 1, 16, hits, 32));
  CHECK(c.block_ids.empty());
  CHECK(kv.block_pool().get_num_free_blocks() == 3);
}

TEST_CASE("block pool: vLLM 0.33 free order, unhashed blocks first in free order, hashed ones last", "[scheduler]") {
  BlockPool pool(8, true);
  std::vector<int> got;
  pool.get_new_blocks(5, got);  // 1..5
  pool.cache_full_block(2, 222);
  pool.cache_full_block(4, 444);
  // Free order (a table reversed) 5, 4, 3, 2, 1: 5, 3, 1 have no hash and go to the front in that
  // order (prepend_n), 4, 2 to the back (append_n).
  const std::vector<int> order{5, 4, 3, 2, 1};
  pool.free_blocks_in_order(order);
  CHECK(pool.free_queue() == std::vector<int>{5, 3, 1, 6, 7, 4, 2});
  pool.audit();
  // With caching off every freed block goes to the front.
  BlockPool off(5, false);
  got.clear();
  off.get_new_blocks(3, got);
  const std::vector<int> back{3, 2, 1};
  off.free_blocks_in_order(back);
  CHECK(off.free_queue() == std::vector<int>{3, 2, 1, 4});
  // Into an empty queue: the unhashed blocks, then the hashed ones.
  BlockPool full(4, true);
  got.clear();
  full.get_new_blocks(3, got);
  full.cache_full_block(1, 111);
  const std::vector<int> mixed{1, 2, 3};
  full.free_blocks_in_order(mixed);
  CHECK(full.free_queue() == std::vector<int>{2, 3, 1});
}

namespace {

using Break = std::pair<std::string, std::function<void(BlockPool&)>>;

// Blocks 1, 2 and 4 cached under hash 42 (a chain of three), 3 under 7, 5 under 9 and freed; with
// `track`, changes noted from the start (blocks 1-5 all changed).
BlockPool chained_pool(bool track) {
  BlockPool pool(8, true);
  pool.track_changes(track);
  std::vector<int> got;
  pool.get_new_blocks(5, got);
  pool.cache_full_block(1, 42);
  pool.cache_full_block(2, 42);
  pool.cache_full_block(3, 7);
  pool.cache_full_block(4, 42);
  pool.cache_full_block(5, 9);
  const std::vector<int> freed{5};
  pool.free_blocks_in_order(freed);
  return pool;
}

// One broken invariant each, on blocks chained_pool changed.
std::vector<Break> pool_breaks() {
  using A = BlockPoolTestAccess;
  return {
      {"a chain member's hash changed", [](BlockPool& p) { A::hashes(p)[2] = 43; }},
      {"a chain member's back link", [](BlockPool& p) { A::blocks(p)[4].dup_prev = 1; }},
      {"the head's link to the last", [](BlockPool& p) { A::blocks(p)[1].dup_prev = 2; }},
      {"a chain cut short", [](BlockPool& p) { A::blocks(p)[2].dup_next = -1; }},
      {"the map entry of a chain removed", [](BlockPool& p) { A::cached(p).erase(7); }},
      {"a map entry heading no chain", [](BlockPool& p) { A::cached(p).put(1234, 6); }},
      {"the map pointing inside a chain", [](BlockPool& p) { A::cached(p).put(42, 2); }},
      {"a free block referenced", [](BlockPool& p) { A::blocks(p)[5].ref_cnt = 1; }},
      {"a used block unreferenced", [](BlockPool& p) { A::blocks(p)[3].ref_cnt = 0; }},
  };
}

}  // namespace

TEST_CASE("block pool: the audit finds each broken invariant", "[scheduler]") {
  chained_pool(false).audit();  // the intact pool passes
  const std::vector<Break> breaks = pool_breaks();
  for (const auto& [what, corrupt] : breaks) {
    BlockPool pool = chained_pool(false);
    corrupt(pool);
    ThrowOnCheckFailure throws;
    INFO(what);
    CHECK_THROWS_AS(pool.audit(), InvariantViolation);
  }
  CHECK(breaks.size() == 9);
}

TEST_CASE("block pool: the incremental audit finds each broken invariant on a changed block", "[scheduler]") {
  {
    BlockPool pool = chained_pool(true);
    CHECK(pool.changed_blocks().size() == 7);  // blocks 1-5, and 6 (the queue head, unlinked) and 7 (5's new neighbour)
    pool.audit_changes();  // the intact pool passes
    CHECK(pool.changed_blocks().empty());
    pool.audit_changes();  // nothing changed: nothing to check, counters unmoved
  }
  std::vector<Break> breaks = pool_breaks();
  // The full audit counts queued blocks but does not walk the links; the incremental one checks
  // each changed block's neighbours link back to it.
  breaks.emplace_back("a queue neighbour's link", [](BlockPool& p) { BlockPoolTestAccess::blocks(p)[7].next = 6; });
  int caught = 0;
  for (const auto& [what, corrupt] : breaks) {
    BlockPool pool = chained_pool(true);
    corrupt(pool);
    ThrowOnCheckFailure throws;
    INFO(what);
    CHECK_THROWS_AS(pool.audit_changes(), InvariantViolation);
    caught += 1;
  }
  CHECK(caught == 10);
}

TEST_CASE("block pool: the incremental audit passes random valid work and catches a changed block's corruption",
          "[scheduler]") {
  using A = BlockPoolTestAccess;
  std::uint64_t state = 99;
  auto next = [&state](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  BlockPool pool(64, true);
  pool.track_changes(true);
  std::vector<std::vector<int>> owners;  // tables of imaginary requests
  int rounds = 0, corruptions_caught = 0;
  for (int round = 0; round < 400; ++round) {
    for (int op = 0; op < 4; ++op) {
      const int kind = next(3);
      if (kind == 0 && pool.get_num_free_blocks() > 0) {  // a new table, some blocks cached (hashes repeat)
        std::vector<int> t;
        pool.get_new_blocks(1 + next(std::min(4, pool.get_num_free_blocks())), t);
        for (int id : t)
          if (next(2) == 0) pool.cache_full_block(id, 1 + static_cast<std::uint64_t>(next(12)));
        owners.push_back(t);
      } else if (kind == 1 && !owners.empty()) {  // a table freed
        const auto i = static_cast<std::size_t>(next(static_cast<int>(owners.size())));
        pool.free_blocks_in_order(owners[i]);
        owners.erase(owners.begin() + static_cast<std::ptrdiff_t>(i));
      } else {  // a prefix hit on a cached block, referenced or free
        const int id = pool.get_cached_block(1 + static_cast<std::uint64_t>(next(12)));
        if (id > 0) {
          const std::vector<int> hit{id};
          pool.touch(hit);
          owners.push_back(hit);
        }
      }
    }
    if (round % 10 == 9 && !pool.changed_blocks().empty()) {  // a copy, one changed block broken
      BlockPool broken = pool;
      const std::span<const int> changed = broken.changed_blocks();
      const int id = changed[static_cast<std::size_t>(next(static_cast<int>(changed.size())))];
      int& ref = A::blocks(broken)[static_cast<std::size_t>(id)].ref_cnt;  // referenced <-> free
      ref = ref > 0 ? 0 : 1;
      ThrowOnCheckFailure throws;
      CHECK_THROWS_AS(broken.audit_changes(), InvariantViolation);
      ++corruptions_caught;
    }
    pool.audit_changes();
    pool.audit();
    ++rounds;
  }
  CHECK(rounds == 400);
  CHECK(corruptions_caught > 30);
}
