// `mlasim run --compare-profile P`: the same scenario under two engine profiles, side by side:
// where the splits differ, and whether the logits do ("does this misrouting change the output?").
#pragma once

#include <string>

#include "verify/logits_compare.h"
#include "engine/run_record.h"

namespace mlasim {

struct ProfileDiff {
  int num_steps_differing = 0;
  bool logits_match = true;
  std::string text;  // the report
};

// `a` and `b` replay the same scenario (same schedule, so the same logits rows) under profiles
// named `name_a` and `name_b`; their logits are compared with `tol`.
ProfileDiff diff_profiles(const RunRecord& a, const RunRecord& b, const std::string& name_a, const std::string& name_b,
                          const LogitsTolerance& tol);

}  // namespace mlasim
