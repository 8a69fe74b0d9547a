// A step record keeps its routing as codes and the writers word the reasons from them
// (engine/step_words.h): the words must be the router's own, for every row of every step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attention/route.h"
#include "attention/routing_config.h"
#include "config/engine_enums.h"
#include "engine/engine.h"
#include "engine/step_words.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

Scenario load_repository_scenario(const std::string& relative) {
  Result<Scenario> s = load_scenario_file(std::string(MLASIM_SOURCE_DIR) + "/" + relative);
  if (!s) FAIL(s.error().format());
  return s.value();
}

}  // namespace

TEST_CASE("a record's reasons are worded from its codes: the lone one-token prompt", "[engine][routing]") {
  const Scenario s = load_repository_scenario("scenarios/seed/lone_one_token_prompt.yaml");
  const RunRecord run = Engine(s).run();
  REQUIRE(run.steps.size() == 3);
  const StepRecord& first = run.steps[0];
  REQUIRE(first.rows.size() == 1);
  CHECK(first.rows[0].fresh_on_decode_path);
  CHECK(first.rows[0].is_decode);
  CHECK(split_reason(first) == "split: every row is a decode: max query length 1 <= threshold 1");
  CHECK(row_reason(first, 0) ==
        "region 3 prefill (nct=0); split: every row is a decode: max query length 1 <= threshold 1 -> mqa");
  CHECK(row_reason(run.steps[1], 0) ==
        "region 0 decode (nct=1 >= P=1, q=1 <= T=1); split: every row is a decode: max query length 1 <= threshold 1 "
        "-> mqa");
  std::string appended = "x: ";
  append_row_reason(appended, run.steps[2], 0);
  CHECK(appended ==
        "x: region 0 decode (nct=2 >= P=1, q=1 <= T=1); split: every row is a decode: max query length 1 <= "
        "threshold 1 -> mqa");
}

TEST_CASE("a record's reasons are worded from its codes: SGLang's dispatch", "[engine][routing]") {
  const Scenario s = load_repository_scenario("scenarios/seed/lone_one_token_prompt_sglang.yaml");
  const RunRecord run = Engine(s).run();
  REQUIRE(run.steps.size() == 3);
  CHECK_FALSE(run.steps[0].rows[0].is_decode);
  CHECK(split_reason(run.steps[0]) ==
        "sglang EXTEND batch on flashinfer, sum(extend_prefix_lens) = 0: prefix sum 0, so MHA");
  CHECK(row_reason(run.steps[0], 0) ==
        "sglang extend row (nct=0, P=1, q=1); sglang EXTEND batch on flashinfer, sum(extend_prefix_lens) = 0: prefix "
        "sum 0, so MHA -> mha");
  CHECK(row_reason(run.steps[1], 0) ==
        "sglang decode row (nct=1, P=1, q=1); sglang DECODE batch on flashinfer, sum(extend_prefix_lens) = 1: not an "
        "extend batch, so absorbed MLA -> mqa");
}

// Every repository scenario: each step's rows, routed again as they stood after the reorder with
// the router wording its reasons (RoutingConfig::row_reasons), give the words the record's codes
// give, and none holds a character that JSON escapes.
TEST_CASE("a record's reasons equal the router's words for every row of every repository scenario",
          "[engine][routing]") {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(MLASIM_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".yaml") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  int scenarios = 0, rows_checked = 0, fresh_rows = 0;
  for (const std::string& path : paths) {
    Result<Scenario> loaded = load_scenario_file(path);
    if (!loaded || !loaded.value().requests_file.empty()) continue;
    const Scenario& s = loaded.value();
    INFO(path);
    RunRecord run;
    try {
      run = Engine(s).run();
    } catch (const VllmCannotRun&) {
      continue;  // a scenario of a release that cannot run it; its steps are not collected
    }
    RoutingConfig config = make_routing_config(s);
    config.row_reasons = true;
    ++scenarios;
    for (const StepRecord& step : run.steps) {
      std::vector<RowInput> rows;
      for (const RowRecord& r : step.rows) rows.push_back({r.q, r.nct, r.prompt_len});
      const BatchRoute routed = route_batch(rows, config, /*reorder=*/false);
      REQUIRE(routed.rows.size() == step.rows.size());
      CHECK(split_reason(step) == routed.batch_reason);
      for (std::size_t pos = 0; pos < step.rows.size(); ++pos) {
        CHECK(routed.rows[pos].path == step.rows[pos].path);
        CHECK(routed.rows[pos].is_decode == step.rows[pos].is_decode);
        const std::string words = row_reason(step, pos);
        CHECK(words == routed.rows[pos].reason);
        // Written into the run JSON without an escape pass (output/run_json.cpp).
        CHECK(std::all_of(words.begin(), words.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }));
        ++rows_checked;
        fresh_rows += step.rows[pos].fresh_on_decode_path;
      }
    }
  }
  CHECK(scenarios >= 40);
  CHECK(rows_checked >= 300);  // 332 rows when written
  CHECK(fresh_rows >= 10);
}

// Every profile, backend and sparse variant (the notes' every branch, SGLang's every backend name),
// and masked MHA on DeepSeek-V3.2 over 8 x B200: the router's words hold no character that JSON
// escapes, which the run JSON relies on when it writes a row's reason as it is.
TEST_CASE("routing words hold no character that JSON escapes under every profile and backend and sparse variant",
          "[routing]") {
  auto plain = [](const std::string& words) {
    return !words.empty() &&
           std::all_of(words.begin(), words.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  };
  // Decodes, a short extend, a long prefill past index_topk and a fresh one-token prompt.
  const std::vector<RowInput> batch = {{1, 40, 30}, {1, 9, 12}, {3000, 0, 3000}, {1, 0, 1}, {600, 100, 800}};
  int configs = 0, words_checked = 0;
  for (std::string profile : {"vllm-2025-early", "vllm-0.11", "vllm-0.12", "vllm-3region", "vllm-0.33", "strict", "sglang"}) {
    for (const std::string& backend : attention_backend_names()) {
      for (int variant = 0; variant < 4; ++variant) {  // dense; sparse; sparse with force_mqa; sparse dense_mha
        RoutingOptions o;
        o.profile = *parse_engine_profile(profile);
        o.backend = *parse_attention_backend(backend);
        o.num_speculative_tokens = variant == 0 ? 0 : 1;
        o.sparse_mla = variant > 0;
        o.index_topk = variant > 0 ? 2048 : 0;
        o.sparse_mla_force_mqa = variant == 2;
        o.sparse_dense_mha_any_length = variant == 3;
        RoutingConfig c = make_routing_config(o);
        c.row_reasons = true;
        const BatchRoute r = route_batch(batch, c, true);
        INFO(profile << " " << backend << " variant " << variant << ": " << r.batch_reason);
        CHECK(plain(r.batch_reason));
        for (const RowRoute& row : r.rows) CHECK(plain(row.reason));
        ++configs;
        words_checked += 1 + static_cast<int>(r.rows.size());
      }
    }
  }
  Result<Scenario> v32 = load_scenario_text(
      "version: 1\nmodel: {hf_config: " MLASIM_SOURCE_DIR "/scenarios/hf_configs/deepseek-v3.2.json, num_layers: 1}\n"
      "engine: {profile: vllm-0.33, gpu: b200}\nparallel: {tensor_parallel_size: 8}\n"
      "requests: [{id: a, prompt_len: 4}]\n",
      "v32_b200.yaml");
  REQUIRE(v32.ok());
  RoutingConfig masked = make_routing_config(v32.value());
  REQUIRE(masked.masked_mha.available);
  masked.row_reasons = true;
  const BatchRoute m = route_batch(std::vector<RowInput>{{1, 40, 30}, {3000, 0, 3000}}, masked, false);
  REQUIRE(m.batch_reason.find("masked MHA") != std::string::npos);
  CHECK(plain(m.batch_reason));
  for (const RowRoute& row : m.rows) CHECK(plain(row.reason));
  CHECK(configs == 7 * static_cast<int>(attention_backend_names().size()) * 4);
  CHECK(words_checked == configs * 6);
}
