// vLLM 0.33's masked-MHA prefill of sparse MLA (config/masked_mha.h). The expected chunk lengths
// and workspace verdicts are what vLLM 0.33.0's own plan_mla_context_chunks and
// _masked_mha_workspace_fits return for the same inputs (run in its venv);
// tools/conformance/vllm_sparse_split.py checks whole batches against its _use_sparse_mha.
#include <catch2/catch.hpp>

#include "config/masked_mha.h"
#include "attention/route.h"
#include "scenario/scenario_loader.h"

namespace mlasim {
namespace {

BackendQuery blackwell(int heads_per_rank, int nope, int v) {
  BackendQuery q;
  q.major = 10;
  q.num_heads_per_rank = heads_per_rank;
  q.qk_nope_head_dim = nope;
  q.v_head_dim = v;
  q.use_sparse = true;
  q.index_topk = 2048;
  return q;
}

using K = AttentionBackendKind;

TEST_CASE("masked MHA: available on SM100 for the kernel's shapes, an unquantized cache and a table row",
          "[routing][sparse]") {
  // DeepSeek-V3.2 (128 heads, 128/64/128) at TP 8: FA4 runs on FlashInfer's rows.
  const MaskedMhaRule v32 = masked_mha_rule(blackwell(16, 128, 128), K::kFlashAttnMlaSparseFa4, 8, 163840, 16, 64, 2048);
  REQUIRE(v32.available);
  CHECK(v32.pure_prefill.size() == 5);
  CHECK(v32.pure_prefill[4] == std::pair{32768, 32768});
  CHECK_FALSE(v32.with_context.has_value());
  CHECK(v32.workspace_size == 16 * 2048);  // min(max(8 * 163840, 4 * 16 * 64), 65536, 16 * 2048)
  CHECK(masked_mha_by_lengths(v32, 1024, 3000, false));       // seq <= 4096: query >= 1024
  CHECK_FALSE(masked_mha_by_lengths(v32, 1023, 3000, false));
  CHECK_FALSE(masked_mha_by_lengths(v32, 40000, 40000, true));  // past every range
  // FLASHINFER_MLA_SPARSE has no TP 4 row for (192, 128); FLASHMLA_SPARSE has.
  CHECK_FALSE(masked_mha_rule(blackwell(32, 128, 128), K::kFlashInferMlaSparse, 4, 163840, 16, 64, 2048).available);
  CHECK(masked_mha_rule(blackwell(32, 128, 128), K::kFlashMlaSparse, 4, 163840, 16, 64, 2048).available);
  // GLM-5 (64 heads, 192/64/256) at TP 8 with a bf16 cache: context batches have their own ranges.
  const MaskedMhaRule glm5 = masked_mha_rule(blackwell(8, 192, 256), K::kFlashInferMlaSparse, 8, 202752, 16, 64, 2048);
  REQUIRE(glm5.available);
  CHECK(masked_mha_by_lengths(glm5, 1, 60000, false));             // pure prefill: seq <= 64K, any query
  CHECK_FALSE(masked_mha_by_lengths(glm5, 1000, 21000, true));     // seq <= 24K needs query >= 8K
  CHECK(masked_mha_by_lengths(glm5, 8192, 21000, true));
  // Not on Hopper, not with fp8, not for other shapes.
  BackendQuery hopper = blackwell(8, 192, 256);
  hopper.major = 9;
  CHECK_FALSE(masked_mha_rule(hopper, K::kFlashInferMlaSparse, 8, 202752, 16, 64, 2048).available);
  BackendQuery fp8 = blackwell(8, 192, 256);
  fp8.kv_cache_dtype = KvCacheDtype::kFp8E4m3;  // GLM-5's auto on SM10x
  CHECK_FALSE(masked_mha_rule(fp8, K::kFlashInferMlaSparse, 8, 202752, 16, 64, 2048).available);
  CHECK_FALSE(masked_mha_rule(blackwell(16, 192, 256), K::kFlashInferMlaSparse, 8, 202752, 16, 64, 2048).available);
}

TEST_CASE("masked MHA: the context chunks' longest piece, as plan_mla_context_chunks packs them", "[routing][sparse]") {
  auto longest = [](std::vector<int> ctx, int w, int b) { return max_context_chunk_seq_len(ctx, w, b); };
  CHECK(longest({100, 0, 50}, 1024, 64) == 100);
  CHECK(longest({5000, 3000}, 4096, 64) == 4096);
  CHECK(longest({1000, 1000, 3000}, 2048, 64) == 2048);  // 48 rows left after 2000: no aligned split there
  CHECK(longest({70000}, 32768, 64) == 32768);
  CHECK(longest({65, 4000, 0, 4097}, 4096, 64) == 4096);
  CHECK(longest({1, 1, 5000}, 4096, 16) == 4080);
  CHECK(longest({0, 0}, 4096, 16) == 0);
}

TEST_CASE("masked MHA: the top-k masks' 128 MiB workspace", "[routing][sparse]") {
  CHECK(masked_mha_workspace_fits(1, 8192, 0));
  CHECK(masked_mha_workspace_fits(4, 16384, 0));
  CHECK_FALSE(masked_mha_workspace_fits(5, 16384, 0));
  CHECK_FALSE(masked_mha_workspace_fits(16, 1024, 100000));
  CHECK(masked_mha_workspace_fits(16, 1024, 60000));
  CHECK(masked_mha_workspace_fits(128, 128, 65536));
  CHECK_FALSE(masked_mha_workspace_fits(129, 128, 65536));
  CHECK(masked_mha_workspace_fits(2, 100, 2000000));
}

TEST_CASE("masked MHA in the split: DeepSeek-V3.2 on 8 x B200 sends a long prefill to MHA", "[routing][sparse]") {
  // DeepSeek-V3.2 on 8 GPUs of `gpu`, the backend and T vLLM 0.33 picks.
  auto v32_on = [](const std::string& gpu) {
    Result<Scenario> s = load_scenario_text(
        "version: 1\nmodel: {hf_config: " MLASIM_SOURCE_DIR "/scenarios/hf_configs/deepseek-v3.2.json, num_layers: 1}\n"
        "engine: {profile: vllm-0.33, gpu: " + gpu + "}\nparallel: {tensor_parallel_size: 8}\n"
        "requests: [{id: a, prompt_len: 4}]\n",
        "v32_" + gpu + ".yaml");
    REQUIRE(s.ok());
    return make_routing_config(s.value());
  };
  const RoutingConfig c = v32_on("b200");
  CHECK(c.backend == K::kFlashAttnMlaSparseFa4);
  REQUIRE(c.masked_mha.available);
  // A decode and a 3000-token prompt (past index_topk 2048, within 4096 with query >= 1024).
  const BatchRoute a = route_batch(std::vector<RowInput>{{1, 40, 30}, {3000, 0, 3000}}, c, false);
  CHECK(a.counts.num_mqa_tokens == 1);
  CHECK(a.counts.num_mha_tokens == 3000);
  CHECK(a.batch_reason.find("masked MHA") != std::string::npos);
  // Query 1000 < 1024 at seq 3000: top-k MQA.
  CHECK(route_batch(std::vector<RowInput>{{1, 40, 30}, {1000, 2000, 3000}}, c, false).counts.num_mha_tokens == 0);
  // Within index_topk: the dense MHA prefill, as before.
  CHECK(route_batch(std::vector<RowInput>{{1, 40, 30}, {2000, 0, 2000}}, c, false).counts.num_mha_tokens == 2000);
  // On an H200 the same long prompt stays on top-k MQA.
  const RoutingConfig hc = v32_on("h200");
  CHECK_FALSE(hc.masked_mha.available);
  CHECK(route_batch(std::vector<RowInput>{{1, 40, 30}, {3000, 0, 3000}}, hc, false).counts.num_mha_tokens == 0);
}

}  // namespace
}  // namespace mlasim
