// The fuzzer and shrinker find what they are for: the single-token-prefill misrouting (and its
// speculative form), nothing under strict, and a scheduler fault planted for this test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/fuzz/fuzz_test_util.h"
#include "tools/fuzz/finding.h"
#include "tools/fuzz/fuzzer.h"
#include "tools/fuzz/shrinker.h"
#include "scenario/scenario_loader.h"
#include "harness/check_runner.h"

namespace mlasim {
namespace {

FuzzResult run_fuzz(const TraceDistribution& d, std::vector<Property> properties, int runs, std::uint64_t seed = 1) {
  FuzzOptions options;
  options.distribution = d;
  options.properties.properties = std::move(properties);
  options.seed = seed;
  options.max_runs = runs;
  return fuzz(options);
}

ShrinkResult shrink_found(const FuzzResult& found, std::vector<std::string> keep = {}) {
  REQUIRE(found.violation);
  ShrinkOptions options;
  options.keep_keys = std::move(keep);
  options.property = found.violation->property;
  return shrink(*found.trace, *found.violation, options);
}

TEST_CASE("vllm-current with flashinfer-mla: a fresh prefill on the decode path, shrunk to a lone 1-token prompt",
          "[fuzz]") {
  const TraceDistribution d = test::fuzz_distribution({"engine.profile=vllm-current", "engine.attention_backend=flashinfer-mla"});
  const FuzzResult found = run_fuzz(d, {Property::kNoFreshPrefillOnDecodePath, Property::kStepInvariants}, 300);
  REQUIRE(found.violation);
  CHECK(found.violation->property == Property::kNoFreshPrefillOnDecodePath);
  CHECK(found.runs <= 300);
  const ShrinkResult shrunk = shrink_found(found);
  REQUIRE(shrunk.scenario.requests.size() == 1);
  CHECK(shrunk.scenario.requests[0].prompt.size() == 1);
  CHECK(shrunk.scenario.requests[0].max_tokens == 1);
  CHECK(shrunk.scenario.requests[0].arrival_step == 0);
  CHECK(shrunk.violation.step == 0);
  CHECK(shrunk.violation.detail.find("(q=1,nct=0,P=1) is a fresh prefill on the decode path") != std::string::npos);
  CHECK(shrunk.scenario.engine.attention_backend == AttentionBackendKind::kFlashInferMla);
  // Every key the trace drew is back at its default.
  CHECK(std::get<5>(trace_size(shrunk.scenario)) == 0);
}

TEST_CASE("strict: no fresh prefill on the decode path in 1500 runs over every backend and k", "[fuzz]") {
  const TraceDistribution d = test::fuzz_distribution({"engine.profile=strict"}, kAllKnobs);
  const FuzzResult found = run_fuzz(d, {Property::kNoFreshPrefillOnDecodePath, Property::kStepInvariants}, 1500);
  CHECK_FALSE(found.violation);
  CHECK(found.runs == 1500);
}

TEST_CASE("speculative decoding k = 3 on a uniform-query backend: the short fresh prompt on the decode path",
          "[fuzz]") {
  const TraceDistribution d = test::fuzz_distribution(
      {"engine.attention_backend=triton-mla", "scheduler.num_speculative_tokens=3"});
  const FuzzResult found = run_fuzz(d, {Property::kNoFreshPrefillOnDecodePath}, 300);
  REQUIRE(found.violation);
  const ShrinkResult shrunk = shrink_found(found, {"scheduler.num_speculative_tokens"});
  REQUIRE(shrunk.scenario.requests.size() == 1);
  CHECK(shrunk.scenario.scheduler.num_speculative_tokens == 3);
  CHECK(shrunk.scenario.requests[0].prompt.size() == 1);
  CHECK(shrunk.violation.step == 0);
  // The short-prompt case: with k = 3 the threshold is 1 + k = 4, so a lone 4-token prompt takes
  // the decode path too; without speculation (T = 1) it does not.
  Scenario four = shrunk.scenario;
  four.requests[0].prompt.assign(4, 17);
  CHECK(check_property(four, Property::kNoFreshPrefillOnDecodePath));
  four.requests[0].prompt.assign(5, 17);
  CHECK_FALSE(check_property(four, Property::kNoFreshPrefillOnDecodePath));
  four.requests[0].prompt.assign(4, 17);
  four.scheduler.num_speculative_tokens = 0;
  CHECK_FALSE(check_property(four, Property::kNoFreshPrefillOnDecodePath));
}

TEST_CASE("a planted scheduler fault (budget off by one for waiting requests) is found and shrunk", "[fuzz]") {
  TraceDistribution d = test::fuzz_distribution({});
  d.base.scheduler.test_waiting_budget_overrun = 1;
  const FuzzResult found = run_fuzz(d, {Property::kStepInvariants}, 300);
  REQUIRE(found.violation);
  CHECK(found.violation->detail.find("scheduled more tokens than the budget") != std::string::npos);
  const ShrinkResult shrunk = shrink_found(found);
  CHECK(shrunk.scenario.requests.size() <= 3);
  CHECK(shrunk.violation.detail.find("scheduled more tokens than the budget") != std::string::npos);
  // Without the fault the shrunk trace is fine.
  Scenario fixed = shrunk.scenario;
  fixed.scheduler.test_waiting_budget_overrun = 0;
  CHECK_FALSE(check_property(fixed, Property::kStepInvariants));

  // The finding pins the property in its expect: block; loaded back, mlasim check's path fails it
  // at the step where the budget was overrun in a build with the fault, and not without it.
  Result<std::string> yaml = finding_yaml(shrunk.scenario, shrunk.violation, "found by a test", {});
  REQUIRE(yaml.ok());
  CHECK(yaml.value().find("  invariants: [step_invariants]\n") != std::string::npos);
  Result<Scenario> loaded = load_scenario_text(yaml.value(), "finding.yaml");
  REQUIRE(loaded.ok());
  Scenario faulty = loaded.value();
  faulty.scheduler.test_waiting_budget_overrun = 1;
  CheckOptions options;
  options.golden_dir = (std::filesystem::temp_directory_path() / "mlasim_test_no_goldens").string();
  options.replay.with_model = false;
  const ScenarioCheck c = check_scenario(faulty, "finding.yaml", options);
  CHECK(c.status == CheckStatus::kFail);
  REQUIRE(c.messages.size() == 1);
  INFO(c.messages[0]);
  CHECK(c.messages[0].rfind("finding.yaml: expect invariant step_invariants at step 0: expected every per-step check "
                            "holds, got scheduled more tokens than the budget",
                            0) == 0);
  const ScenarioCheck ok = check_scenario(loaded.value(), "finding.yaml", options);
  for (const std::string& m : ok.messages) CHECK(m.find("step_invariants") == std::string::npos);
}

TEST_CASE("a shrunk finding loads with the normal loader and fails mlasim check for the invariant", "[fuzz]") {
  const TraceDistribution d = test::fuzz_distribution({"engine.attention_backend=flashinfer-mla"});
  const FuzzResult found = run_fuzz(d, {Property::kNoFreshPrefillOnDecodePath}, 300, 5);
  const ShrinkResult shrunk = shrink_found(found);
  Result<std::string> yaml = finding_yaml(shrunk.scenario, shrunk.violation, "found by a test", {});
  REQUIRE(yaml.ok());
  CHECK(yaml.value().rfind("# step 0: r", 0) == 0);
  CHECK(yaml.value().find("expect:\n  invariants: [no_fresh_prefill_on_decode_path]\n") != std::string::npos);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mlasim_test_fuzz_finding";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "finding.yaml").string();
  std::ofstream(path) << yaml.value();
  CheckOptions options;
  options.golden_dir = (dir / "golden").string();
  options.replay.with_model = false;
  const ScenarioCheck c = check_scenario(path, options);
  CHECK(c.status == CheckStatus::kFail);
  REQUIRE_FALSE(c.messages.empty());
  CHECK(c.messages[0].find("invariant no_fresh_prefill_on_decode_path at step 0") != std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlasim
