// Writing a scenario (inline requests) as scenario YAML the strict loader reads back to the same
// replay: every key away from its default, prompts as token ids, a one-line comment on top.
#pragma once

#include <string>

#include "sim/scenario.h"

namespace mlasim {

// `comment` is the first line, written after "# "; s.expect is written as its invariants list.
std::string scenario_to_yaml(const Scenario& s, const std::string& comment);

}  // namespace mlasim
