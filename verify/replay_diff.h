// `mlasim run --compare-profile P` and `--compare-set KEY=VALUE`: one scenario replayed twice
// (the second under another profile or with overrides), side by side: where the splits differ,
// and what the change does to the logits ("does this misrouting change the output?").
#pragma once

#include <string>

#include "engine/run_record.h"
#include "verify/logits_compare.h"

namespace mlasim {

struct ReplayDiff {
  int num_steps_a = 0, num_steps_b = 0;
  int num_steps_differing = 0;  // of the steps both ran, those whose split line differs
  bool logits_compared = false;  // both have logits of the same vocabulary
  LogitsComparison logits;       // b against a, over the sampling rows both have
  long rows_only_a = 0, rows_only_b = 0;  // sampling rows (request, position) one side lacks
  long first_differing_row = -1;  // of a's rows compared, the first with an element outside `tol`
  std::string first_differing_label;  // "step S id position P" of that row (a's step)
  bool logits_match = true;
  std::string text;  // the report
};

// `a` and `b` replay the same requests, named `name_a` and `name_b`. Steps are compared in order;
// logits rows are matched by (request, position) and its occurrence (a recomputed prompt samples
// its position again), so overrides that change the schedule still compare the same tokens.
ReplayDiff diff_replays(const RunRecord& a, const RunRecord& b, const std::string& name_a, const std::string& name_b,
                        const LogitsTolerance& tol);

}  // namespace mlasim
