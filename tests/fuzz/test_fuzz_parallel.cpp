// The fuzz loop on several threads and in shards: the same runs and the same first violation as
// one thread over every run.
#include <catch2/catch.hpp>

#include "tests/fuzz/fuzz_test_util.h"
#include "tools/fuzz/fuzzer.h"

namespace mlasim {
namespace {

FuzzOptions options_for(const std::vector<std::string>& sets, int runs, int jobs, Shard shard = {}) {
  FuzzOptions o;
  o.distribution = test::fuzz_distribution(sets);
  o.properties.properties = {Property::kNoFreshPrefillOnDecodePath, Property::kStepInvariants};
  o.seed = 5;
  o.max_runs = runs;
  o.jobs = jobs;
  o.shard = shard;
  return o;
}

TEST_CASE("shard_runs counts the runs r < N with r % total == index", "[fuzz]") {
  CHECK(shard_runs(1000, {0, 1}) == 1000);
  CHECK(shard_runs(1000, {0, 3}) == 334);
  CHECK(shard_runs(1000, {1, 3}) == 333);
  CHECK(shard_runs(1000, {2, 3}) == 333);
  CHECK(shard_runs(2, {2, 3}) == 0);
  CHECK(shard_runs(3, {2, 3}) == 1);
}

TEST_CASE("fuzz on 3 threads replays every run, and the shards split them", "[fuzz]") {
  // strict never routes a fresh prefill to the decode path: no violation in any run.
  const FuzzResult all = fuzz(options_for({"engine.profile=strict"}, 700, 3));
  CHECK_FALSE(all.violation);
  CHECK(all.runs == 700);
  int sum = 0;
  for (int i = 0; i < 3; ++i) {
    const FuzzResult part = fuzz(options_for({"engine.profile=strict"}, 700, 2, {i, 3}));
    CHECK_FALSE(part.violation);
    sum += part.runs;
  }
  CHECK(sum == 700);
}

TEST_CASE("fuzz on 4 threads finds the violation of the lowest run, as one thread does", "[fuzz]") {
  const std::vector<std::string> sets = {"engine.profile=vllm-current", "engine.attention_backend=flashinfer-mla"};
  const FuzzResult one = fuzz(options_for(sets, 300, 1));
  const FuzzResult four = fuzz(options_for(sets, 300, 4));
  REQUIRE(one.violation);
  REQUIRE(four.violation);
  CHECK(four.run == one.run);
  CHECK(four.runs == one.runs);
  CHECK(four.trace->name == one.trace->name);
  CHECK(four.violation->detail == one.violation->detail);
  // Each shard reports its own lowest; the lowest of them is one run's.
  int lowest = 1 << 30;
  for (int i = 0; i < 3; ++i) {
    const FuzzResult part = fuzz(options_for(sets, 300, 2, {i, 3}));
    REQUIRE(part.violation);
    CHECK(part.run % 3 == i);
    lowest = std::min(lowest, part.run);
  }
  CHECK(lowest == one.run);
}

}  // namespace
}  // namespace mlasim
