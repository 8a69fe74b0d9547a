// mlasim's backend selection against a table vLLM 0.33.0 itself computed (the independent oracle):
// tests/data/vllm033_selection.json holds, per cell of shipped config (the 11 of
// scenarios/hf_configs: every single-group MLA family) x GPU (A100, H200, B200, RTX PRO 6000) x KV
// dtype (auto, fp8) x TP (1, 8) x --block-size (unset, 64, 128, 16) x k (0, 1, 3), what vLLM's
// ModelConfig (its refusals), _get_backend_priorities, validate_configuration, block-size
// resolution, select_common_block_size, metadata builders and use_v2_model_runner gave (written by
// tools/conformance/vllm_selection.py --vllm-only --expect-table, then compacted: the cells of the
// five class-default configs appended). Each cell is evaluated here the way `mlasim deploy` does:
// the deployment's scenario, loaded.
#include <catch2/catch.hpp>

#include "scenario/scenario_loader.h"
#include "deploy/deploy_report.h"
#include "base/formats/json_value.h"
#include "tests/deploy/vllm033_table.h"

using namespace mlasim;

namespace {

using test::text;
int integer(const JsonValue* v) { return static_cast<int>(test::integer(v)); }

// Every cell of one table: the deployment's scenario loaded as `mlasim deploy` loads it, its
// selection against vLLM's; `cells`, `accepted`, `refused`: the table's counts.
void check_table(const std::string& file, std::size_t cells_expected, int accepted_expected, int refused_expected) {
  const std::string root = MLASIM_SOURCE_DIR;
  Result<JsonValue> doc = parse_json(test::read_table(root + "/tests/data/" + file), file);
  REQUIRE(doc.ok());
  const JsonValue& lists = *doc.value().find("candidate_lists");
  const auto& cells = doc.value().find("cells")->array();
  REQUIRE(cells.size() == cells_expected);
  int accepted = 0, refused = 0;
  for (const JsonValue& c : cells) {
    DeployOptions o = test::deploy_options(c, root, "block_size_arg");
    o.num_speculative_tokens = integer(c.find("k"));
    const std::string cell = text(c.find("config")) + " " + o.gpu + " kv=" + o.kv_cache_dtype + " tp=" +
                             std::to_string(o.tensor_parallel_size) + " bs=" +
                             (o.block_size ? std::to_string(*o.block_size) : "auto") + " k=" +
                             std::to_string(o.num_speculative_tokens);
    INFO(cell);
    Result<Scenario> s = load_scenario_text(deployment_scenario_yaml(o, o.hf_config), root + "/scenarios/hf_configs/d.yaml");
    const bool vllm_refused = std::get<bool>(c.find("refused")->v);
    CHECK(s.ok() == !vllm_refused);
    if (!s.ok() || vllm_refused) {
      ++refused;
      continue;
    }
    ++accepted;
    const BackendSelection& sel = s.value().deployment.selection;
    CHECK(vllm_backend_name(sel.backend) == text(c.find("backend")));
    CHECK(sel.block_size == integer(c.find("block_size")));
    CHECK(sel.kernel_block_size == integer(c.find("kernel_block_size")));
    CHECK(sel.card.reorder_batch_threshold == integer(c.find("reorder_threshold")));
    CHECK(to_string(sel.card.query_len_support) == text(c.find("query_len_support")));
    CHECK(to_string(sel.model_runner) == text(c.find("model_runner")));
    CHECK(to_string(s.value().deployment.effective_kv_cache_dtype) == text(c.find("kv_cache_dtype")));
    if (const JsonValue* forced = c.find("sparse_mla_force_mqa"))
      CHECK(sel.sparse_mla_force_mqa == std::get<bool>(forced->v));
    const auto& expected = lists.array().at(static_cast<std::size_t>(integer(c.find("candidates")))).array();
    REQUIRE(sel.candidates.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& pair = expected[i].array();
      CHECK(vllm_backend_name(sel.candidates[i].kind) == pair[0].string());
      std::vector<std::string> reasons;
      for (const auto& r : pair[1].array()) reasons.push_back(r.string());
      CHECK(sel.candidates[i].reasons == reasons);
    }
  }
  CHECK(accepted == accepted_expected);
  CHECK(refused == refused_expected);
}

}  // namespace

TEST_CASE("every cell of vLLM 0.33's own selection table: backend, block sizes, threshold, runner, candidates",
          "[selection][vllm033]") {
  check_table("vllm033_selection.json", 2112, 1848, 264);
}

// The hybrid MLA families (tests/data/vllm033_selection_hybrid.json, the same grid over
// DeepSeek-V4, Kimi-Linear, GLM-5-Next and its text-only config, Bailing-hybrid): the block size and the MLA group's kernel block size come
// from the KV cache plan (config/kv_cache_plan.h); DeepSeek-V4's backend from its attention class.
TEST_CASE("every cell of vLLM 0.33's own selection table for the hybrid MLA families", "[selection][vllm033]") {
  check_table("vllm033_selection_hybrid.json", 960, 696, 264);
}

// HY-V4 (tests/data/vllm033_selection_hyv4.json, the same grid over HYV4Config's defaults, every
// layer dense MLA, and the same with every layer DSA): the backend HYV4MLAAttention binds for its
// learnable sink and whether it forces sparse MQA (config/hy_v4_attention.h).
TEST_CASE("every cell of vLLM 0.33's own selection table for HY-V4", "[selection][vllm033][hy_v4]") {
  check_table("vllm033_selection_hyv4.json", 384, 300, 84);
}
