// The split and schedule of a dry run, as one comparable string per step (and one per request):
// for tests that two scenarios replay alike.
#pragma once

#include <string>
#include <vector>

#include "engine/replay.h"
#include "sim/vllm_cannot_run.h"

namespace mlasim::test {

inline std::vector<std::string> dry_schedule(const Scenario& s) {
  ReplayOptions options;
  options.with_model = false;
  std::vector<std::string> steps;
  RunRecord run;
  try {
    run = replay(s, options);
  } catch (const VllmCannotRun& e) {  // a trace vLLM's scheduler cannot run ends in the same place
    steps.push_back("stopped at step " + std::to_string(e.step) + ": " + e.reason);
    return steps;
  }
  for (const StepRecord& st : run.steps) {
    std::string line = std::to_string(st.step) + ":" + std::to_string(st.counts.num_mqa_tokens) + "/" +
                       std::to_string(st.counts.num_mha_tokens);
    for (const RowRecord& r : st.rows)
      line += " " + run.names[r.index] + "=" + to_string(r.path) + "[" + std::to_string(r.q) + "," +
              std::to_string(r.nct) + "]";
    for (int p : st.preempted) line += " preempt:" + run.names[p];
    steps.push_back(line);
  }
  for (const RequestRecord& r : run.requests)
    steps.push_back(r.id + " " + r.status + " " + std::to_string(r.token_ids.size()));
  return steps;
}

}  // namespace mlasim::test
