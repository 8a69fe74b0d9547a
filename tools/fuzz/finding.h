// A shrunk violation as a scenario file ready to drop into scenarios/: a one-line comment saying
// what it shows, an expect: block that pins the violation where the schema can state it, and a
// proof that the text loads with the normal loader and still violates the property.
#pragma once

#include <string>

#include "base/status.h"
#include "tools/fuzz/property.h"

namespace mlasim {

// "1 request: P=1 max_tokens=1" / "2 requests: P=1,3 (arrival steps 0,2)".
std::string describe_batch(const Scenario& s);

// The scenario text of `shrunk` (which violates v.property): loaded back with load_scenario_text
// and checked again; an error when it does not load or no longer violates (a writer bug).
// `origin` ends the comment line, e.g. "found by mlasim fuzz --seed 1". `golden_dir` is where
// matches_golden_split's goldens are (that property is pinned by the golden, not the expect block).
Result<std::string> finding_yaml(const Scenario& shrunk, const Violation& v, const std::string& origin,
                                 const FaultSet& faults, const std::string& golden_dir = "");

}  // namespace mlasim
