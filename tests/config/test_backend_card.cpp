// The backend card (config/backend_card.h): every fact of a few (profile, backend) pairs, with and
// without speculation, under vLLM 0.33.0 and older releases' profiles.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "config/backend_card.h"

using namespace mlasim;
using K = AttentionBackendKind;
using P = EngineProfile;
using S = QueryLenSupport;

namespace {

// DeepSeek-V3 (128 heads per rank) on an H200 (9.0) or a B200 (10.0), k speculative tokens.
BackendQuery deployment(int major, int k, bool sparse = false, bool parallel_drafting = false) {
  return BackendQuery{.major = major,
                      .use_sparse = sparse,
                      .index_topk = sparse ? std::optional<int>(2048) : std::nullopt,
                      .num_speculative_tokens = k,
                      .parallel_drafting = parallel_drafting};
}

struct Expected {
  S support;
  int class_threshold;
  int threshold;        // reorder_batch_threshold
  bool spec_as_decode;
  bool require_uniform;
  std::optional<int> indexer;
  const char* block_sizes;
};

void check(const BackendCard& c, const Expected& e) {
  CHECK(c.query_len_support == e.support);
  CHECK(c.class_threshold == e.class_threshold);
  CHECK(c.reorder_batch_threshold == e.threshold);
  CHECK(c.spec_as_decode == e.spec_as_decode);
  CHECK(c.require_uniform == e.require_uniform);
  CHECK(c.indexer_threshold == e.indexer);
  CHECK(kernel_block_sizes_text(c.kernel_block_sizes) == e.block_sizes);
}

}  // namespace

TEST_CASE("max_decode_query_len: 1 + k, 1 + 2k with parallel drafting", "[card]") {
  CHECK(max_decode_query_len(0, false) == 1);
  CHECK(max_decode_query_len(3, false) == 4);
  CHECK(max_decode_query_len(3, true) == 7);
}

TEST_CASE("card under vllm-0.33: the dense builders", "[card]") {
  const BackendCard flashmla = backend_card(P::kVllm033, K::kFlashMla, deployment(9, 0));
  CHECK(std::string(flashmla.vllm_name) == "FLASHMLA");
  CHECK(std::string(flashmla.builder_source) == "flashmla.py ~109-112");
  CHECK_FALSE(flashmla.sparse);
  CHECK_FALSE(flashmla.dense_mha_prefill);
  CHECK(flashmla.has_threshold);
  check(flashmla, {S::kUniform, 128, 128, true, true, 1, "[64]"});
  check(backend_card(P::kVllm033, K::kFlashMla, deployment(9, 3)), {S::kUniform, 128, 128, true, true, 4, "[64]"});

  check(backend_card(P::kVllm033, K::kFlashInferMla, deployment(10, 0)),
        {S::kVarlen, 1, 1, true, false, 1, "[32, 64]"});
  check(backend_card(P::kVllm033, K::kFlashInferMla, deployment(10, 3)),
        {S::kVarlen, 1, 4, true, false, 4, "[32, 64]"});
  check(backend_card(P::kVllm033, K::kFlashInferMla, deployment(10, 3, false, true)),
        {S::kVarlen, 1, 7, true, false, 7, "[32, 64]"});

  check(backend_card(P::kVllm033, K::kTritonMla, deployment(9, 0)),
        {S::kUniform, 1, 1, true, true, 1, "[MultipleOf(16)]"});
  check(backend_card(P::kVllm033, K::kTritonMla, deployment(9, 2)),
        {S::kUniform, 1, 3, true, true, 3, "[MultipleOf(16)]"});
  // SINGLE_ONLY: no spec-as-decode, so k leaves T at 1.
  check(backend_card(P::kVllm033, K::kCutlassMla, deployment(10, 2)), {S::kSingle, 1, 1, false, true, 3, "[128]"});
}

TEST_CASE("card under vllm-0.33: FLASHMLA_SPARSE by device and heads", "[card]") {
  const BackendCard h200 = backend_card(P::kVllm033, K::kFlashMlaSparse, deployment(9, 0, true));
  CHECK(h200.sparse);
  CHECK(h200.dense_mha_prefill);
  CHECK(std::string(h200.builder_source) == "flashmla_sparse.py ~347-380");
  // The DSA indexer opts out of the threshold vote in vLLM 0.33.
  check(h200, {S::kUniform, 256, 256, true, true, std::nullopt, "[MultipleOf(64)]"});
  check(backend_card(P::kVllm033, K::kFlashMlaSparse, deployment(9, 3, true)),
        {S::kUniform, 256, 256, true, true, std::nullopt, "[MultipleOf(64)]"});
  BackendQuery b200 = deployment(10, 3, true);
  b200.kv_cache_dtype = KvCacheDtype::kFp8DsMla;
  const BackendCard sm100 = backend_card(P::kVllm033, K::kFlashMlaSparse, b200);
  check(sm100, {S::kUniform, 1024, 1024, true, true, std::nullopt, "[MultipleOf(64)]"});
  CHECK(kernel_block_sizes_text(sm100.worker_kernel_block_sizes) == "[64]");  // the quantized-cache variant
  b200.num_heads_per_rank = 16;
  check(backend_card(P::kVllm033, K::kFlashMlaSparse, b200),
        {S::kUniform, 128, 128, true, true, std::nullopt, "[MultipleOf(64)]"});
  // Few heads: speculation lifts the sparse builder's threshold (spec-as-decode always).
  b200.num_speculative_tokens = 200;
  CHECK(backend_card(P::kVllm033, K::kFlashMlaSparse, b200).reorder_batch_threshold == 201);
  // No dense prefill on FLASHINFER_MLA_SPARSE_SM120.
  CHECK_FALSE(backend_card(P::kVllm033, K::kFlashInferMlaSparseSm120, deployment(12, 0, true)).dense_mha_prefill);
}

TEST_CASE("card under vllm-3region (0.14-0.18) and vllm-0.12", "[card]") {
  check(backend_card(P::kVllm3Region, K::kFlashInferMla, deployment(10, 0)),
        {S::kUniform, 1, 1, true, true, 1, "[32, 64]"});
  check(backend_card(P::kVllm3Region, K::kFlashInferMla, deployment(10, 3)),
        {S::kUniform, 1, 4, true, true, 4, "[32, 64]"});
  check(backend_card(P::kVllm3Region, K::kTritonMla, deployment(9, 3)),
        {S::kSingle, 1, 1, false, true, 4, "[MultipleOf(16)]"});
  check(backend_card(P::kVllm3Region, K::kFlashMla, deployment(9, 3)), {S::kUniform, 128, 128, true, true, 4, "[64]"});
  // A sparse backend before 0.33: no dense MHA prefill, the indexer votes.
  const BackendCard sparse = backend_card(P::kVllm3Region, K::kFlashMlaSparse, deployment(9, 1, true));
  CHECK_FALSE(sparse.dense_mha_prefill);
  CHECK(sparse.indexer_threshold == 2);
  CHECK(backend_card(P::kVllm012, K::kRocmAiterMla, deployment(9, 1)).query_len_support == S::kSingle);
  CHECK(backend_card(P::kVllm3Region, K::kRocmAiterMla, deployment(9, 1)).query_len_support == S::kUniform);
}

TEST_CASE("card under vllm-0.11 and vllm-2025-early", "[card]") {
  check(backend_card(P::kVllm011, K::kFlashAttnMla, deployment(9, 3)),
        {S::kVarlen, 512, 512, false, false, std::nullopt, "[MultipleOf(16)]"});
  check(backend_card(P::kVllm011, K::kFlashInferMla, deployment(10, 3)),
        {S::kVarlen, 1, 1, false, false, std::nullopt, "[32, 64]"});
  check(backend_card(P::kVllm011, K::kFlashMla, deployment(9, 0)), {S::kUniform, 1, 1, false, false, std::nullopt, "[64]"});
  const BackendCard early = backend_card(P::kVllm2025Early, K::kTritonMla, deployment(9, 2));
  CHECK_FALSE(early.has_threshold);
  check(early, {S::kUniform, 1, 1, false, false, std::nullopt, "[MultipleOf(16)]"});
}

TEST_CASE("card: a query-length support override feeds the raise and require_uniform", "[card]") {
  check(backend_card(P::kVllm033, K::kFlashInferMla, deployment(10, 2), S::kSingle),
        {S::kSingle, 1, 1, false, true, 3, "[32, 64]"});
  check(backend_card(P::kVllm033, K::kFlashMla, deployment(9, 2), S::kVarlen),
        {S::kVarlen, 128, 128, true, false, 3, "[64]"});
}
