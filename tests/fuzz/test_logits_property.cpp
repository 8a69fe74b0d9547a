// same_logits_as_strict: the fp64 model routed by the profile against the same schedule routed by
// strict. The two MLA forms agree in fp64, so only a fault in the decode path makes it fail.
#include <catch2/catch.hpp>

#include "tests/fuzz/fuzz_test_util.h"
#include "tools/fuzz/fuzzer.h"
#include "tools/fuzz/shrinker.h"

namespace mlasim {
namespace {

TEST_CASE("same_logits_as_strict fails only with a decode-path fault, and shrinks to a lone 1-token prompt",
          "[fuzz][model]") {
  FuzzOptions options;
  options.distribution = test::fuzz_distribution({"engine.attention_backend=flashinfer-mla"});
  options.distribution.max_requests = 3;
  options.properties.properties = {Property::kSameLogitsAsStrict};
  options.max_runs = 8;
  CHECK_FALSE(fuzz(options).violation);  // a misrouting, but the same output

  options.properties.faults = FaultSet{Fault::kDecodeSkipsCacheWriteForFreshRows};
  const FuzzResult found = fuzz(options);
  REQUIRE(found.violation);
  CHECK(found.violation->property == Property::kSameLogitsAsStrict);
  CHECK(found.violation->detail.find("logits differ from strict's: logits DIFFER (fp64 class)") != std::string::npos);
  ShrinkOptions so;
  so.property = Property::kSameLogitsAsStrict;
  so.faults = options.properties.faults;
  const ShrinkResult shrunk = shrink(*found.trace, *found.violation, so);
  REQUIRE(shrunk.scenario.requests.size() == 1);
  CHECK(shrunk.scenario.requests[0].prompt.size() == 1);
  CHECK(shrunk.scenario.requests[0].max_tokens == 1);
  CHECK(shrunk.violation.step == 0);
  CHECK_FALSE(check_property(shrunk.scenario, Property::kSameLogitsAsStrict));  // no fault, no difference
}

TEST_CASE("sparse models: same_logits_as_strict and sparse_equals_dense_within_topk hold, topk_off_by_one breaks the second",
          "[fuzz][model][sparse]") {
  // tiny-dsa (index_topk 16): the drawn prompts run past index_topk and stay within it.
  FuzzOptions options;
  options.distribution = test::fuzz_distribution({"model.preset=tiny-dsa"});
  options.distribution.max_requests = 3;
  options.properties.properties = {Property::kSameLogitsAsStrict, Property::kSparseEqualsDenseWithinTopk};
  options.max_runs = 6;
  const FuzzResult clean = fuzz(options);
  CHECK_FALSE(clean.violation);
  CHECK(clean.runs == 6);

  // The fault is the same under both routings, so only the comparison with the dense model sees it.
  options.properties.faults = FaultSet{Fault::kTopkOffByOne};
  options.properties.properties = {Property::kSameLogitsAsStrict};
  CHECK_FALSE(fuzz(options).violation);
  options.properties.properties = {Property::kSparseEqualsDenseWithinTopk};
  const FuzzResult found = fuzz(options);
  REQUIRE(found.violation);
  CHECK(found.violation->property == Property::kSparseEqualsDenseWithinTopk);
  CHECK(found.violation->detail.find("logits within index_topk 16 differ from the dense model's: logits DIFFER") !=
        std::string::npos);
  ShrinkOptions so;
  so.property = Property::kSparseEqualsDenseWithinTopk;
  so.faults = options.properties.faults;
  const ShrinkResult shrunk = shrink(*found.trace, *found.violation, so);
  // The smallest trace: one query at position 1, whose top-k {0, 1} the fault reads as {0}.
  REQUIRE(shrunk.scenario.requests.size() == 1);
  CHECK(shrunk.scenario.requests[0].prompt.size() + shrunk.scenario.requests[0].max_tokens == 3);
  CHECK_FALSE(check_property(shrunk.scenario, Property::kSparseEqualsDenseWithinTopk));  // no fault, no difference
  // On a dense model the property holds trivially.
  Scenario dense = shrunk.scenario;
  dense.model = *model_preset("tiny");
  CHECK_FALSE(check_property(dense, Property::kSparseEqualsDenseWithinTopk, so.faults));
}

}  // namespace
}  // namespace mlasim
