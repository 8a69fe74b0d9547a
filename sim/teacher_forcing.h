// Teacher forcing: the model runner's sampled tokens and next-step drafts come from the
// requests' forced outputs, never from logits, so the schedule never depends on floating point.
#pragma once

#include "sim/scheduler.h"
#include "sim/scheduler_output.h"

namespace mlasim {

// Fills `model_output` (reusing its capacity) for `out`, the latest output of `scheduler`
// (before update_from_output). Per scheduled request with o outputs so far: nothing for a partial
// prefill chunk; otherwise forced tokens o .. o+a, a = the accepted drafts of this verification
// step (0 without drafts, or with a padded admission's placeholder drafts, which do not count as a
// verification step of `accepted_drafts`). With num_speculative_tokens k > 0, the next drafts are the k forced
// tokens after the sampled ones, so accepted drafts always equal the tokens sampled for them.
void teacher_force(const Scheduler& scheduler, const SchedulerOutput& out, ModelRunnerOutput& model_output);
ModelRunnerOutput teacher_force(const Scheduler& scheduler, const SchedulerOutput& out);

}  // namespace mlasim
