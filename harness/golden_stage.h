// One scenario of `mlasim golden update`: its reference replay (fp64, TP 1, every token on the
// prefill path) through a ReplaySession asking for the record, staged in a GoldenUpdate.
#pragma once

#include <string>

#include "base/status.h"
#include "verify/golden_update.h"

namespace mlasim {

// Loads the scenario file, replays it and stages its golden folder. A scenario error (or a model
// too big for this machine) is bad input, a write error an output error; VllmCannotRun
// propagates (a trace vLLM cannot run has no golden).
Status stage_golden(GoldenUpdate& update, const std::string& scenario_path);

}  // namespace mlasim
