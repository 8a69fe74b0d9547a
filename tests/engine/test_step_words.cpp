// A step record keeps its routing as codes and the writers word the reasons from them
// (engine/step_words.h): the words must be the router's own, for every row of every step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attention/route.h"
#include "attention/routing_config.h"
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
// give, and none holds a character JSON escapes.
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
