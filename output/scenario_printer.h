// A human-readable summary of a loaded scenario: resolved configuration and requests.
#pragma once

#include <string>

#include "config/scenario.h"

namespace mlasim {

std::string describe_scenario(const Scenario& s);

}  // namespace mlasim
