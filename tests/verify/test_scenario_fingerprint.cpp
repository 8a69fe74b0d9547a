// The split golden's fingerprint: what determines the run changes it; where the file lives, its
// comments, its description and its expect block do not.
#include <catch2/catch.hpp>

#include "scenario/scenario_loader.h"
#include "verify/split_golden.h"

using namespace mlasim;

namespace {

Scenario load(const std::string& text, const std::string& file) {
  Result<Scenario> s = load_scenario_text(text, file);
  REQUIRE(s.ok());
  return s.value();
}

}  // namespace

TEST_CASE("scenario_fingerprint ignores the file, comments, the description and the expect block", "[golden]") {
  const std::string base = "version: 1\nname: fp\nrequests: [{id: a, prompt_len: 3, max_tokens: 2}]\n";
  const std::string fp = scenario_fingerprint(load(base, "a.yaml"));
  CHECK(fp.size() == 16);
  CHECK(scenario_fingerprint(load(base, "elsewhere/b.yaml")) == fp);
  CHECK(scenario_fingerprint(load("# a comment\n" + base, "a.yaml")) == fp);
  CHECK(scenario_fingerprint(load(base + "description: what it shows\n", "a.yaml")) == fp);
  CHECK(scenario_fingerprint(load(base + "expect: {num_steps: 2, invariants: [step_invariants]}\n", "a.yaml")) == fp);
  CHECK(scenario_fingerprint(load(base + "scheduler: {max_num_seqs: 3}\n", "a.yaml")) != fp);
  CHECK(scenario_fingerprint(load("version: 1\nname: fp\nrequests: [{id: a, prompt_len: 4, max_tokens: 2}]\n",
                                  "a.yaml")) != fp);
}
