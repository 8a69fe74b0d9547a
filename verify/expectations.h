// Checks a run against its scenario's `expect:` block: per-step values, final request states,
// the number of steps and named invariants. Each failure says where the expectation is written.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "config/scenario.h"
#include "engine/run_record.h"
#include "engine/step_sink.h"

namespace mlasim {

struct ExpectationFailure {
  std::string where;     // "file:line:col" of the expectation
  std::string what;      // e.g. "step 0 num_mqa_tokens"
  std::string expected;
  std::string actual;
  std::string format() const;  // "where: expect: what: expected X, got Y"
};

// Checks as the run goes: each step against the expectations for it and the invariants, each
// finished request against its expectation; failures() after on_end, in the order of the expect
// block (num_steps, steps, requests, then invariant violations by step). Keeps no steps.
class ExpectationChecker final : public StepSink {
 public:
  explicit ExpectationChecker(const Scenario& scenario);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  // Only a request expectation on the output ids reads them.
  bool wants_token_ids() const override;
  void on_end(const RunTotals& totals) override;
  const std::vector<ExpectationFailure>& failures() const { return failures_; }
  int steps_seen() const { return num_steps_; }

 private:
  const Scenario& s_;
  std::vector<std::vector<ExpectationFailure>> step_failures_;     // per expect.steps entry
  std::vector<bool> step_seen_;
  std::vector<std::vector<ExpectationFailure>> request_failures_;  // per expect.requests entry
  std::vector<ExpectationFailure> invariant_failures_;
  bool check_fresh_ = false;
  int num_steps_ = 0, first_step_ = -1, last_step_ = -1;
  std::vector<ExpectationFailure> failures_;
  // The expectations by step number and by request id, so a step or a finished request costs its
  // own expectations, not the whole list (an expect block may hold 100,000 entries).
  std::unordered_multimap<int, std::size_t> steps_by_number_;
  std::unordered_multimap<std::string, std::size_t> requests_by_id_;
};

std::vector<ExpectationFailure> check_expectations(const Scenario& scenario, const RunRecord& run);
// How many individual values the expect block checks (for "N checks passed").
int count_expectation_checks(const Scenario& scenario);

}  // namespace mlasim
