// docs/spec/routing.md §5 worked examples (vllm-current), §1's reorder example, and the seed
// observation: exact orders, split tuples and paths.
#include <catch2/catch.hpp>

#include "attention/route.h"
#include "routing_test_util.h"

using namespace mlasim;
using namespace mlasim::test;
using Split = std::array<int, 4>;
using Order = std::vector<int>;

namespace {

constexpr RowInput A{1, 20, 10};       // an ordinary decode row
constexpr RowInput B{1, 0, 1};         // a brand-new 1-token prompt
constexpr RowInput C{5, 0, 5};         // a brand-new 5-token prompt
constexpr RowInput E{1, 1024, 1025};   // last 1-token chunk
constexpr RowInput F{1, 32, 33};       // full prefix-cache hit, 1 token recomputed
constexpr RowInput G{100, 50, 200};    // a long extend
constexpr RowInput N{50, 0, 50};       // a fresh 50-token prompt

struct Case {
  const char* name;
  AttentionBackendKind backend;
  int k;
  std::vector<RowInput> rows;
  Order order;
  Split split;
  const char* paths;
};

}  // namespace

TEST_CASE("routing §5: every worked example (vllm-current)", "[routing]") {
  using K = AttentionBackendKind;
  const std::vector<Case> cases = {
      {"T=1 B alone", K::kFlashInferMla, 0, {B}, {0}, {1, 0, 1, 0}, "mqa"},
      {"T=1 A,B", K::kFlashInferMla, 0, {A, B}, {0, 1}, {2, 0, 2, 0}, "mqa,mqa"},
      {"T=1 B,C", K::kFlashInferMla, 0, {B, C}, {0, 1}, {1, 1, 1, 5}, "mqa,mha"},
      {"T=1 C,B", K::kFlashInferMla, 0, {C, B}, {0, 1}, {0, 2, 0, 6}, "mha,mha"},
      {"T=1 A,C,B", K::kFlashInferMla, 0, {A, C, B}, {0, 1, 2}, {1, 2, 1, 6}, "mqa,mha,mha"},
      {"T=1 C,E", K::kFlashInferMla, 0, {C, E}, {1, 0}, {1, 1, 1, 5}, "mqa,mha"},
      {"T=1 G,F", K::kFlashInferMla, 0, {G, F}, {1, 0}, {1, 1, 1, 100}, "mqa,mha"},
      {"FLASHMLA N alone", K::kFlashMla, 0, {N}, {0}, {1, 0, 50, 0}, "mqa"},
      {"FLASHMLA A,N", K::kFlashMla, 0, {A, N}, {0, 1}, {1, 1, 1, 50}, "mqa,mha"},
      {"FLASH_ATTN_MLA P,A,B", K::kFlashAttnMla, 0, {{600, 0, 600}, A, B}, {1, 0, 2}, {1, 2, 1, 601}, "mqa,mha,mha"},
      {"TRITON k=3 A,B,N", K::kTritonMla, 3, {{4, 20, 10}, {4, 30, 10}, {4, 0, 4}}, {0, 1, 2}, {3, 0, 12, 0}, "mqa,mqa,mqa"},
      {"TRITON k=3 A,B,N3", K::kTritonMla, 3, {{4, 20, 10}, {4, 30, 10}, {3, 0, 3}}, {0, 1, 2}, {2, 1, 8, 3}, "mqa,mqa,mha"},
      // FlashInfer-MLA is varlen in vLLM 0.33 (flashinfer_mla.py ~141): max_q 4 <= T 4 puts the
      // fresh 3-token prompt on the decode path too.
      {"FLASHINFER k=3 A,B,N3", K::kFlashInferMla, 3, {{4, 20, 10}, {4, 30, 10}, {3, 0, 3}}, {0, 1, 2}, {3, 0, 11, 0}, "mqa,mqa,mqa"},
  };
  for (const Case& c : cases) {
    // T=1 rows hold for every T=1 backend (uniform FlashInfer/AITER, single-token Cutlass/Triton).
    std::vector<K> backends{c.backend};
    if (c.backend == K::kFlashInferMla && c.k == 0) backends = {K::kFlashInferMla, K::kRocmAiterMla, K::kCutlassMla, K::kTritonMla};
    for (K b : backends) {
      INFO(c.name << " on " << to_string(b));
      const BatchRoute r = route_batch(c.rows, current(b, c.k));
      CHECK(r.order == c.order);
      CHECK(split_of(r) == c.split);
      CHECK(paths_of(r) == c.paths);
      CHECK(r.counts.num_mqa_tokens == c.split[2]);
      CHECK(r.counts.num_mha_tokens == c.split[3]);
    }
  }
}

TEST_CASE("routing §5: thresholds of the examples' backends", "[routing]") {
  CHECK(current(AttentionBackendKind::kFlashInferMla).decode_threshold == 1);
  CHECK(current(AttentionBackendKind::kFlashMla).decode_threshold == 128);
  CHECK(current(AttentionBackendKind::kFlashAttnMla).decode_threshold == 512);
  CHECK(current(AttentionBackendKind::kFlashInferMla, 3).decode_threshold == 4);
}

TEST_CASE("routing §1: [P(300,new), Q(200,new), A] with T=512 becomes [A, Q, P]", "[routing]") {
  const std::vector<RowInput> rows{{300, 0, 300}, {200, 0, 200}, A};
  const BatchRoute r = route_batch(rows, current(AttentionBackendKind::kFlashAttnMla));
  CHECK(r.order == Order{2, 1, 0});
  CHECK(r.modified);
  CHECK(r.rows[0].region == Region::kDecode);
  CHECK(r.rows[1].region == Region::kPrefill);
  CHECK(r.rows[2].region == Region::kPrefill);
  // Varlen, max_q 300 <= 512: every row (both fresh prompts too) on the decode path.
  CHECK(split_of(r) == Split{3, 0, 501, 0});
  CHECK(paths_of(r) == "mqa,mqa,mqa");
  CHECK(r.rows[1].fresh_on_decode_path);
  CHECK(r.rows[2].fresh_on_decode_path);
}

TEST_CASE("routing: the seed observation", "[routing]") {
  const RoutingConfig t1 = current(AttentionBackendKind::kFlashInferMla);
  SECTION("a lone 1-token prompt on T=1: num_mqa=1 num_mha=0") {
    const std::vector<RowInput> rows{{1, 0, 1}};
    const BatchRoute r = route_batch(rows, t1);
    CHECK(r.counts.num_mqa_tokens == 1);
    CHECK(r.counts.num_mha_tokens == 0);
    CHECK(r.counts.num_actual_tokens() == 1);
    CHECK(r.rows[0].fresh_on_decode_path);
    CHECK(r.rows[0].reason ==
          "region 3 prefill (nct=0); split: every row is a decode: max query length 1 <= threshold 1 -> mqa");
  }
  SECTION("a lone 5-token prompt: num_mqa=0 num_mha=5") {
    const std::vector<RowInput> rows{{5, 0, 5}};
    const BatchRoute r = route_batch(rows, t1);
    CHECK(r.counts.num_mqa_tokens == 0);
    CHECK(r.counts.num_mha_tokens == 5);
    CHECK_FALSE(r.rows[0].fresh_on_decode_path);
    CHECK(r.rows[0].reason == "region 3 prefill (nct=0); split: every row is a prefill: the first row's query length 5 > threshold 1 -> mha");
  }
  SECTION("FlashMLA: a fresh 50-token prompt takes the decode path") {
    const std::vector<RowInput> rows{N};
    const BatchRoute r = route_batch(rows, current(AttentionBackendKind::kFlashMla));
    CHECK(r.counts.num_mqa_tokens == 50);
    CHECK(r.counts.num_mha_tokens == 0);
    CHECK(r.rows[0].fresh_on_decode_path);
    CHECK(r.split_rule == SplitRule::kUniformPadded);
  }
}

TEST_CASE("routing: reasons name the first prefill row and why", "[routing]") {
  const std::vector<RowInput> rows{A, C, B};
  // Triton-MLA: uniform query lengths, T = 1 (triton_mla.py ~78).
  const BatchRoute r = route_batch(rows, current(AttentionBackendKind::kTritonMla));
  CHECK(r.rows[0].reason ==
        "region 0 decode (nct=20 >= P=10, q=1 <= T=1); split: a decode: before the first prefill row 1 -> mqa");
  CHECK(r.rows[1].reason ==
        "region 3 prefill (nct=0); split: the first prefill row: query length 5 != the first row's 1 (uniform query lengths required) -> mha");
  CHECK(r.rows[2].reason ==
        "region 3 prefill (nct=0); split: a prefill: after the first prefill row 1, whatever its query length -> mha");
}

TEST_CASE("routing: --no-reorder splits the rows as given", "[routing]") {
  const std::vector<RowInput> rows{{600, 0, 600}, A, B};
  const BatchRoute r = route_batch(rows, current(AttentionBackendKind::kFlashAttnMla), /*reorder=*/false);
  CHECK(r.order == Order{0, 1, 2});
  CHECK_FALSE(r.modified);
  CHECK(split_of(r) == Split{0, 3, 0, 602});
  CHECK(r.rows[1].region == Region::kDecode);  // regions still reported
  CHECK(paths_of(r) == "mha,mha,mha");
}
