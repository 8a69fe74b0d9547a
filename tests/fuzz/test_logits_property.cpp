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

}  // namespace
}  // namespace mlasim
