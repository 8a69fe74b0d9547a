// The per-step table `mlasim run` prints: one line per step with the totals, the rows in batch
// order (q, nct, P) and the step's new/resumed/preempted/finished requests; a model with
// linear-attention layers also gets their split.
#pragma once

#include <string>

#include "engine/run_record.h"

namespace mlasim {

// Requests are named through `names` (RunRecord::names, or a sink's StepSink::names()).
std::string format_step_line(const StepRecord& s, const RequestNames& names);
// `--explain`: the split rule and, per row, why it took its path.
std::string format_step_explanation(const StepRecord& s, const RequestNames& names);

}  // namespace mlasim
