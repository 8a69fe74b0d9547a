// The fuzz loop: draw trace after trace from the distribution and check the properties on each
// until one is violated or the run or time budget is spent.
#pragma once

#include <cstdint>
#include <optional>

#include "tools/fuzz/property.h"
#include "tools/fuzz/trace_distribution.h"

namespace mlasim {

struct FuzzOptions {
  TraceDistribution distribution;
  PropertyOptions properties;
  std::uint64_t seed = 0;
  int max_runs = 1000;     // --runs
  double max_seconds = 0;  // --time; 0: no time limit
};

struct FuzzResult {
  int runs = 0;                        // traces replayed (the violating one included)
  std::optional<Violation> violation;  // the first one found
  std::optional<Scenario> trace;       // the trace that showed it
  int run = -1;                        // its run number
};

FuzzResult fuzz(const FuzzOptions& options);

}  // namespace mlasim
