// The KV cache managers and coordinator of several groups (sim/kv_cache/): exact block ids, each
// case the same operations on vLLM 0.33's own KVCacheManager giving the same ids (the expected
// values were taken from it: v1/core/kv_cache_manager.py with the coordinator and managers of
// v1/core/kv_cache_coordinator.py and single_type_kv_cache_manager.py).
#include <catch2/catch.hpp>

#include <vector>

#include "sim/block_hash.h"
#include "sim/kv_cache/kv_cache_coordinator.h"
#include "sim/kv_cache/mamba_manager.h"
#include "sim/kv_cache/sliding_window_manager.h"
#include "scheduler_test_util.h"

using namespace mlasim;
using V = std::vector<int>;
using G = GroupBlocks;

namespace {

KvCacheGroup mla(int block_size) {
  KvCacheGroup g;
  g.kind = KvCacheSpecKind::kMlaAttention;
  g.block_size = block_size;
  return g;
}

KvCacheGroup swa(int block_size, int window) {
  KvCacheGroup g;
  g.kind = KvCacheSpecKind::kSlidingWindowMla;
  g.block_size = block_size;
  g.sliding_window = window;
  return g;
}

KvCacheGroup mamba(int block_size, const char* mode, int speculative_blocks = 0) {
  KvCacheGroup g;
  g.kind = KvCacheSpecKind::kMamba;
  g.block_size = block_size;
  g.mamba_cache_mode = mode;
  g.num_speculative_blocks = speculative_blocks;
  return g;
}

GroupedKVCacheManager manager(std::vector<KvCacheGroup> groups, bool caching, int num_blocks = 40) {
  GroupedKVCacheConfig c;
  c.layout.groups = std::move(groups);
  resolve_kv_cache_block_sizes(c.layout, caching);
  c.num_gpu_blocks = num_blocks;
  c.enable_caching = caching;
  c.max_model_len = 1024;
  c.max_num_batched_tokens = 64;
  return GroupedKVCacheManager(c);
}

Request request(ReqId id, std::vector<int> prompt, int hash_block_size) {
  Request r = test::make_req(id, 1);
  r.all_token_ids = std::move(prompt);
  r.num_prompt_tokens = r.num_tokens();
  update_block_hashes(r, hash_block_size);
  return r;
}

V head(const std::vector<int>& queue, std::size_t n) { return V(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n)); }

std::vector<int> tokens(int from, int n) {
  V t;
  for (int i = 0; i < n; ++i) t.push_back(from + i);
  return t;
}

// The scheduler's admission: the prefix hit, then slots for the rest of the prompt.
G admit(GroupedKVCacheManager& m, Request& r, int* hit = nullptr, int* boundary = nullptr) {
  G hits, fresh, tables;
  int spb = 0;
  const int n = m.get_computed_blocks(r, hits, spb);
  r.shared_prefix_boundary = spb;
  REQUIRE(m.allocate_slots(r, r.num_tokens() - n, 0, &hits, n, false, fresh));
  r.num_computed_tokens = r.num_tokens();
  if (hit) *hit = n;
  if (boundary) *boundary = spb;
  m.get_blocks(r.request_id, tables);
  return tables;
}

}  // namespace

TEST_CASE("kv cache groups: a sliding window frees the blocks behind it", "[scheduler][kv_cache_groups]") {
  GroupBlockPool pool(20, false, 4);
  SlidingWindowManager m(swa(4, 8), pool, false, 0, 4, SlidingWindowManager::max_admission_blocks(swa(4, 8), 64, 1024));
  V out;
  m.allocate_new_blocks(1, 16, 16, out);
  CHECK(out == V{1, 2, 3, 4});
  // 16 computed tokens: the next token's window starts at token 9, so blocks 0 and 1 go (back to
  // front: block 2 first), replaced by the null block.
  m.remove_skipped_blocks(1, 16);
  CHECK(std::vector<int>(m.blocks(1).begin(), m.blocks(1).end()) == V{0, 0, 3, 4});
  CHECK(head(pool.pool().free_queue(), 4) == V{2, 1, 5, 6});
  out.clear();
  m.allocate_new_blocks(1, 20, 20, out);
  CHECK(out == V{2});
  CHECK(std::vector<int>(m.blocks(1).begin(), m.blocks(1).end()) == V{0, 0, 3, 4, 2});
  m.free(1);  // tail first, the leading nulls skipped
  CHECK(head(pool.pool().free_queue(), 6) == V{2, 4, 3, 1, 5, 6});
}

TEST_CASE("kv cache groups: a prefix hit only where every group hits", "[scheduler][kv_cache_groups]") {
  GroupedKVCacheManager m = manager({mla(4), mamba(4, "align")}, true);
  const V A = tokens(100, 16);
  Request a = request(1, A, 4);
  G hits(2), fresh;
  int spb = 0;
  REQUIRE(m.get_computed_blocks(a, hits, spb) == 0);
  // The Mamba "align" split ends the first chunk at 12, where the prompt's state is cached (its
  // replay boundary: 15 tokens, floored to the block).
  REQUIRE(m.allocate_slots(a, 12, 0, &hits, 0, false, fresh));
  a.num_computed_tokens = 12;
  REQUIRE(m.allocate_slots(a, 4, 0, nullptr, 0, false, fresh));
  a.num_computed_tokens = 16;
  G tables;
  m.get_blocks(1, tables);
  CHECK(tables == G{{1, 2, 3, 5}, {0, 0, 4, 6}});
  m.free(a);
  CHECK(head(m.pool().pool().free_queue(), 3) == V{6, 7, 8});

  // b shares 8 tokens: full attention hits them, Mamba kept no state there, so nothing hits; the
  // shared prefix the Mamba group lags on is remembered (shared_prefix_boundary).
  std::vector<int> B(A.begin(), A.begin() + 8);
  for (int t : tokens(200, 9)) B.push_back(t);
  Request b = request(2, B, 4);
  int hit = -1, boundary = -1;
  CHECK(admit(m, b, &hit, &boundary) == G{{6, 7, 8, 9, 10}, {0, 0, 0, 0, 11}});
  CHECK(hit == 0);
  CHECK(boundary == 8);

  // c shares 12 tokens: both groups hit them. The Mamba state was cached in this step, so the
  // admission waits for the next step (single_type_kv_cache_manager.py:1703-1712).
  std::vector<int> C(A.begin(), A.begin() + 12);
  for (int t : tokens(300, 5)) C.push_back(t);
  Request c = request(3, C, 4);
  REQUIRE(m.get_computed_blocks(c, hits, spb) == 12);
  CHECK_FALSE(m.allocate_slots(c, 5, 0, &hits, 12, false, fresh));
  m.new_step_starts();
  CHECK(admit(m, c, &hit) == G{{1, 2, 3, 12, 13}, {0, 0, 4, 0, 14}});
  CHECK(hit == 12);
  CHECK(m.pool().get_num_free_blocks() == 26);
  m.audit();
}

TEST_CASE("kv cache groups: Mamba in mode none holds its state and speculative blocks", "[scheduler][kv_cache_groups]") {
  GroupedKVCacheManager m = manager({mla(4), mamba(1024, "none", 2)}, false);
  Request d = request(1, tokens(100, 10), 1024);
  CHECK(admit(m, d) == G{{1, 2, 3}, {4, 5, 6}});
  G fresh;
  REQUIRE(m.allocate_slots(d, 3, 2, nullptr, 0, false, fresh));  // two lookahead slots
  CHECK(fresh == G{{7}, {}});
}

TEST_CASE("kv cache groups: Mamba in mode align moves its running state", "[scheduler][kv_cache_groups]") {
  GroupedKVCacheManager m = manager({mla(4), mamba(4, "align", 1)}, false);
  Request e = request(1, tokens(100, 10), 4);
  G fresh, tables;
  REQUIRE(m.allocate_slots(e, 8, 0, nullptr, 0, false, fresh));
  CHECK(fresh == G{{1, 2}, {0, 3, 4}});  // the state after 8 tokens and one speculative block
  CHECK(m.pool().get_num_free_blocks() == 35);
  e.num_computed_tokens = 8;
  REQUIRE(m.allocate_slots(e, 2, 0, nullptr, 0, false, fresh));
  CHECK(fresh == G{{5}, {6}});
  e.num_computed_tokens = 10;
  e.all_token_ids.push_back(5);
  REQUIRE(m.allocate_slots(e, 1, 0, nullptr, 0, false, fresh));
  CHECK(fresh == G{{}, {}});
  m.get_blocks(1, tables);
  CHECK(tables == G{{1, 2, 5}, {0, 0, 4, 6}});  // the state two steps back (block 3) is freed
  CHECK(m.pool().get_num_free_blocks() == 34);
  e.num_computed_tokens = 11;
  for (int t : {6, 7, 8, 9}) e.all_token_ids.push_back(t);
  REQUIRE(m.allocate_slots(e, 4, 0, nullptr, 0, false, fresh));
  CHECK(fresh == G{{3}, {7}});
  m.get_blocks(1, tables);
  CHECK(tables == G{{1, 2, 5, 3}, {0, 0, 4, 6, 7}});
  CHECK(m.pool().get_num_free_blocks() == 32);
}

TEST_CASE("kv cache groups: a sliding-window hit and full attention's partial tail", "[scheduler][kv_cache_groups]") {
  GroupedKVCacheManager m = manager({mla(8), swa(4, 8)}, true);  // scheduler block 8, hash block 4
  const V A = tokens(100, 29);
  Request a = request(1, A, 4);
  CHECK(admit(m, a) == G{{1, 2, 3, 4}, {5, 6, 7, 8, 9, 10, 11, 12}});
  for (int t : {5, 6, 7}) a.all_token_ids.push_back(t);
  update_block_hashes(a, 4);
  G fresh;
  REQUIRE(m.allocate_slots(a, 3, 0, nullptr, 0, false, fresh));
  a.num_computed_tokens = 32;
  CHECK(fresh == G{{}, {}});
  G tables;
  m.get_blocks(1, tables);
  CHECK(tables == G{{1, 2, 3, 4}, {0, 0, 0, 0, 0, 10, 11, 12}});
  // Block 4 holds the full block's hash and, beside it, the prompt's tail at 28 tokens; the window's
  // blocks outside the cached tail (before the boundary 24) never got one.
  CHECK(m.pool().block_hash_num_tokens(4) == 32);
  CHECK(m.pool().block_hash_num_tokens(9) == 20);
  CHECK(m.pool().block_hash_num_tokens(10) == 24);
  CHECK(m.pool().block_hash_num_tokens(5) == -1);
  m.free(a);
  const std::vector<int> q = m.pool().pool().free_queue();
  CHECK(head(q, 7) == V{12, 11, 8, 7, 6, 5, 13});
  CHECK(V(q.end() - 6, q.end()) == V{9, 4, 3, 2, 1, 10});

  std::vector<int> B(A.begin(), A.begin() + 24);
  for (int t : {7, 8, 9}) B.push_back(t);
  Request b = request(2, B, 4);
  int hit = -1;
  // The window needs the two blocks before the hit's end: the nulls stand for the skipped ones.
  CHECK(admit(m, b, &hit) == G{{1, 2, 3, 12}, {0, 0, 0, 0, 9, 10, 11}});
  CHECK(hit == 24);
  CHECK(m.pool().get_num_free_blocks() == 32);
  m.audit();
}
