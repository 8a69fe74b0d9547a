// Whether an in-memory scenario is one the strict loader would accept (the checks that do not
// need YAML positions): generated and shrunk traces are tested here before they are replayed.
#pragma once

#include <string>

#include "config/scenario.h"

namespace mlasim {

// "" when valid, else what is wrong.
std::string scenario_problem(const Scenario& s);

// Re-seeds the outputs of the requests whose `output` was not written, after max_tokens,
// max_model_len or a prompt changed (the loader seeds them the same way).
void reseed_outputs(Scenario& s);

}  // namespace mlasim
