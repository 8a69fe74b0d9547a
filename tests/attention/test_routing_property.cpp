// Seeded random batches through every profile and backend: split counts, order, strict's
// guarantee, the 4-region reorder's idempotence and minimality, metadata consistency.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "attention/attention_metadata.h"
#include "attention/reorder.h"
#include "routing_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

using K = AttentionBackendKind;
using P = EngineProfile;
constexpr K kBackends[] = {K::kFlashMla, K::kFlashAttnMla, K::kFlashInferMla, K::kCutlassMla, K::kTritonMla, K::kRocmAiterMla};
constexpr P kProfiles[] = {P::kVllm2025Early, P::kVllm011, P::kVllm012, P::kVllm3Region,
                           P::kVllm033,       P::kStrict,  P::kSglang};

int uni(std::mt19937& g, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); }

// Decodes (q 1..1+k), fresh prompts (1-token ones often), chunk continuations, short extends,
// and long rows around the backends' thresholds.
std::vector<RowInput> random_batch(std::mt19937& g, int k) {
  std::vector<RowInput> rows(static_cast<std::size_t>(uni(g, 1, 12)));
  for (RowInput& r : rows) {
    const int p = uni(g, 0, 3) == 0 ? 1 : uni(g, 1, 2000);
    switch (uni(g, 0, 4)) {
      case 0: r = {uni(g, 1, 1 + k), p + uni(g, 0, 300), p}; break;            // decode / verify
      case 1: r = {uni(g, 0, 1) ? p : uni(g, 1, p), 0, p}; break;               // fresh prompt
      case 2: { const int n = uni(g, 0, p - 1); r = {uni(g, 1, p - n), n, p}; } break;  // continuation
      case 3: r = {1, p - 1, p}; break;                                         // last 1-token chunk / full hit
      default: r = {uni(g, 1, 700), uni(g, 0, 5000), p}; break;                 // anything
    }
  }
  return rows;
}

}  // namespace

TEST_CASE("routing property: seeded random batches", "[routing]") {
  std::mt19937 g(20260314);
  int fresh_on_decode = 0, reordered = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const int k = uni(g, 0, 3) == 0 ? uni(g, 1, 4) : 0;
    RoutingOptions o;
    o.profile = kProfiles[uni(g, 0, 5)];
    o.backend = kBackends[uni(g, 0, 5)];
    o.num_speculative_tokens = k;
    o.sparse_mla = uni(g, 0, 9) == 0;
    if (uni(g, 0, 4) == 0) o.reorder_batch_threshold = uni(g, 1, 600);
    o.block_size = 16 << uni(g, 0, 2);
    const RoutingConfig c = make_routing_config(o);
    const std::vector<RowInput> rows = random_batch(g, k);
    INFO("iter " << iter << " profile " << to_string(c.profile) << " backend " << to_string(c.backend) << " T "
                 << c.decode_threshold << " rows " << rows.size());

    const BatchRoute r = route_batch(rows, c);
    const int n = static_cast<int>(rows.size());
    int total = 0;
    for (const RowInput& x : rows) total += x.q;
    // Counts sum to the batch.
    REQUIRE(r.counts.num_decodes + r.counts.num_prefills == n);
    REQUIRE(r.counts.num_decode_tokens + r.counts.num_prefill_tokens == total);
    REQUIRE(r.counts.num_mqa_tokens + r.counts.num_mha_tokens == total);
    // order is a permutation, rows follow it.
    std::vector<int> sorted = r.order;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < n; ++i) REQUIRE(sorted[static_cast<std::size_t>(i)] == i);
    for (int i = 0; i < n; ++i) {
      const RowRoute& rr = r.rows[static_cast<std::size_t>(i)];
      const RowInput& in = rows[static_cast<std::size_t>(r.order[static_cast<std::size_t>(i)])];
      REQUIRE((rr.q == in.q && rr.nct == in.nct && rr.prompt_len == in.prompt_len));
      REQUIRE(rr.fresh_on_decode_path == (rr.nct == 0 && rr.path == MlaPath::kMqa));
      fresh_on_decode += rr.fresh_on_decode_path ? 1 : 0;
    }
    if (c.profile != P::kSglang) {
      // Decodes precede prefills; the decode path is exactly the decodes (all rows when sparse).
      for (int i = 0; i < n; ++i) {
        const RowRoute& rr = r.rows[static_cast<std::size_t>(i)];
        REQUIRE(rr.is_decode == (i < r.counts.num_decodes));
        REQUIRE((rr.path == MlaPath::kMqa) == (c.sparse_mla || rr.is_decode));
      }
      // After the reorder the rows are sorted by region (every version sorts its own classes).
      for (int i = 1; i < n; ++i)
        REQUIRE(static_cast<int>(r.rows[static_cast<std::size_t>(i - 1)].region) <= static_cast<int>(r.rows[static_cast<std::size_t>(i)].region));
    } else {
      REQUIRE_FALSE(r.modified);
    }
    if (c.profile == P::kStrict && !c.sparse_mla) {
      for (const RowRoute& rr : r.rows)
        if (rr.nct == 0 || rr.nct < rr.prompt_len) REQUIRE(rr.path == MlaPath::kMha);
    }
    reordered += r.modified ? 1 : 0;

    // Metadata from covering block tables is consistent.
    std::vector<std::vector<int>> tables;
    int next = 1;
    for (const RowRoute& rr : r.rows) {
      std::vector<int> ids;
      for (int b = 0; b < (rr.nct + rr.q + c.block_size - 1) / c.block_size; ++b) ids.push_back(next++);
      tables.push_back(std::move(ids));
    }
    const AttentionMetadata m = build_attention_metadata(r, c, tables);
    REQUIRE(m.validate() == "");
  }
  CHECK(fresh_on_decode > 100);
  CHECK(reordered > 300);
}

TEST_CASE("routing property: swap-cycle reorders are idempotent and move only mismatched rows", "[routing]") {
  std::mt19937 g(7);
  for (int iter = 0; iter < 2000; ++iter) {
    const ReorderVersion v = uni(g, 0, 1) ? ReorderVersion::kFourRegion : ReorderVersion::kThreeRegion;
    const int t = uni(g, 0, 1) ? 1 : uni(g, 1, 600);
    const std::vector<RowInput> rows = random_batch(g, uni(g, 0, 3));
    INFO("iter " << iter);
    const ReorderResult a = reorder_rows(rows, v, t);
    std::vector<Region> target = a.regions;
    std::sort(target.begin(), target.end());
    for (std::size_t pos = 0; pos < rows.size(); ++pos) {
      const int from = a.order[pos];
      if (from != static_cast<int>(pos)) REQUIRE(a.regions[pos] != target[pos]);  // only mismatched positions change
      REQUIRE(a.regions[static_cast<std::size_t>(from)] == target[pos]);       // target reached
    }
    // Swaps touch only mismatched positions and replay to the order.
    std::vector<int> replay(rows.size());
    for (std::size_t i = 0; i < replay.size(); ++i) replay[i] = static_cast<int>(i);
    for (const auto& [i, j] : a.swaps) {
      REQUIRE(a.regions[static_cast<std::size_t>(i)] != target[static_cast<std::size_t>(i)]);
      REQUIRE(a.regions[static_cast<std::size_t>(j)] != target[static_cast<std::size_t>(j)]);
      std::swap(replay[static_cast<std::size_t>(i)], replay[static_cast<std::size_t>(j)]);
    }
    REQUIRE(replay == a.order);
    // Second application is a no-op.
    std::vector<RowInput> again;
    for (int idx : a.order) again.push_back(rows[static_cast<std::size_t>(idx)]);
    const ReorderResult b = reorder_rows(again, v, t);
    REQUIRE_FALSE(b.modified);
    REQUIRE(b.swaps.empty());
    // 2-region versions also put every decode first.
    const ReorderResult two = reorder_rows(rows, ReorderVersion::kTwoRegion, t);
    for (std::size_t pos = 1; pos < rows.size(); ++pos)
      REQUIRE(static_cast<int>(two.regions[static_cast<std::size_t>(two.order[pos - 1])]) <=
              static_cast<int>(two.regions[static_cast<std::size_t>(two.order[pos])]));
  }
}
