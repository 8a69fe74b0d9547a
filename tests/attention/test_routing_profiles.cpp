// Engine profiles other than vllm-current (docs/spec/routing.md §1, §6, §7), sparse MLA, and
// RoutingConfig resolution (§3).
#include <catch2/catch.hpp>

#include "attention/reorder.h"
#include "attention/route.h"
#include "attention/sglang_dispatch.h"
#include "scenario/scenario_loader.h"
#include "routing_test_util.h"

using namespace mlasim;
using namespace mlasim::test;
using Split = std::array<int, 4>;
using Order = std::vector<int>;
using K = AttentionBackendKind;
using P = EngineProfile;

namespace {
constexpr RowInput A{1, 20, 10};
constexpr RowInput B{1, 0, 1};
constexpr RowInput C{5, 0, 5};
constexpr RowInput E{1, 1024, 1025};
constexpr RowInput G{100, 50, 200};
constexpr RowInput N{50, 0, 50};
}  // namespace

TEST_CASE("routing vllm-0.11: 2 regions move a new 1-token prompt to the front as a decode", "[routing]") {
  const RoutingConfig c = cfg(P::kVllm011, K::kFlashInferMla);
  CHECK_FALSE(c.require_uniform);
  const std::vector<RowInput> rows{C, B};
  const BatchRoute r = route_batch(rows, c);
  CHECK(r.order == Order{1, 0});
  CHECK(split_of(r) == Split{1, 1, 1, 5});
  CHECK(paths_of(r) == "mqa,mha");
  CHECK(r.rows[0].fresh_on_decode_path);
  // vllm-current leaves C, B in place and sends both to the prefill path.
  CHECK(split_of(route_batch(rows, current(K::kFlashInferMla))) == Split{0, 2, 0, 6});
}

TEST_CASE("routing vllm-0.11: i-th last decode swaps with the i-th first non-decode (not stable)", "[routing]") {
  const std::vector<RowInput> rows{C, A, B};
  const ReorderResult rr = reorder_rows(rows, ReorderVersion::kTwoRegion, 1);
  CHECK(rr.swaps == std::vector<std::pair<int, int>>{{0, 2}});
  CHECK(rr.order == Order{2, 1, 0});  // B, A, C
  const BatchRoute r = route_batch(rows, cfg(P::kVllm011, K::kFlashInferMla));
  CHECK(split_of(r) == Split{2, 1, 2, 5});
}

TEST_CASE("routing vllm-2025-early: the MLA builder's q == 1 rule", "[routing]") {
  const RoutingConfig c = cfg(P::kVllm2025Early, K::kFlashMla);
  CHECK(c.decode_threshold == 1);
  CHECK_FALSE(c.require_uniform);
  SECTION("a fresh 50-token prompt is a prefill even on FlashMLA") {
    const std::vector<RowInput> rows{N};
    const BatchRoute r = route_batch(rows, c);
    CHECK(split_of(r) == Split{0, 1, 0, 50});
    CHECK(paths_of(r) == "mha");
  }
  SECTION("it reorders: a new 1-token prompt behind a longer prompt moves to the front") {
    const std::vector<RowInput> rows{C, B};
    const BatchRoute r = route_batch(rows, c);
    CHECK(r.order == Order{1, 0});
    CHECK(r.modified);
    CHECK(split_of(r) == Split{1, 1, 1, 5});
    CHECK(r.rows[0].reason.rfind("early-2025 decode (q=1 == 1)", 0) == 0);
  }
  SECTION("q == 2 is not a decode even with a raised threshold") {
    const std::vector<RowInput> rows{{2, 30, 10}, A};
    const BatchRoute r = route_batch(rows, cfg(P::kVllm2025Early, K::kFlashInferMla, 1));
    CHECK(r.order == Order{1, 0});
    CHECK(split_of(r) == Split{1, 1, 1, 2});
  }
}

TEST_CASE("routing vllm-3region vs vllm-current: short extends", "[routing]") {
  // E (last 1-token chunk) is a decode under 3 regions, a short extend (region 1) under 4.
  const std::vector<RowInput> rows{E, A};
  const BatchRoute three = route_batch(rows, cfg(P::kVllm3Region, K::kFlashInferMla));
  CHECK(three.order == Order{0, 1});
  CHECK_FALSE(three.modified);
  CHECK(three.rows[0].region == Region::kDecode);
  const BatchRoute four = route_batch(rows, current(K::kFlashInferMla));
  CHECK(four.order == Order{1, 0});
  CHECK(four.modified);
  CHECK(four.rows[1].region == Region::kShortExtend);
  // Both split every row to the decode path (max query length <= threshold).
  CHECK(split_of(three) == Split{2, 0, 2, 0});
  CHECK(split_of(four) == Split{2, 0, 2, 0});
  // 3 regions: long extends and prefill keep their own regions.
  const std::vector<RowInput> mixed{B, G, A};
  const BatchRoute m3 = route_batch(mixed, cfg(P::kVllm3Region, K::kFlashInferMla));
  CHECK(m3.order == Order{2, 1, 0});
  CHECK(m3.rows[1].region == Region::kLongExtend);
}

TEST_CASE("routing vllm-0.12: every q <= T row first, a fresh short prompt included", "[routing]") {
  // C fresh 5, B fresh 1, G extend 100, A decode 1; FlashInfer-MLA is UNIFORM with T = 1.
  const std::vector<RowInput> rows{C, B, G, A};
  const BatchRoute r = route_batch(rows, cfg(P::kVllm012, K::kFlashInferMla));
  // Regions 3, 0, 2, 0 (0.12.0 utils.py:931-933): positions 0 and 3 mismatch, A and C swap.
  CHECK(r.order == Order{3, 1, 2, 0});
  CHECK(split_of(r) == Split{2, 2, 2, 105});
  CHECK(paths_of(r) == "mqa,mqa,mha,mha");
  CHECK(r.rows[1].fresh_on_decode_path);
  CHECK(r.rows[1].reason.rfind("region decode (q=1 <= T=1, nct ignored)", 0) == 0);
  CHECK(r.rows[2].reason.rfind("region extend (nct=50 > 0, q=100 > T=1)", 0) == 0);
  CHECK(r.rows[3].reason.rfind("region prefill (nct=0, q=5 > T=1)", 0) == 0);
  // vllm-3region puts both fresh prompts last: A, G, C, B and one decode.
  const BatchRoute three = route_batch(rows, cfg(P::kVllm3Region, K::kFlashInferMla));
  CHECK(three.order == Order{3, 2, 0, 1});
  CHECK(split_of(three) == Split{1, 3, 1, 106});
  // The backend table: ROCm-AITER-MLA and Triton-MLA SINGLE_ONLY (no spec raise), FlashInfer-MLA
  // UNIFORM (0.12.0 rocm_aiter_mla.py, triton_mla.py: no query_len_support; flashinfer_mla.py:33).
  CHECK(cfg(P::kVllm012, K::kRocmAiterMla, 2).decode_threshold == 1);
  CHECK(cfg(P::kVllm3Region, K::kRocmAiterMla, 2).decode_threshold == 3);
  CHECK(cfg(P::kVllm012, K::kTritonMla, 3).decode_threshold == 1);
  CHECK(cfg(P::kVllm012, K::kFlashInferMla, 3).decode_threshold == 4);
  CHECK(cfg(P::kVllm012, K::kFlashInferMla).require_uniform);
  CHECK(cfg(P::kVllm012, K::kFlashMla, 3).decode_threshold == 128);
  CHECK_FALSE(cfg(P::kVllm012, K::kFlashAttnMla).require_uniform);
}

TEST_CASE("routing strict: fresh and short-extend rows take the prefill path", "[routing]") {
  SECTION("a lone 1-token prompt") {
    const std::vector<RowInput> rows{B};
    const BatchRoute r = route_batch(rows, cfg(P::kStrict, K::kFlashInferMla));
    CHECK(split_of(r) == Split{0, 1, 0, 1});
    CHECK(r.counts.num_mha_tokens == 1);
    CHECK_FALSE(r.rows[0].fresh_on_decode_path);
  }
  SECTION("a fresh 50-token prompt on FlashMLA") {
    const std::vector<RowInput> rows{N};
    CHECK(paths_of(route_batch(rows, cfg(P::kStrict, K::kFlashMla))) == "mha");
  }
  SECTION("a decode then the last 1-token chunk") {
    const std::vector<RowInput> rows{E, A};
    const BatchRoute r = route_batch(rows, cfg(P::kStrict, K::kFlashInferMla));
    CHECK(r.order == Order{1, 0});
    CHECK(split_of(r) == Split{1, 1, 1, 1});
    CHECK(r.rows[1].reason.find("still prefilling (nct=1024 < P=1025)") != std::string::npos);
  }
  SECTION("decodes with a fresh prompt on FlashAttn-MLA") {
    const std::vector<RowInput> rows{{300, 0, 300}, A, {1, 40, 12}};
    const BatchRoute r = route_batch(rows, cfg(P::kStrict, K::kFlashAttnMla));
    CHECK(r.order == Order{2, 1, 0});  // A is already in its target region and does not move
    CHECK(split_of(r) == Split{2, 1, 2, 300});
  }
}

TEST_CASE("routing sglang: per-batch MHA or absorbed MLA", "[routing]") {
  SECTION("an all-new extend batch with a 1-token prompt takes MHA") {
    const std::vector<RowInput> rows{B, C};
    const BatchRoute r = route_batch(rows, cfg(P::kSglang, K::kFlashAttnMla));
    CHECK(r.order == Order{0, 1});
    CHECK_FALSE(r.modified);
    CHECK(paths_of(r) == "mha,mha");
    CHECK(r.counts.num_mha_tokens == 6);
    CHECK(split_of(r) == Split{0, 2, 0, 6});
    CHECK(r.batch_reason == "sglang EXTEND batch on fa3, sum(extend_prefix_lens) = 0: prefix sum 0, so MHA");
    const std::vector<RowInput> lone{B};
    CHECK(route_batch(lone, cfg(P::kSglang, K::kFlashInferMla)).counts.num_mha_tokens == 1);
  }
  SECTION("prefix sum between 1 and 8191: absorbed MLA for every row") {
    const std::vector<RowInput> rows{C, G};  // prefix sum 50
    const BatchRoute r = route_batch(rows, cfg(P::kSglang, K::kFlashMla));
    CHECK(paths_of(r) == "mqa,mqa");
    CHECK(r.counts.num_mqa_tokens == 105);
    CHECK(r.rows[0].fresh_on_decode_path);
    const std::vector<RowInput> edge{{100, 8191, 9000}};
    CHECK(paths_of(route_batch(edge, cfg(P::kSglang, K::kCutlassMla))) == "mqa");
  }
  SECTION("prefix sum >= 8192: MHA with chunked KV") {
    const std::vector<RowInput> rows{{100, 8192, 9000}};
    CHECK(paths_of(route_batch(rows, cfg(P::kSglang, K::kFlashInferMla))) == "mha");
  }
  SECTION("a new prompt mixed with a decode: MIXED, prefix sum 20, absorbed MLA") {
    const std::vector<RowInput> rows{B, A};
    const SglangDispatch d = sglang_dispatch(rows, cfg(P::kSglang, K::kFlashAttnMla));
    CHECK(d.mode == SglangForwardMode::kMixed);
    CHECK(d.sum_extend_prefix_lens == 20);
    const BatchRoute r = route_batch(rows, cfg(P::kSglang, K::kFlashAttnMla));
    CHECK(paths_of(r) == "mqa,mqa");
    CHECK(split_of(r) == Split{1, 1, 1, 1});
  }
  SECTION("decode and verify batches: absorbed MLA") {
    const std::vector<RowInput> rows{A, {1, 30, 5}};
    CHECK(sglang_dispatch(rows, cfg(P::kSglang, K::kRocmAiterMla)).mode == SglangForwardMode::kDecode);
    CHECK(paths_of(route_batch(rows, cfg(P::kSglang, K::kRocmAiterMla))) == "mqa,mqa");
    const std::vector<RowInput> verify{{4, 20, 10}, {4, 30, 10}};
    const RoutingConfig k3 = cfg(P::kSglang, K::kFlashInferMla, 3);
    CHECK(sglang_dispatch(verify, k3).mode == SglangForwardMode::kTargetVerify);
    CHECK(paths_of(route_batch(verify, k3)) == "mqa,mqa");
  }
  SECTION("triton: MHA only when the prefix sum is 0") {
    const RoutingConfig c = cfg(P::kSglang, K::kTritonMla);
    const std::vector<RowInput> fresh{B, C};
    const std::vector<RowInput> small{G};
    const std::vector<RowInput> big{{100, 20000, 30000}};
    CHECK(paths_of(route_batch(fresh, c)) == "mha,mha");
    CHECK(paths_of(route_batch(small, c)) == "mqa");
    CHECK(paths_of(route_batch(big, c)) == "mqa");
  }
  SECTION("aiter: MHA for any extend") {
    const RoutingConfig c = cfg(P::kSglang, K::kRocmAiterMla);
    const std::vector<RowInput> small{G};
    const std::vector<RowInput> mixed{B, A};
    CHECK(paths_of(route_batch(small, c)) == "mha");
    CHECK(paths_of(route_batch(mixed, c)) == "mha,mha");
  }
  SECTION("backend names") {
    CHECK(std::string(sglang_backend_name(K::kFlashMla)) == "flashmla");
    CHECK(std::string(sglang_backend_name(K::kFlashAttnMla)) == "fa3");
    CHECK(std::string(sglang_backend_name(K::kFlashInferMla)) == "flashinfer");
    CHECK(std::string(sglang_backend_name(K::kCutlassMla)) == "cutlass_mla");
    CHECK(std::string(sglang_backend_name(K::kTritonMla)) == "triton");
    CHECK(std::string(sglang_backend_name(K::kRocmAiterMla)) == "aiter");
  }
}

TEST_CASE("routing sparse MLA: every token on the decode path", "[routing]") {
  RoutingOptions o;
  o.backend = K::kFlashInferMla;
  o.sparse_mla = true;
  const RoutingConfig c = make_routing_config(o);
  const std::vector<RowInput> rows{C, B, G};
  const BatchRoute r = route_batch(rows, c);
  CHECK(r.counts.num_mqa_tokens == 106);
  CHECK(r.counts.num_mha_tokens == 0);
  CHECK(paths_of(r) == "mqa,mqa,mqa");
  CHECK(r.rows[0].reason.find("sparse MLA") != std::string::npos);
  // The indexer's threshold 1 + k lowers the runner's T (min over groups).
  o.backend = K::kFlashMla;
  CHECK(make_routing_config(o).decode_threshold == 1);
  o.num_speculative_tokens = 2;
  CHECK(make_routing_config(o).decode_threshold == 3);
}

TEST_CASE("routing sparse MLA on vLLM 0.33's sparse backends: dense MHA prefill within index_topk", "[routing]") {
  RoutingOptions o;
  o.backend = K::kFlashAttnMlaSparse;
  o.sparse_mla = true;
  o.index_topk = 300;
  BackendQuery h200_tp8;
  h200_tp8.use_sparse = true;
  h200_tp8.num_heads_per_rank = 8;
  h200_tp8.index_topk = 300;
  o.backend_query = h200_tp8;
  const RoutingConfig c = make_routing_config(o);
  CHECK(c.decode_threshold == 256);  // the sparse builder's, not the indexer's 1 + k (it opts out)
  CHECK_FALSE(c.require_uniform);
  CHECK(c.sparse_dense_mha_prefill);
  // A decode (q 1) and a 280-token prompt: the prompt is a prefill (280 > 256) that fits
  // index_topk, so it takes dense MHA.
  const std::vector<RowInput> fits{{1, 50, 40}, {280, 0, 280}};
  const BatchRoute a = route_batch(fits, c);
  CHECK(a.counts.num_mqa_tokens == 1);
  CHECK(a.counts.num_mha_tokens == 280);
  CHECK(paths_of(a) == "mqa,mha");
  // Past index_topk (seq 400 > 300): every token on the top-k MQA path.
  const std::vector<RowInput> past{{1, 50, 40}, {400, 0, 400}};
  const BatchRoute b = route_batch(past, c);
  CHECK(b.counts.num_mqa_tokens == 401);
  CHECK(b.counts.num_mha_tokens == 0);
  CHECK(b.counts.num_prefills == 1);  // the split is still the builder's
  CHECK(paths_of(b) == "mqa,mqa");
  // With context the prefill's sequence is nct + q: 30 + 280 = 310 > 300.
  const std::vector<RowInput> ctx{{280, 30, 600}};
  CHECK(route_batch(ctx, c).counts.num_mha_tokens == 0);
  // SM120's sparse backend has no dense prefill: every token on the decode path.
  o.backend = K::kFlashInferMlaSparseSm120;
  CHECK(route_batch(fits, make_routing_config(o)).counts.num_mha_tokens == 0);
}

TEST_CASE("routing sparse MLA with sparse_mla_force_mqa: no dense MHA prefill", "[routing][hy_v4]") {
  // HY-V4's learnable sink binds FLASHMLA_SPARSE and sets attention_config.sparse_mla_force_mqa
  // (models/hy_v4/nvidia/attention.py ~643-664); _use_sparse_mha then answers False
  // (mla_attention.py ~1238-1240): prefills that fit index_topk stay on the top-k MQA path.
  RoutingOptions o;
  o.backend = K::kFlashMlaSparse;
  o.sparse_mla = true;
  o.index_topk = 2048;
  BackendQuery h200;
  h200.use_sparse = true;
  h200.num_heads_per_rank = 32;
  h200.index_topk = 2048;
  o.backend_query = h200;
  const std::vector<RowInput> lone{{5, 0, 5}};
  const std::vector<RowInput> mixed{{1, 50, 40}, {280, 0, 280}};
  const RoutingConfig dense_prefill = make_routing_config(o);
  CHECK(dense_prefill.sparse_dense_mha_prefill);
  CHECK(route_batch(mixed, dense_prefill).counts.num_mha_tokens == 280);
  o.sparse_mla_force_mqa = true;
  const RoutingConfig forced = make_routing_config(o);
  CHECK_FALSE(forced.sparse_dense_mha_prefill);
  CHECK(forced.decode_threshold == 128);
  const BatchRoute a = route_batch(mixed, forced);
  CHECK(a.counts.num_mqa_tokens == 281);
  CHECK(a.counts.num_mha_tokens == 0);
  CHECK(a.counts.num_decodes == 1);
  CHECK(a.counts.num_prefills == 1);  // the split is still the builder's (280 > 128)
  CHECK(paths_of(a) == "mqa,mqa");
  CHECK(a.batch_reason.find("sparse_mla_force_mqa") != std::string::npos);
  // A lone 5-token prompt is a decode of the split (q <= 128), so a fresh prefill on the decode path.
  const BatchRoute b = route_batch(lone, forced);
  CHECK(b.counts.num_mqa_tokens == 5);
  CHECK(b.counts.num_decodes == 1);
  CHECK(b.rows[0].fresh_on_decode_path);
}

TEST_CASE("routing engine.sparse_mla_prefill: vllm, force_mqa, dense_mha", "[routing][sparse]") {
  // GLM-5 on 8 x H200 (FLASH_ATTN_MLA_SPARSE, T = 256) with index_topk 256: a 280-token prompt is
  // a prefill past index_topk; a 250-token one a decode of the split.
  const std::string path = std::string(MLASIM_SOURCE_DIR) + "/scenarios/deploy/glm5_dsa_past_index_topk.yaml";
  auto config = [&](const char* mode) {
    Result<Scenario> s = load_scenario_file(path, {std::string("engine.sparse_mla_prefill=") + mode});
    REQUIRE(s.ok());
    return make_routing_config(s.value());
  };
  const std::vector<RowInput> past{{1, 50, 40}, {280, 0, 280}};
  const std::vector<RowInput> within{{1, 50, 40}, {250, 0, 250}};  // a decode of the split (250 <= 256)
  const RoutingConfig vllm = config("vllm"), forced = config("force_mqa"), dense = config("dense_mha");
  CHECK(vllm.decode_threshold == 256);
  CHECK(vllm.sparse_dense_mha_prefill);
  CHECK_FALSE(vllm.sparse_mla_force_mqa);
  CHECK_FALSE(vllm.sparse_dense_mha_any_length);
  CHECK(route_batch(past, vllm).counts.num_mha_tokens == 0);  // 280 > index_topk: top-k MQA
  CHECK(paths_of(route_batch(past, vllm)) == "mqa,mqa");
  CHECK(forced.sparse_mla_force_mqa);
  CHECK_FALSE(forced.sparse_dense_mha_prefill);
  CHECK(route_batch(past, forced).counts.num_mqa_tokens == 281);
  CHECK(dense.sparse_dense_mha_any_length);
  CHECK(dense.sparse_dense_mha_prefill);
  const BatchRoute d = route_batch(past, dense);
  CHECK(d.counts.num_mqa_tokens == 1);
  CHECK(d.counts.num_mha_tokens == 280);
  CHECK(paths_of(d) == "mqa,mha");
  CHECK(d.batch_reason.find("dense_mha") != std::string::npos);
  // The split decides which rows are prefills under every mode: a decode of the split stays MQA.
  CHECK(paths_of(route_batch(within, dense)) == "mqa,mqa");
  // A dense model ignores the key.
  Result<Scenario> gguf = load_scenario_file(
      path, {"model.hf_config=../hf_configs/glm-5-gguf-as-deepseek-v3.json", "model.index_topk=null",
             "engine.sparse_mla_prefill=dense_mha"});
  REQUIRE(gguf.ok());
  CHECK_FALSE(gguf.value().model.index_topk.has_value());
  const RoutingConfig g = make_routing_config(gguf.value());
  CHECK_FALSE(g.sparse_mla);
  CHECK(g.decode_threshold == 512);  // FLASH_ATTN_MLA
  CHECK(paths_of(route_batch(past, g)) == "mqa,mqa");
}

TEST_CASE("routing config: backend thresholds, spec tokens, overrides (§3)", "[routing]") {
  CHECK(current(K::kFlashMla, 3).decode_threshold == 128);
  CHECK(current(K::kFlashMla, 200).decode_threshold == 201);
  CHECK(current(K::kFlashAttnMla, 600).decode_threshold == 601);
  CHECK(current(K::kFlashInferMla, 3).decode_threshold == 4);
  CHECK(current(K::kRocmAiterMla, 2).decode_threshold == 3);
  CHECK(current(K::kCutlassMla, 3).decode_threshold == 1);
  CHECK(current(K::kTritonMla, 3).decode_threshold == 4);  // uniform in vLLM 0.33 (triton_mla.py ~78)
  CHECK_FALSE(current(K::kFlashInferMla).require_uniform);  // varlen in vLLM 0.33 (flashinfer_mla.py ~141)
  CHECK(current(K::kFlashMla).require_uniform);
  CHECK_FALSE(current(K::kFlashAttnMla).require_uniform);
  CHECK(current(K::kTritonMla).require_uniform);
  CHECK_FALSE(cfg(P::kVllm011, K::kFlashMla).require_uniform);
  CHECK(cfg(P::kVllm3Region, K::kFlashMla).require_uniform);
  CHECK(cfg(P::kStrict, K::kFlashMla).require_uniform);

  const RoutingConfig over = make_routing_config(P::kVllm033, K::kFlashInferMla, 8, QueryLenSupport::kVarlen, 3);
  CHECK(over.decode_threshold == 8);
  CHECK_FALSE(over.require_uniform);
  CHECK(over.query_len_support == QueryLenSupport::kVarlen);
  // Support override to single: the spec term no longer raises T.
  CHECK(make_routing_config(P::kVllm033, K::kFlashInferMla, std::nullopt, QueryLenSupport::kSingle, 3).decode_threshold == 1);
  RoutingOptions pd;
  pd.backend = K::kFlashInferMla;
  pd.num_speculative_tokens = 3;
  pd.parallel_drafting = true;
  CHECK(make_routing_config(pd).decode_threshold == 7);

  Scenario s;
  s.engine.profile = P::kStrict;
  s.engine.attention_backend = K::kFlashMla;
  s.engine.reorder_batch_threshold = 16;
  s.scheduler.num_speculative_tokens = 1;
  s.scheduler.block_size = 64;
  s.scheduler.max_model_len = 0;
  s.model.max_position_embeddings = 4096;
  const RoutingConfig fs = make_routing_config(s);
  CHECK(fs.profile == P::kStrict);
  CHECK(fs.decode_threshold == 16);
  CHECK(fs.require_uniform);
  CHECK(fs.block_size == 64);
  CHECK(fs.max_model_len == 4096);
  CHECK_FALSE(fs.sparse_mla);
  s.model.index_topk = 2048;
  CHECK(make_routing_config(s).sparse_mla);

  const std::vector<std::optional<int>> groups{std::nullopt, 4, 2, std::nullopt};
  CHECK(min_threshold(groups) == 2);
  const std::vector<std::optional<int>> none{std::nullopt};
  CHECK_FALSE(min_threshold(none).has_value());
  for (P p : {P::kVllm2025Early, P::kVllm011, P::kVllm012, P::kVllm3Region, P::kVllm033, P::kStrict, P::kSglang})
    CHECK(std::string(modeled_vllm_version(p)).size() > 10);
}
