// Checks a run against its scenario's `expect:` block: per-step values, final request states,
// the number of steps and named invariants. Each failure says where the expectation is written.
#pragma once

#include <string>
#include <vector>

#include "sim/scenario.h"
#include "tools/harness/run_record.h"

namespace mlasim {

struct ExpectationFailure {
  std::string where;     // "file:line:col" of the expectation
  std::string what;      // e.g. "step 0 num_mqa_tokens"
  std::string expected;
  std::string actual;
  std::string format() const;  // "where: expect: what: expected X, got Y"
};

std::vector<ExpectationFailure> check_expectations(const Scenario& scenario, const RunRecord& run);
// How many individual values the expect block checks (for "N checks passed").
int count_expectation_checks(const Scenario& scenario);

}  // namespace mlasim
