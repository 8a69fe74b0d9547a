// The split and schedule of a dry run, as one comparable string per step (and one per request):
// for tests that two scenarios replay alike.
#pragma once

#include <string>
#include <vector>

#include "engine/replay.h"

namespace mlasim::test {

inline std::vector<std::string> dry_schedule(const Scenario& s) {
  ReplayOptions options;
  options.with_model = false;
  const RunRecord run = replay(s, options);
  std::vector<std::string> steps;
  for (const StepRecord& st : run.steps) {
    std::string line = std::to_string(st.step) + ":" + std::to_string(st.counts.num_mqa_tokens) + "/" +
                       std::to_string(st.counts.num_mha_tokens);
    for (const RowRecord& r : st.rows)
      line += " " + r.id + "=" + r.path + "[" + std::to_string(r.q) + "," + std::to_string(r.nct) + "]";
    for (const std::string& p : st.preempted) line += " preempt:" + p;
    steps.push_back(line);
  }
  for (const RequestRecord& r : run.requests)
    steps.push_back(r.id + " " + r.status + " " + std::to_string(r.token_ids.size()));
  return steps;
}

}  // namespace mlasim::test
