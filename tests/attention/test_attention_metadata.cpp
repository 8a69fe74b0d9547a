// AttentionMetadata and chunked-context metadata (docs/spec/routing.md §4): exact examples, slot
// mapping, validate() catching corruption.
#include <catch2/catch.hpp>

#include <numeric>

#include "attention/attention_metadata.h"
#include "attention/chunked_context.h"
#include "routing_test_util.h"

using namespace mlasim;
using namespace mlasim::test;
using K = AttentionBackendKind;
using Grid = std::vector<std::vector<int>>;

namespace {

// Block tables covering each row's seq_len, block ids distinct and non-contiguous.
std::vector<std::vector<int>> block_tables(const BatchRoute& r, int b) {
  std::vector<std::vector<int>> t;
  int next = 3;
  for (const RowRoute& row : r.rows) {
    std::vector<int> ids;
    for (int i = 0; i < (row.nct + row.q + b - 1) / b; ++i) ids.push_back(next += 2);
    t.push_back(std::move(ids));
  }
  return t;
}

}  // namespace

TEST_CASE("chunked context: workspace size", "[routing]") {
  CHECK(chunked_prefill_workspace_size(163840, 128, 64) == 65536);
  CHECK(chunked_prefill_workspace_size(2048, 128, 16) == 16384);
  CHECK(chunked_prefill_workspace_size(1024, 4096, 64) == 262144);  // max_num_seqs * B floor
  CHECK(chunked_prefill_workspace_size(163840, 128, 16, kWorkspaceCapEarly2025) == 131072);
  RoutingConfig c = cfg(EngineProfile::kVllm2025Early, K::kFlashMla);
  c.block_size = 16;
  CHECK(chunked_prefill_workspace_size(c) == 131072);
  c.profile = EngineProfile::kVllm033;
  CHECK(chunked_prefill_workspace_size(c) == 65536);
}

TEST_CASE("chunked context: §4 examples", "[routing]") {
  SECTION("contexts [1000, 70000]") {
    const std::vector<int> ctx{1000, 70000};
    const ChunkedContextMetadata m = build_chunked_context(ctx, 65536, 64);
    CHECK(m.num_prefills_with_context == 2);
    CHECK(m.max_context_chunk == 32768);
    CHECK(m.num_chunks == 3);
    CHECK(m.seq_lens == Grid{{1000, 32768}, {0, 32768}, {0, 4464}});
    CHECK(m.starts == Grid{{0, 0}, {32768, 32768}, {65536, 65536}});
    CHECK(m.cu_seq_lens == Grid{{0, 1000, 33768}, {0, 0, 32768}, {0, 0, 4464}});
    CHECK(m.validate(64).empty());
  }
  SECTION("contexts [40000 x3]") {
    const std::vector<int> ctx{40000, 40000, 40000};
    const ChunkedContextMetadata m = build_chunked_context(ctx, 65536, 64);
    CHECK(m.max_context_chunk == 21824);
    CHECK(m.num_chunks == 2);
    CHECK(m.seq_lens == Grid{{21824, 21824, 21824}, {18176, 18176, 18176}});
    CHECK(m.chunk_total_tokens == std::vector<int>{65472, 54528});
    CHECK(m.validate(64).empty());
  }
  SECTION("no context: no chunks") {
    const std::vector<int> ctx{0, 0};
    const ChunkedContextMetadata m = build_chunked_context(ctx, 65536, 64);
    CHECK(m.num_chunks == 0);
    CHECK(m.max_context_chunk == 0);
    CHECK(m.validate(64).empty());
  }
}

TEST_CASE("attention metadata: long extends with context first, then a fresh prefill", "[routing]") {
  RoutingConfig c = current(K::kFlashAttnMla);
  c.block_size = 64;
  const std::vector<RowInput> rows{{600, 0, 600}, {600, 70000, 80000}, {600, 1000, 2000}};
  const BatchRoute r = route_batch(rows, c);
  CHECK(r.order == std::vector<int>{2, 1, 0});  // long extends before the fresh prefill
  const auto tables = block_tables(r, c.block_size);
  const AttentionMetadata m = build_attention_metadata(r, c, tables);
  REQUIRE(m.validate().empty());
  CHECK(m.counts.num_prefills == 3);
  CHECK(m.counts.num_mha_tokens == 1800);
  CHECK_FALSE(m.decode.has_value());
  REQUIRE(m.prefill.has_value());
  const ChunkedContextMetadata& cc = m.prefill->chunked_context;
  CHECK(cc.workspace_size == 65536);
  CHECK(cc.context_lens == std::vector<int>{1000, 70000, 0});
  CHECK(cc.max_context_chunk == 32768);
  CHECK(cc.seq_lens == Grid{{1000, 32768, 0}, {0, 32768, 0}, {0, 4464, 0}});
  CHECK(m.max_seq_len == 70600);
  CHECK(m.query_start_loc == std::vector<int>{0, 600, 1200, 1800});
}

TEST_CASE("attention metadata: fields, slot mapping and decode metadata", "[routing]") {
  RoutingConfig c = current(K::kFlashInferMla);
  c.block_size = 4;
  // A(1,20,10), C(5,0,5), X(4,5,9) a chunk continuation with q=4.
  const std::vector<RowInput> rows{{5, 0, 5}, {1, 20, 10}, {4, 5, 9}};
  const BatchRoute r = route_batch(rows, c);
  CHECK(r.order == std::vector<int>{1, 2, 0});  // decode, long extend, prefill
  const std::vector<std::vector<int>> tables{{10, 11, 12, 13, 14, 15}, {7, 3, 9}, {20, 21}};
  const AttentionMetadata m = build_attention_metadata(r, c, tables);
  REQUIRE(m.validate().empty());
  CHECK(m.num_reqs == 3);
  CHECK(m.num_actual_tokens == 10);
  CHECK(m.query_start_loc == std::vector<int>{0, 1, 5, 10});
  CHECK(m.seq_lens == std::vector<int>{21, 9, 5});
  CHECK(m.context_lens == std::vector<int>{20, 5, 0});
  CHECK(m.is_prefilling == std::vector<std::uint8_t>{0, 1, 1});
  CHECK(m.positions == std::vector<int>{20, 5, 6, 7, 8, 0, 1, 2, 3, 4});
  // Row 0: position 20 -> block 20/4 = 5 -> id 15 -> 60. Row 1: positions 5..8 over [7, 3, 9].
  CHECK(m.slot_mapping == std::vector<int>{60, 13, 14, 15, 36, 80, 81, 82, 83, 84});
  CHECK(m.max_query_len == 5);
  CHECK(m.max_seq_len == 21);
  CHECK(m.counts.num_decodes == 1);
  CHECK(m.counts.num_decode_tokens == 1);
  CHECK(m.counts.num_mqa_tokens == 1);
  CHECK(m.counts.num_mha_tokens == 9);
  CHECK(m.regions == std::vector<Region>{Region::kDecode, Region::kLongExtend, Region::kPrefill});
  CHECK(m.paths == std::vector<MlaPath>{MlaPath::kMqa, MlaPath::kMha, MlaPath::kMha});
  REQUIRE(m.decode.has_value());
  CHECK(m.decode->seq_lens == std::vector<int>{21});
  CHECK(m.block_table[0] == std::vector<int>{10, 11, 12, 13, 14, 15});  // the decode row's table
  REQUIRE(m.prefill.has_value());
  CHECK(m.prefill->row_start == 1);
  CHECK(m.prefill->query_start_loc == std::vector<int>{0, 4, 9});
  CHECK(m.prefill->chunked_context.context_lens == std::vector<int>{5, 0});
  CHECK(m.prefill->chunked_context.num_chunks == 1);

  SECTION("the callback form gives the same metadata") {
    const AttentionMetadata m2 = build_attention_metadata(
        r, c, [&](int row) -> std::span<const int> { return tables[static_cast<std::size_t>(row)]; });
    CHECK(m2.slot_mapping == m.slot_mapping);
  }
}

TEST_CASE("attention metadata: validate() catches corruption", "[routing]") {
  RoutingConfig c = current(K::kFlashInferMla);
  c.block_size = 4;
  const std::vector<RowInput> rows{{1, 20, 10}, {4, 5, 9}, {5, 0, 5}};
  const BatchRoute r = route_batch(rows, c);
  const AttentionMetadata good = build_attention_metadata(r, c, block_tables(r, c.block_size));
  REQUIRE(good.validate().empty());
  auto broken = [&](auto&& corrupt) {
    AttentionMetadata m = good;
    corrupt(m);
    return m.validate();
  };
  CHECK(broken([](AttentionMetadata& m) { m.slot_mapping[2] += 1; }).rfind("slot_mapping[2]", 0) == 0);
  CHECK(broken([](AttentionMetadata& m) { m.query_start_loc[1] = 3; }) != "");
  CHECK(broken([](AttentionMetadata& m) { m.block_table[1].pop_back(); }).find("outside the row's block table") != std::string::npos);
  CHECK(broken([](AttentionMetadata& m) { m.counts.num_decodes += 1; }) == "num_decodes + num_prefills != num_reqs");
  CHECK(broken([](AttentionMetadata& m) { m.counts.num_mqa_tokens += 1; }) == "num_mqa_tokens + num_mha_tokens != num_actual_tokens");
  CHECK(broken([](AttentionMetadata& m) { m.is_decode[2] = true; }) ==
        "num_decodes/num_decode_tokens disagree with the per-row split");
  CHECK(broken([](AttentionMetadata& m) {
          m.is_decode[2] = true;  // counts made consistent, order not
          m.counts.num_decodes = 2;
          m.counts.num_prefills = 1;
          m.counts.num_decode_tokens = 6;
          m.counts.num_prefill_tokens = 4;
        }) == "row 1: the decodes must be rows [0, num_decodes)");
  CHECK(broken([](AttentionMetadata& m) { m.paths[2] = MlaPath::kMqa; }) == "decode-path row 2 after a prefill-path row");
  CHECK(broken([](AttentionMetadata& m) { m.positions[0] = 0; }) == "positions[0] != nct + j");
  CHECK(broken([](AttentionMetadata& m) { m.seq_lens[0] = 1; }) == "seq_lens[0] != context_lens + q");
  CHECK(broken([](AttentionMetadata& m) { m.max_seq_len = 1; }).rfind("max_seq_len", 0) == 0);
  CHECK(broken([](AttentionMetadata& m) { m.prefill->chunked_context.seq_lens[0][0] = 3; }).rfind("chunked context:", 0) == 0);
  CHECK(broken([](AttentionMetadata& m) { m.decode.reset(); }) == "decode metadata present iff a row takes the decode path");
}
