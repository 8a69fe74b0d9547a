// mlasim's KV cache plan for the hybrid MLA families against a table vLLM 0.33.0 itself computed:
// tests/data/vllm033_kv_groups.json holds, per cell of family (DeepSeek-V4, Kimi-Linear,
// GLM-5-Next, GLM-5-Next's text-only config, Bailing-hybrid) x GPU (A100, H100, H200, B200, RTX PRO 6000) x KV dtype (auto, bfloat16, fp8) x TP
// (1, 8) x --block-size (unset, 64, 256, 2048), the block size, layout, cache dtype, num_blocks,
// scheduler and hash block sizes, Mamba block size and padded page, and every KV cache group (spec
// class, layer count, the FNV-1a 64 of its newline-joined layer names, block size, page bytes, its
// layers' specs counted) that vLLM's own spec classes and get_kv_cache_groups gave, or vLLM's
// refusal (written by tools/conformance/vllm_kv_groups.py --expect-table). Each cell is evaluated
// here as `mlasim deploy` evaluates it: the deployment's scenario, loaded. Any one value of the
// plan changed makes some cell differ.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <tuple>

#include "base/formats/json_value.h"
#include "base/hash.h"
#include "config/kv_cache_plan.h"
#include "deploy/deploy_report.h"
#include "scenario/scenario_loader.h"
#include "tests/deploy/vllm033_table.h"

using namespace mlasim;

namespace {

using test::integer;
using test::text;

// [spec class, block size, page bytes, tokens per state (null: Mamba), sliding window (null: none)]
using SpecRow = std::tuple<std::string, long long, long long, long long, long long>;

std::map<SpecRow, long long> spec_rows(const PlannedKvCacheGroup& g) {
  std::map<SpecRow, long long> rows;
  for (const KvCacheSpec& s : g.layer_specs)
    ++rows[{kv_cache_spec_class_name(s.kind), s.block_size, s.page_size_bytes(),
            s.kind == KvCacheSpecKind::kMamba ? -1 : s.tokens_per_state, s.sliding_window ? s.sliding_window : -1}];
  return rows;
}

std::map<SpecRow, long long> spec_rows(const JsonValue& list) {
  std::map<SpecRow, long long> rows;
  for (const JsonValue& r : list.array()) {
    const auto& a = r.array();
    rows[{a[0].string(), integer(&a[1]), integer(&a[2]), integer(&a[3]), integer(&a[4])}] = integer(&a[5]);
  }
  return rows;
}

std::string names_hash(const std::vector<std::string>& names) {
  std::string joined;
  for (std::size_t i = 0; i < names.size(); ++i) joined += (i ? "\n" : "") + names[i];
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(stable_hash(joined)));
  return buf;
}

void check_group(const PlannedKvCacheGroup& g, const JsonValue& want) {
  CHECK((g.uniform_type ? "UniformTypeKVCacheSpecs" : kv_cache_spec_class_name(g.layer_specs.front().kind)) ==
        text(want.find("spec")));
  CHECK(static_cast<long long>(g.layer_names.size()) == integer(want.find("num_layers")));
  CHECK(names_hash(g.layer_names) == text(want.find("layers_fnv1a")));
  CHECK(g.block_size() == integer(want.find("block_size")));
  CHECK(g.page_size_bytes() == integer(want.find("page_size_bytes")));
  CHECK(spec_rows(g) == spec_rows(*want.find("layer_specs")));
}

void check_plan(const KvCachePlan& p, const JsonValue& c) {
  CHECK(p.block_size == integer(c.find("block_size")));
  CHECK(to_string(p.tensor_layout) == text(c.find("layout")));
  CHECK(p.cache_dtype == text(c.find("cache_dtype")));
  CHECK(p.layout.num_blocks == integer(c.find("num_blocks")));
  CHECK(p.layout.scheduler_block_size == integer(c.find("scheduler_block_size")));
  CHECK(p.layout.hash_block_size == integer(c.find("hash_block_size")));
  CHECK((p.mamba_block_size ? p.mamba_block_size : -1) == integer(c.find("mamba_block_size")));
  CHECK(p.mamba_page_size_padded.value_or(-1) == integer(c.find("mamba_page_size_padded")));
  const auto& groups = c.find("groups")->array();
  REQUIRE(p.groups.size() == groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    INFO("group " << i);
    check_group(p.groups[i], groups[i]);
  }
}

}  // namespace

TEST_CASE("every cell of vLLM 0.33's own KV cache group table for the hybrid families", "[kv_groups][vllm033]") {
  const std::string root = MLASIM_SOURCE_DIR;
  Result<JsonValue> doc = parse_json(test::read_table(root + "/tests/data/vllm033_kv_groups.json"), "vllm033_kv_groups.json");
  REQUIRE(doc.ok());
  const auto& cells = doc.value().find("cells")->array();
  REQUIRE(cells.size() == 600);
  int accepted = 0, refused = 0;
  for (const JsonValue& c : cells) {
    const DeployOptions o = test::deploy_options(c, root, "block");
    INFO(text(c.find("config")) << " " << o.gpu << " kv=" << o.kv_cache_dtype << " tp=" << o.tensor_parallel_size
                                << " bs=" << (o.block_size ? std::to_string(*o.block_size) : "auto"));
    Result<Scenario> s = load_scenario_text(deployment_scenario_yaml(o, o.hf_config), root + "/scenarios/hf_configs/d.yaml");
    if (const JsonValue* why = c.find("refusal")) {
      ++refused;
      REQUIRE_FALSE(s.ok());
      CHECK_THAT(s.error().message, Catch::Contains(why->string()));
      continue;
    }
    REQUIRE(s.ok());
    ++accepted;
    auto plan = plan_kv_cache(s.value().model, kv_cache_plan_inputs(s.value()));
    REQUIRE(plan.ok());
    check_plan(plan.value(), c);
    // The layout the scenario holds (the scheduler's) is the plan's.
    const KvCacheLayout& held = s.value().deployment.kv_cache_layout;
    REQUIRE(held.groups.size() == plan.value().layout.groups.size());
    CHECK(held.scheduler_block_size == plan.value().layout.scheduler_block_size);
    CHECK(s.value().scheduler.block_size == plan.value().block_size);
  }
  CHECK(accepted == 476);  // GLM-5-Next's text-only config as its flat form (88, 32); Bailing-hybrid 120, 0
  CHECK(refused == 124);
}

TEST_CASE("A hybrid family on an AMD GPU is mlasim's limit, not vLLM's refusal", "[kv_groups]") {
  const std::string root = MLASIM_SOURCE_DIR;
  DeployOptions o;
  o.hf_config = root + "/scenarios/hf_configs/kimi-linear.json";
  o.gpu = "mi300x";
  Result<Scenario> s = load_scenario_text(deployment_scenario_yaml(o, o.hf_config), root + "/scenarios/hf_configs/d.yaml");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().key_path == "engine.gpu");
  CHECK(s.error().message.rfind("mlasim plans KimiLinearForCausalLM's KV cache groups on NVIDIA GPUs only", 0) == 0);
}
